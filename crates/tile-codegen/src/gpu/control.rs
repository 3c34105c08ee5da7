//! Structured control flow: a uniform `for` as a counted loop with its
//! carried values in phis, a uniform `while` testing its condition at the
//! loop's head, a uniform `if` with its results merged, and code guarded by
//! a predicate.

use super::kernel::{get, Kernel};
use super::GpuEmitter;
use crate::EmitError;
use inkwell::basic_block::BasicBlock;
use inkwell::values::{BasicValueEnum, IntValue};
use inkwell::IntPredicate;
use tile_thread::program::{Op, ThreadOpKind};

impl<'ctx> GpuEmitter<'_, 'ctx> {
    /// Runs `body` only in threads where `cond` holds.
    pub(super) fn when(
        &self,
        k: &Kernel<'_, 'ctx>,
        cond: IntValue<'ctx>,
        body: impl FnOnce(&Self) -> Result<(), EmitError>,
    ) -> Result<(), EmitError> {
        let then = self.ctx.append_basic_block(k.function, "then");
        let done = self.ctx.append_basic_block(k.function, "done");
        self.b.build_conditional_branch(cond, then, done)?;
        self.b.position_at_end(then);
        body(self)?;
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(done);
        Ok(())
    }

    pub(super) fn current_block(&self) -> Result<BasicBlock<'ctx>, EmitError> {
        self.b
            .get_insert_block()
            .ok_or_else(|| EmitError::internal("no insert block"))
    }

    /// A uniform counted loop: `for iv = lo; iv < hi; iv += step` carrying
    /// values, leaving when the next value would overflow.
    pub(super) fn for_loop(
        &self,
        k: &mut Kernel<'_, 'ctx>,
        op: &Op,
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        let b = &self.b;
        let body = op
            .regions
            .first()
            .ok_or_else(|| EmitError::internal("`for` without a body"))?;
        let x: Vec<BasicValueEnum> = op
            .operands
            .iter()
            .map(|&r| get(k, r))
            .collect::<Result<_, _>>()?;
        let [lo, hi, step, inits @ ..] = x.as_slice() else {
            return Err(EmitError::internal("`for` without bounds"));
        };
        // A loop around another (a loop over tiles around a K loop) is
        // marked for `loop_sink`.
        let outer = holds_loop(k.program, body);
        let iv_dtype = k.program.dtype(op.operands[0]);
        let signed = iv_dtype.is_signed_int();
        let pre = self.current_block()?;
        let header = self.ctx.append_basic_block(k.function, "for");
        let body_bb = self.ctx.append_basic_block(k.function, "for.body");
        let exit = self.ctx.append_basic_block(k.function, "for.exit");
        b.build_unconditional_branch(header)?;
        b.position_at_end(header);
        let iv = b.build_phi(lo.get_type(), "iv")?;
        let carried: Vec<_> = inits
            .iter()
            .map(|v| b.build_phi(v.get_type(), "carried"))
            .collect::<Result<_, _>>()?;
        iv.add_incoming(&[(lo, pre)]);
        for (p, v) in carried.iter().zip(inits) {
            p.add_incoming(&[(v, pre)]);
        }
        let ivv = iv.as_basic_value().into_int_value();
        let pred = if signed {
            IntPredicate::SLT
        } else {
            IntPredicate::ULT
        };
        let below = b.build_int_compare(pred, ivv, hi.into_int_value(), "below")?;
        // A step that is not positive runs no iteration (a check before the
        // loop reports it), where the loop would otherwise never end.
        let step_int = step.into_int_value();
        let positive = if signed {
            b.build_int_compare(
                IntPredicate::SGT,
                step_int,
                step_int.get_type().const_zero(),
                "up",
            )?
        } else {
            b.build_int_compare(
                IntPredicate::NE,
                step_int,
                step_int.get_type().const_zero(),
                "up",
            )?
        };
        let go = b.build_and(below, positive, "go")?;
        b.build_conditional_branch(go, body_bb, exit)?;
        b.position_at_end(body_bb);
        let args = &body.args;
        if args.len() != inits.len() + 1 {
            return Err(EmitError::internal("`for` body arity"));
        }
        k.regs[args[0].index()] = Some(ivv.into());
        for (&a, p) in args[1..].iter().zip(&carried) {
            k.regs[a.index()] = Some(p.as_basic_value());
        }
        let yielded = self.region(k, body)?;
        let step_int = step.into_int_value();
        let latch;
        let exits_from_latch = !cannot_overflow(hi.into_int_value(), step_int, signed);
        let next = if !exits_from_latch {
            // Constant bounds: the back edge is unconditional (a constant
            // `br i1 false` would be folded, and its loop metadata lost).
            let next = b.build_int_add(ivv, step_int, "iv.next")?;
            latch = self.current_block()?;
            let back = b.build_unconditional_branch(header)?;
            crate::unroll::loop_properties(self.ctx, back, outer);
            next.into()
        } else {
            let name = if signed {
                "llvm.sadd.with.overflow"
            } else {
                "llvm.uadd.with.overflow"
            };
            let add = self.intrinsic(name, &[ivv.get_type().into()])?;
            let sum = b
                .build_call(add, &[ivv.into(), step_int.into()], "next")?
                .try_as_basic_value()
                .basic()
                .ok_or_else(|| EmitError::internal("add.with.overflow"))?
                .into_struct_value();
            let next = b.build_extract_value(sum, 0, "iv.next")?;
            let overflow = b.build_extract_value(sum, 1, "overflow")?.into_int_value();
            latch = self.current_block()?;
            let back = b.build_conditional_branch(overflow, exit, header)?;
            crate::unroll::loop_properties(self.ctx, back, outer);
            next
        };
        iv.add_incoming(&[(&next, latch)]);
        if yielded.len() != carried.len() {
            return Err(EmitError::internal(
                "`for` yields the wrong number of values",
            ));
        }
        for (p, v) in carried.iter().zip(&yielded) {
            p.add_incoming(&[(v, latch)]);
        }
        b.position_at_end(exit);
        let mut out = Vec::new();
        for (p, v) in carried.iter().zip(&yielded) {
            let r = b.build_phi(p.as_basic_value().get_type(), "result")?;
            r.add_incoming(&[(&p.as_basic_value(), header)]);
            if exits_from_latch {
                r.add_incoming(&[(v, latch)]);
            }
            out.push(r.as_basic_value());
        }
        Ok(out)
    }

    /// A uniform `while`: the header holds the carried values in phis and
    /// computes the condition; the body branches back to it; the results
    /// are the header's values when the condition fails.
    pub(super) fn while_loop(
        &self,
        k: &mut Kernel<'_, 'ctx>,
        op: &Op,
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        let b = &self.b;
        let [cond, body] = op.regions.as_slice() else {
            return Err(EmitError::internal("`while` without two regions"));
        };
        let inits: Vec<BasicValueEnum> = op
            .operands
            .iter()
            .map(|&r| get(k, r))
            .collect::<Result<_, _>>()?;
        let pre = self.current_block()?;
        let header = self.ctx.append_basic_block(k.function, "while");
        let body_bb = self.ctx.append_basic_block(k.function, "while.body");
        let exit = self.ctx.append_basic_block(k.function, "while.exit");
        b.build_unconditional_branch(header)?;
        b.position_at_end(header);
        let carried: Vec<_> = inits
            .iter()
            .map(|v| b.build_phi(v.get_type(), "carried"))
            .collect::<Result<_, _>>()?;
        for (p, v) in carried.iter().zip(&inits) {
            p.add_incoming(&[(v, pre)]);
        }
        let values: Vec<BasicValueEnum> = carried.iter().map(|p| p.as_basic_value()).collect();
        if cond.args.len() != values.len() || body.args.len() != values.len() {
            return Err(EmitError::internal("`while` region arity"));
        }
        for (&a, &v) in cond.args.iter().zip(&values) {
            k.regs[a.index()] = Some(v);
        }
        let [go] = self.region(k, cond)?[..] else {
            return Err(EmitError::internal("the `while` condition yields one bool"));
        };
        b.build_conditional_branch(go.into_int_value(), body_bb, exit)?;
        b.position_at_end(body_bb);
        for (&a, &v) in body.args.iter().zip(&values) {
            k.regs[a.index()] = Some(v);
        }
        let yielded = self.region(k, body)?;
        if yielded.len() != carried.len() {
            return Err(EmitError::internal(
                "`while` yields the wrong number of values",
            ));
        }
        let latch = self.current_block()?;
        let back = b.build_unconditional_branch(header)?;
        crate::unroll::disable_unrolling(self.ctx, back);
        for (p, v) in carried.iter().zip(&yielded) {
            p.add_incoming(&[(v, latch)]);
        }
        b.position_at_end(exit);
        Ok(values)
    }

    /// A uniform branch with two regions ending in `yield`.
    pub(super) fn if_else(
        &self,
        k: &mut Kernel<'_, 'ctx>,
        op: &Op,
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        let b = &self.b;
        let [then_r, else_r] = op.regions.as_slice() else {
            return Err(EmitError::internal("`if` without two regions"));
        };
        let cond = get(k, op.operands[0])?.into_int_value();
        let then_bb = self.ctx.append_basic_block(k.function, "then");
        let else_bb = self.ctx.append_basic_block(k.function, "else");
        let merge = self.ctx.append_basic_block(k.function, "endif");
        b.build_conditional_branch(cond, then_bb, else_bb)?;
        b.position_at_end(then_bb);
        let t = self.region(k, then_r)?;
        let t_end = self.current_block()?;
        b.build_unconditional_branch(merge)?;
        b.position_at_end(else_bb);
        let e = self.region(k, else_r)?;
        let e_end = self.current_block()?;
        b.build_unconditional_branch(merge)?;
        b.position_at_end(merge);
        if t.len() != e.len() {
            return Err(EmitError::internal("`if` branches yield different counts"));
        }
        let mut out = Vec::new();
        for (tv, ev) in t.iter().zip(&e) {
            let phi = b.build_phi(tv.get_type(), "if")?;
            phi.add_incoming(&[(tv, t_end), (ev, e_end)]);
            out.push(phi.as_basic_value());
        }
        Ok(out)
    }
}

/// Whether `iv + step` cannot overflow for any `iv < hi`: both constants,
/// and `hi + step` fits the type.
fn cannot_overflow(hi: IntValue<'_>, step: IntValue<'_>, signed: bool) -> bool {
    let bits = hi.get_type().get_bit_width();
    let (Some(hi), Some(step)) = (constant(hi, signed), constant(step, signed)) else {
        return false;
    };
    let max = if signed {
        (1i128 << (bits - 1)) - 1
    } else {
        (1i128 << bits) - 1
    };
    hi + step <= max
}

/// The value of a constant integer, read as signed or unsigned.
fn constant(v: IntValue<'_>, signed: bool) -> Option<i128> {
    if signed {
        v.get_sign_extended_constant().map(i128::from)
    } else {
        v.get_zero_extended_constant().map(i128::from)
    }
}

/// Whether `region` holds a `for` or a `while`, at any depth.
fn holds_loop(program: &tile_thread::Program, region: &tile_thread::program::Region) -> bool {
    region.ops.iter().any(|&id| {
        let op = &program.ops[id];
        matches!(op.kind, ThreadOpKind::For | ThreadOpKind::While)
            || op.regions.iter().any(|r| holds_loop(program, r))
    })
}

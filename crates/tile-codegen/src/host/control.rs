//! `for`, `while` and `if`.
//!
//! Values carried by a loop and the results of an `if` have fixed homes: a
//! stack slot for a scalar (LLVM turns it into a register) and a frame place
//! for a tile. The loop runs a counter `k` over its trip count, computed
//! before the first iteration as the interpreter defines the loop:
//! `iv = lo + k · step` while `iv < hi`, exactly. A non-positive step and a
//! count over the iteration limit fail before the loop starts. A `while`
//! tests its condition at the loop's head and counts its iterations, failing
//! where the interpreter does: when the condition holds once more after the
//! limit.

use super::check::Code;
use super::error::HostError;
use super::frame::TileRef;
use super::kernel::{HostKernel, HostValue};
use inkwell::values::{IntValue, PointerValue};
use inkwell::IntPredicate;
use tile_ir::{OpId, Type, Value};

/// Where a carried value or a result lives.
enum Home<'ctx> {
    /// A scalar's stack slot and its dtype's register type.
    Scalar(PointerValue<'ctx>, inkwell::types::BasicTypeEnum<'ctx>),
    /// A tile's place.
    Tile(TileRef),
}

impl<'a, 'ctx> HostKernel<'a, 'ctx> {
    /// Emits a `for`.
    pub(super) fn emit_for(&mut self, id: OpId) -> Result<(), HostError> {
        let op = self.func.op(id);
        let (Some(&lo), Some(&hi), Some(&step), [body]) = (
            op.operands.first(),
            op.operands.get(1),
            op.operands.get(2),
            op.regions.as_slice(),
        ) else {
            return Err(HostError::internal("`for` needs bounds, a step and a body"));
        };
        let dtype = self.func.ty(lo).dtype();
        let signed = dtype.is_signed_int();
        let (lo_v, hi_v, step_v) = (
            self.scalar(lo)?.into_int_value(),
            self.scalar(hi)?.into_int_value(),
            self.scalar(step)?.into_int_value(),
        );
        let i64t = self.e.ctx.i64_type();
        let wide = |l: &Self, v: IntValue<'ctx>| -> Result<IntValue<'ctx>, HostError> {
            Ok(if dtype.bits() == 64 {
                v
            } else if signed {
                l.e.b.build_int_s_extend(v, i64t, "wide")?
            } else {
                l.e.b.build_int_z_extend(v, i64t, "wide")?
            })
        };
        let (lo64, hi64, step64) = (wide(self, lo_v)?, wide(self, hi_v)?, wide(self, step_v)?);
        let zero = step_v.get_type().const_zero();
        let (lt, gt) = if signed {
            (IntPredicate::SLT, IntPredicate::SGT)
        } else {
            (IntPredicate::ULT, IntPredicate::UGT)
        };
        let positive = self.e.b.build_int_compare(gt, step_v, zero, "positive")?;
        self.check(positive, id, Code::NonPositiveStep, &[step64])?;
        // trips = ⌈(hi − lo) / step⌉ when lo < hi, in u64 (hi − lo < 2^64).
        let b = &self.e.b;
        let runs = b.build_int_compare(lt, lo_v, hi_v, "runs")?;
        let span = b.build_int_sub(hi64, lo64, "span")?;
        let whole = b.build_int_unsigned_div(span, step64, "whole")?;
        let rest = b.build_int_unsigned_rem(span, step64, "rest")?;
        let partial = b.build_int_compare(IntPredicate::NE, rest, self.i64(0), "partial")?;
        let trips = b.build_int_add(whole, b.build_int_z_extend(partial, i64t, "p")?, "trips")?;
        let trips = b
            .build_select(runs, trips, self.i64(0), "trips")?
            .into_int_value();
        let limit = Code::iteration_limit() as i64;
        let within = b.build_int_compare(IntPredicate::ULE, trips, self.i64(limit), "within")?;
        self.check(within, id, Code::IterationLimit, &[trips])?;

        let homes = self.homes(&op.results)?;
        let inits = op.operands.get(3..).unwrap_or_default();
        self.assign(&homes, inits)?;
        let args = body.args.as_slice();
        let (Some(&iv), carried) = (args.first(), args.get(1..).unwrap_or_default()) else {
            return Err(HostError::internal(
                "a loop body without an induction variable",
            ));
        };
        let iv_type = step_v.get_type();
        self.counted(trips, &mut |l, k| {
            let b = &l.e.b;
            let offset = b.build_int_mul(k, step64, "offset")?;
            let value = b.build_int_add(lo64, offset, "iv")?;
            let value = b.build_int_truncate_or_bit_cast(value, iv_type, "iv")?;
            l.define(iv, HostValue::Scalar(value.into()));
            l.enter(&homes, carried)?;
            l.scoped(&mut |l| {
                let yielded = l.region(body)?;
                l.assign(&homes, &yielded)
            })
        })?;
        self.enter(&homes, &op.results)
    }

    /// Emits a `while`.
    pub(super) fn emit_while(&mut self, id: OpId) -> Result<(), HostError> {
        let op = self.func.op(id);
        let [cond, body] = op.regions.as_slice() else {
            return Err(HostError::internal("`while` needs two regions"));
        };
        let homes = self.homes(&op.results)?;
        self.assign(&homes, &op.operands)?;
        let i64t = self.e.ctx.i64_type();
        let count = self.local(i64t.into())?;
        self.e.b.build_store(count, self.i64(0))?;
        let ctx = self.e.ctx;
        let (header, inside, exit) = (
            ctx.append_basic_block(self.f, "while"),
            ctx.append_basic_block(self.f, "while.body"),
            ctx.append_basic_block(self.f, "while.exit"),
        );
        self.e.b.build_unconditional_branch(header)?;
        self.e.b.position_at_end(header);
        self.enter(&homes, &cond.args)?;
        let mut go = None;
        self.scoped(&mut |l| {
            go = l.region(cond)?.first().copied();
            Ok(())
        })?;
        let go = match go.map(|c| self.scalar(c)) {
            Some(c) => c?.into_int_value(),
            None => return Err(HostError::internal("the loop condition yields nothing")),
        };
        self.e.b.build_conditional_branch(go, inside, exit)?;
        self.e.b.position_at_end(inside);
        let b = &self.e.b;
        let done = b.build_load(i64t, count, "count")?.into_int_value();
        let next = b.build_int_add(done, self.i64(1), "count")?;
        b.build_store(count, next)?;
        let limit = Code::iteration_limit() as i64;
        let within = b.build_int_compare(IntPredicate::ULE, next, self.i64(limit), "within")?;
        self.check(within, id, Code::IterationLimit, &[next])?;
        self.enter(&homes, &body.args)?;
        self.scoped(&mut |l| {
            let yielded = l.region(body)?;
            l.assign(&homes, &yielded)
        })?;
        self.e.b.build_unconditional_branch(header)?;
        self.e.b.position_at_end(exit);
        self.enter(&homes, &op.results)
    }

    /// Emits an `if`.
    pub(super) fn emit_if(&mut self, id: OpId) -> Result<(), HostError> {
        let op = self.func.op(id);
        let (Some(&cond), [then, otherwise]) = (op.operands.first(), op.regions.as_slice()) else {
            return Err(HostError::internal(
                "`if` needs a condition and two regions",
            ));
        };
        let c = self.scalar(cond)?.into_int_value();
        let homes = self.homes(&op.results)?;
        let ctx = self.e.ctx;
        let (yes, no, merge) = (
            ctx.append_basic_block(self.f, "then"),
            ctx.append_basic_block(self.f, "else"),
            ctx.append_basic_block(self.f, "merge"),
        );
        self.e.b.build_conditional_branch(c, yes, no)?;
        for (block, region) in [(yes, then), (no, otherwise)] {
            self.e.b.position_at_end(block);
            self.scoped(&mut |l| {
                let yielded = l.region(region)?;
                l.assign(&homes, &yielded)
            })?;
            self.e.b.build_unconditional_branch(merge)?;
        }
        self.e.b.position_at_end(merge);
        self.enter(&homes, &op.results)
    }

    /// A home for each of `values`.
    fn homes(&mut self, values: &[Value]) -> Result<Vec<Home<'ctx>>, HostError> {
        values
            .iter()
            .map(|&v| match self.func.ty(v) {
                Type::Scalar(d) => {
                    let ty = self.e.reg_type(*d);
                    Ok(Home::Scalar(self.local(ty)?, ty))
                }
                Type::Tile(_) => Ok(Home::Tile(self.place_of(v)?)),
                other => Err(HostError::Unsupported {
                    what: format!("a carried value of type {other}"),
                }),
            })
            .collect()
    }

    /// Defines each of `values` as the content of its home.
    fn enter(&mut self, homes: &[Home<'ctx>], values: &[Value]) -> Result<(), HostError> {
        if homes.len() != values.len() {
            return Err(HostError::internal(
                "carried values and homes differ in number",
            ));
        }
        for (home, &v) in homes.iter().zip(values) {
            let value = match home {
                Home::Scalar(slot, ty) => {
                    HostValue::Scalar(self.e.b.build_load(*ty, *slot, "carried")?)
                }
                Home::Tile(t) => HostValue::Tile(t.clone()),
            };
            self.define(v, value);
        }
        Ok(())
    }

    /// Stores `values` into `homes`. A tile that is itself another home is
    /// first copied aside, so that no home is overwritten before it is read.
    fn assign(&mut self, homes: &[Home<'ctx>], values: &[Value]) -> Result<(), HostError> {
        if homes.len() != values.len() {
            return Err(HostError::internal(
                "yielded values and homes differ in number",
            ));
        }
        let mut sources = Vec::with_capacity(values.len());
        for &v in values {
            sources.push(self.value(v)?);
        }
        let is_home = |t: &TileRef, own: usize| {
            homes
                .iter()
                .enumerate()
                .any(|(k, h)| k != own && matches!(h, Home::Tile(o) if o.at == t.at))
        };
        let hazard = sources
            .iter()
            .enumerate()
            .any(|(k, s)| matches!(s, HostValue::Tile(t) if is_home(t, k)));
        if hazard {
            for source in &mut sources {
                if let HostValue::Tile(t) = source {
                    let aside = self.place(&t.shape, t.dtype);
                    self.copy(&aside, t)?;
                    *t = aside;
                }
            }
        }
        for (home, source) in homes.iter().zip(sources) {
            match (home, source) {
                (Home::Scalar(slot, _), HostValue::Scalar(s)) => {
                    self.e.b.build_store(*slot, s)?;
                }
                (Home::Tile(t), HostValue::Tile(s)) => self.copy(t, &s)?,
                _ => return Err(HostError::internal("a yielded value of another kind")),
            }
        }
        Ok(())
    }
}

//! Structured, uniform control flow: `for`, `while`, `if` and `yield`.
//!
//! Loop bounds and branch conditions are scalars of the tile IR, so they are
//! uniform registers and the thread-level `for`/`if` stay block-uniform. A
//! carried or yielded tile becomes its registers, flattened in order, one
//! per element a thread holds: of registers holding the same element (a
//! slice's copies, `coords::representatives`) only the first is carried,
//! and the others are bound to it again after the region. Otherwise a
//! row's running maximum, held 32 times by each thread of a 32-wide row
//! slice, would be 32 loop-carried registers that no later pass can tell
//! are equal. A yielded tile is converted to the layout its region
//! promises (the initial value's for a loop body, the then branch's for
//! the else branch), so that the registers of a carried tile line up
//! across iterations.

use super::coords::representatives;
use super::{LowerError, Lowered, Lowerer};
use crate::layout_assign::DistLayout;
use crate::program::{CheckKind, Reg, Region, ThreadOpKind};
use std::rc::Rc;
use tile_ir::{CmpPred, DType, OpId, OpKind, Scalar, Value};

/// How one lowered value is laid out among flattened registers.
#[derive(Clone)]
pub(super) enum Slot {
    Scalar,
    Tile(Rc<DistLayout>),
    /// A tile in tensor memory: no registers.
    Resident(Rc<DistLayout>),
}

impl Lowerer<'_> {
    /// The registers of scalar and tile values, flattened, with their slots.
    fn flatten(&mut self, id: OpId, values: &[Value]) -> Result<(Vec<Reg>, Vec<Slot>), LowerError> {
        let mut regs = Vec::new();
        let mut slots = Vec::new();
        for &v in values {
            match self.get(id, v)? {
                Lowered::Scalar(r) => {
                    regs.push(r);
                    slots.push(Slot::Scalar);
                }
                Lowered::Tile { layout, regs: r } => {
                    regs.extend(distinct(&layout, &r));
                    slots.push(Slot::Tile(layout));
                }
                Lowered::Resident(layout) => slots.push(Slot::Resident(layout)),
                _ => {
                    return Err(self.invalid(id, "only scalars and tiles can be carried or yielded"))
                }
            }
        }
        Ok((regs, slots))
    }

    /// Binds `values` to the flattened `regs` laid out as `slots`.
    fn unflatten(&mut self, values: &[Value], slots: &[Slot], regs: &[Reg]) {
        let mut at = 0;
        for (&v, slot) in values.iter().zip(slots) {
            let lowered = match slot {
                Slot::Scalar => {
                    at += 1;
                    Lowered::Scalar(regs[at - 1])
                }
                Slot::Resident(layout) => Lowered::Resident(layout.clone()),
                Slot::Tile(layout) => {
                    let first = representatives(layout);
                    let n = (0..first.len()).filter(|&v| first[v] == v).count();
                    at += n;
                    Lowered::Tile {
                        layout: layout.clone(),
                        regs: copied(&first, &regs[at - n..at]),
                    }
                }
            };
            self.env.insert(v, lowered);
        }
    }

    fn dtypes(&self, regs: &[Reg]) -> Vec<DType> {
        regs.iter().map(|&r| self.program.dtype(r)).collect()
    }

    /// Lowers `yield`: the flattened registers of its operands, each tile
    /// first converted to the layout its region expects (the carried value's
    /// for a `for` body, the then branch's for an `else`).
    pub(super) fn lower_yield(&mut self, id: OpId) -> Result<(), LowerError> {
        let func = self.func;
        let operands = &func.op(id).operands;
        let targets = self.yield_targets.last().cloned().flatten();
        let mut regs = Vec::new();
        for (i, &v) in operands.iter().enumerate() {
            match (self.get(id, v)?, targets.as_ref().and_then(|t| t.get(i))) {
                (
                    Lowered::Tile {
                        layout: from,
                        regs: r,
                    },
                    Some(Slot::Tile(to)),
                ) => {
                    if from.shape != to.shape {
                        return Err(self.invalid(id, "a yielded tile of the wrong shape"));
                    }
                    let r = self.convert(func.ty(v).dtype(), &from, &r, to);
                    regs.extend(distinct(to, &r));
                }
                _ => regs.extend(self.flatten(id, &[v])?.0),
            }
        }
        self.emit_op(ThreadOpKind::Yield, regs, &[]);
        Ok(())
    }

    /// Lowers `for`: bounds, then the flattened carried registers.
    pub(super) fn lower_for(&mut self, id: OpId) -> Result<(), LowerError> {
        let func = self.func;
        let op = func.op(id);
        let ([lo, hi, step, inits @ ..], [body]) = (op.operands.as_slice(), op.regions.as_slice())
        else {
            return Err(self.invalid(id, "`for` needs bounds and one region"));
        };
        let bounds = [
            self.scalar(id, *lo)?,
            self.scalar(id, *hi)?,
            self.scalar(id, *step)?,
        ];
        if !self.positive_constant(*step) {
            self.check_step(id, bounds[2]);
        }
        // The accumulator that stays in tensor memory: stored before the
        // loop, carried as nothing, loaded after it.
        let resident = self.resident_accumulator(id);
        if let Some(r) = &resident {
            self.store_resident(id, inits[r.index], &r.plan)?;
        }
        let (mut init_regs, slots) = self.flatten(id, inits)?;
        let Some((&iv, carried)) = body.args.split_first() else {
            return Err(self.invalid(id, "the body has no induction variable"));
        };
        let held = self.preload_invariant_operands(body);
        self.preconvert_invariant_broadcasts(body)?;
        // A pipelined loop copies ahead and carries its stage (last).
        let pipeline = self.pipeline(id, bounds)?;
        if let Some(p) = &pipeline {
            self.pipeline_prologue(p)?;
            init_regs.push(self.i32c(0));
        }
        let iv_reg = self.program.new_reg(self.program.dtype(bounds[0]));
        let arg_regs: Vec<Reg> = self
            .dtypes(&init_regs)
            .into_iter()
            .map(|d| self.program.new_reg(d))
            .collect();
        self.env.insert(iv, Lowered::Scalar(iv_reg));
        self.unflatten(carried, &slots, &arg_regs);
        self.loop_depth += 1;
        self.yield_targets.push(Some(slots.clone()));
        let start = match &pipeline {
            Some(p) => {
                let stage = *arg_regs.last().unwrap_or(&iv_reg);
                self.pipeline_body_start(p, iv_reg, stage).map(Some)
            }
            None => Ok(None),
        };
        let ops = start.and_then(|start| {
            let mut body_ops = self.region(body)?;
            Ok(match (start, &pipeline) {
                (Some((mut ops, next_stage)), Some(p)) => {
                    // The body's `yield` (its last op) carries the next stage;
                    // the copies issued after the body go before it.
                    let stage = *arg_regs.last().unwrap_or(&iv_reg);
                    let end = self.pipeline_body_end(p, iv_reg, stage)?;
                    let last = body_ops.pop();
                    if let Some(last) = last {
                        self.program.ops[last].operands.push(next_stage);
                    }
                    body_ops.extend(end);
                    body_ops.extend(last);
                    ops.extend(body_ops);
                    ops
                }
                _ => body_ops,
            })
        });
        self.yield_targets.pop();
        self.loop_depth -= 1;
        for alloc in held {
            self.release_shared(alloc);
        }
        let ops = ops?;
        let mut args = vec![iv_reg];
        args.extend(&arg_regs);
        let operands = bounds
            .iter()
            .copied()
            .chain(init_regs.iter().copied())
            .collect();
        let result_types = self.dtypes(&init_regs);
        let thread_op = self.program.create_op(
            ThreadOpKind::For,
            operands,
            &result_types,
            vec![Region { args, ops }],
        );
        self.current.push(thread_op);
        let results = self.program.ops[thread_op].results.clone();
        self.unflatten(&op.results, &slots, &results);
        if let Some(r) = &resident {
            let regs = self.load_accumulator(id, &r.plan)?;
            let layout = Rc::new(r.plan.layout.clone());
            self.env
                .insert(op.results[r.index], Lowered::Tile { layout, regs });
        }
        if let Some(p) = &pipeline {
            self.pipeline_end(p);
        }
        Ok(())
    }

    /// Lowers `while`: the flattened carried registers, laid out as the
    /// initial values in both regions and in the results.
    pub(super) fn lower_while(&mut self, id: OpId) -> Result<(), LowerError> {
        let func = self.func;
        let op = func.op(id);
        let [cond, body] = op.regions.as_slice() else {
            return Err(self.invalid(id, "`while` needs two regions"));
        };
        let (init_regs, slots) = self.flatten(id, &op.operands)?;
        let types = self.dtypes(&init_regs);
        self.loop_depth += 1;
        let mut regions = Vec::with_capacity(2);
        for (region, yields) in [(cond, None), (body, Some(slots.clone()))] {
            let args: Vec<Reg> = types.iter().map(|&d| self.program.new_reg(d)).collect();
            self.unflatten(&region.args, &slots, &args);
            self.yield_targets.push(yields);
            let ops = self.region(region);
            self.yield_targets.pop();
            match ops {
                Ok(ops) => regions.push(Region { args, ops }),
                Err(e) => {
                    self.loop_depth -= 1;
                    return Err(e);
                }
            }
        }
        self.loop_depth -= 1;
        let thread_op = self
            .program
            .create_op(ThreadOpKind::While, init_regs, &types, regions);
        self.current.push(thread_op);
        let results = self.program.ops[thread_op].results.clone();
        self.unflatten(&op.results, &slots, &results);
        Ok(())
    }

    /// A thread-level `for k = lo to hi step s` (`bounds`, `i32`) carrying
    /// `init`: `body` receives the counter and the carried registers and
    /// returns the next ones, emitting the loop body's ops. The loop's
    /// results.
    pub(super) fn counted_for(
        &mut self,
        bounds: [Reg; 3],
        init: &[Reg],
        body: impl FnOnce(&mut Self, Reg, &[Reg]) -> Result<Vec<Reg>, LowerError>,
    ) -> Result<Vec<Reg>, LowerError> {
        let k = self.program.new_reg(DType::I32);
        let types = self.dtypes(init);
        let carried: Vec<Reg> = types.iter().map(|&d| self.program.new_reg(d)).collect();
        let saved = std::mem::take(&mut self.current);
        let next = body(self, k, &carried);
        let mut ops = std::mem::replace(&mut self.current, saved);
        ops.push(
            self.program
                .create_op(ThreadOpKind::Yield, next?, &[], vec![]),
        );
        let mut args = vec![k];
        args.extend(&carried);
        let operands = bounds.iter().chain(init).copied().collect();
        let op = self.program.create_op(
            ThreadOpKind::For,
            operands,
            &types,
            vec![Region { args, ops }],
        );
        self.current.push(op);
        Ok(self.program.ops[op].results.clone())
    }

    /// Whether `v` is a constant above zero (a step that needs no check).
    fn positive_constant(&self, v: Value) -> bool {
        let func = self.func;
        func.defining_op(v)
            .is_some_and(|op| match func.op(op).kind {
                OpKind::Constant { value } => value.to_i128().is_some_and(|n| n > 0),
                _ => false,
            })
    }

    /// Checks that the `for` `id`'s step, `step`, is positive: the
    /// interpreter reports a loop that is not, and a GPU would loop forever.
    fn check_step(&mut self, id: OpId, step: Reg) {
        let dtype = self.program.dtype(step);
        let zero = self.constant(Scalar::zero(dtype));
        let ok = self.emit(
            ThreadOpKind::Cmp(CmpPred::Gt),
            vec![step, zero],
            DType::Bool,
        );
        let wide = self.emit(
            ThreadOpKind::Cast { to: DType::I64 },
            vec![step],
            DType::I64,
        );
        let op = self.check_site(id);
        self.emit_op(
            ThreadOpKind::Check {
                kind: CheckKind::Step,
                op,
            },
            vec![ok, wide],
            &[],
        );
    }

    /// Lowers `if`: the layouts of the results are those of the then branch.
    pub(super) fn lower_if(&mut self, id: OpId) -> Result<(), LowerError> {
        let func = self.func;
        let op = func.op(id);
        let ([cond], [then, otherwise]) = (op.operands.as_slice(), op.regions.as_slice()) else {
            return Err(self.invalid(id, "`if` needs a condition and two regions"));
        };
        let cond = self.scalar(id, *cond)?;
        self.yield_targets.push(None);
        let then_ops = self.region(then);
        self.yield_targets.pop();
        let then_ops = then_ops?;
        let slots = match then.ops.last().map(|&y| func.op(y)) {
            Some(y) => self.flatten(id, &y.operands)?.1,
            None => Vec::new(),
        };
        self.yield_targets.push(Some(slots.clone()));
        let else_ops = self.region(otherwise);
        self.yield_targets.pop();
        let else_ops = else_ops?;
        let yielded = match then_ops.last().map(|&y| &self.program.ops[y]) {
            Some(y) if y.kind == ThreadOpKind::Yield => y.operands.clone(),
            _ => Vec::new(),
        };
        let result_types = self.dtypes(&yielded);
        let regions = vec![
            Region {
                args: vec![],
                ops: then_ops,
            },
            Region {
                args: vec![],
                ops: else_ops,
            },
        ];
        let thread_op =
            self.program
                .create_op(ThreadOpKind::If, vec![cond], &result_types, regions);
        self.current.push(thread_op);
        let results = self.program.ops[thread_op].results.clone();
        self.unflatten(&op.results, &slots, &results);
        Ok(())
    }
}

/// The registers `regs` of a tile in `layout`, one per element a thread
/// holds (the first of each element's copies).
fn distinct(layout: &DistLayout, regs: &[Reg]) -> Vec<Reg> {
    let first = representatives(layout);
    regs.iter()
        .enumerate()
        .filter(|&(v, _)| first[v] == v)
        .map(|(_, &r)| r)
        .collect()
}

/// A tile's registers from its [`distinct`] ones: each copy bound to its
/// element's first register (`first`: [`representatives`]).
fn copied(first: &[usize], distinct: &[Reg]) -> Vec<Reg> {
    let mut at = vec![0; first.len()];
    let mut next = 0;
    for v in 0..first.len() {
        if first[v] == v {
            at[v] = next;
            next += 1;
        } else {
            at[v] = at[first[v]];
        }
    }
    at.into_iter().map(|i| distinct[i]).collect()
}

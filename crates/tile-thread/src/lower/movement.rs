//! Movement ops through shared memory, and broadcasts of scalars.
//!
//! A scalar broadcast is replication: every register of the result is the
//! scalar's register; a `broadcast` or `expand` of a tile whose layout fits
//! the result's (a slice, or dropped leading axes) keeps its registers, one
//! whose every copy some register of the wanting thread already holds
//! takes those registers, a `permute` read only by `dot`s keeps its
//! operand's registers (`DistLayout::permuted`), and
//! so does a `reshape` that only inserts (or removes) axes of extent 1 into
//! an operand held as the result is without (with) them, and one whose
//! every element the wanting thread already holds takes those registers.
//! Every
//! other movement op is a stage and a gather through shared memory (see
//! `shared.rs`) with a map per op; a `permute`'s staging is swizzled against
//! bank conflicts (`swizzle.rs`).
//!
//! The maps, from a result coordinate `c` to the operand's row-major index:
//!
//! | op | operand coordinate |
//! |---|---|
//! | `broadcast`, `expand` | `c` right-aligned, 0 on axes of extent 1 |
//! | `reshape` | same row-major index |
//! | `permute p` | axis `p[i]` is `c[i]` |
//! | `flip` | `S - 1 - c` on the flipped axes |
//! | `slice` | `start + c * step` |
//! | `pad` | `c - low`, the pad value outside the operand |
//! | `cat` | operands staged into the result's buffer at their offsets |

use super::shared::{broadcast_selection, register_selection, Source};
use super::{LowerError, Lowered, Lowerer};
use crate::layout_assign::row_major;
use crate::program::{Reg, ThreadOpKind};
use tile_ir::{BinaryOp, CmpPred, DType, Function, OpId, OpKind, Value};

impl Lowerer<'_> {
    /// Lowers the movement ops.
    pub(super) fn movement(&mut self, id: OpId) -> Result<(), LowerError> {
        let func = self.func;
        let op = func.op(id);
        let result = *op
            .results
            .first()
            .ok_or_else(|| self.invalid(id, "no result"))?;
        // A deferred or prefetched load squeezed or transposed into a dot's
        // operand (`copies::operand_chain`): the dot copies it as it is.
        if let (OpKind::Reshape { .. } | OpKind::Permute { .. }, Some(&operand)) =
            (&op.kind, op.operands.first())
        {
            if let deferred @ (Lowered::Deferred { .. } | Lowered::Staged { .. }) =
                self.get(id, operand)?
            {
                return self.bind(id, deferred);
            }
        }
        if let Some(converted) = self.preconverted_broadcast(id) {
            return self.bind(id, converted);
        }
        let dtype = func.ty(result).dtype();
        let layout = self.layout_of(id, result)?;
        let dst = layout.shape.clone();
        if let OpKind::Cat { axis } = op.kind {
            let rs = row_major(&dst);
            let mut parts = Vec::new();
            let mut offset = 0usize;
            for &v in &op.operands {
                let (l, regs) = self.tile(id, v)?;
                let coords = self.coords(&l);
                let mut indices = Vec::new();
                for axes in &coords.axes {
                    let mut terms: Vec<(Reg, usize)> =
                        axes.iter().copied().zip(rs.iter().copied()).collect();
                    let shift = self.i32c((offset * rs[axis]) as i64);
                    terms.push((shift, 1));
                    indices.push(self.linear(&terms));
                }
                offset += l.shape.get(axis).copied().unwrap_or(0);
                parts.push((regs, indices, coords.owner.clone()));
            }
            let alloc = self.stage(dtype, dst.iter().product(), &parts);
            let regs = self.gather(alloc, dtype, &layout, None, |_, _, linear| Source {
                index: linear,
                inside: None,
            });
            self.release_shared(alloc);
            return self.bind(id, Lowered::Tile { layout, regs });
        }
        let operand = *op
            .operands
            .first()
            .ok_or_else(|| self.invalid(id, "no operand"))?;
        let (src_layout, src_regs) = match self.get(id, operand)? {
            Lowered::Scalar(r) => {
                let regs = vec![r; layout.registers()];
                return self.bind(id, Lowered::Tile { layout, regs });
            }
            Lowered::Tile { layout, regs } => (layout, regs),
            _ => return Err(self.invalid(id, "the operand is not a scalar or tile")),
        };
        if matches!(op.kind, OpKind::Broadcast { .. } | OpKind::Expand { .. })
            && src_layout.broadcasts_to(&layout)
        {
            // A slice layout broadcast back to its parent: the registers already
            // hold every copy.
            return self.bind(
                id,
                Lowered::Tile {
                    layout,
                    regs: src_regs,
                },
            );
        }
        if let (OpKind::Reshape { .. } | OpKind::Broadcast { .. }, Some(axes)) = (
            &op.kind,
            crate::layout_assign::unit_axes_inserted(func, operand, result),
        ) {
            if layout
                .drop_axes(&axes)
                .is_some_and(|l| l.holds_like(&src_layout))
            {
                // Only axes of extent 1 inserted (a reshape, or a broadcast
                // of `[N]` to `[1, N]`), and the operand already held as the
                // result is without it: the same registers.
                return self.bind(
                    id,
                    Lowered::Tile {
                        layout,
                        regs: src_regs,
                    },
                );
            }
        }
        if let (OpKind::Reshape { .. }, Some(axes)) = (
            &op.kind,
            crate::layout_assign::unit_axes_inserted(func, result, operand),
        ) {
            if src_layout
                .drop_axes(&axes)
                .is_some_and(|l| l.holds_like(&layout))
            {
                // Only axes of extent 1 removed, and the result held as the
                // operand is without them: the same registers.
                return self.bind(
                    id,
                    Lowered::Tile {
                        layout,
                        regs: src_regs,
                    },
                );
            }
        }
        if let OpKind::Reshape { .. } = op.kind {
            // Axes split or merged where every element stays in a register
            // of the thread that wants it (a `[M, K]` tile held as rows of
            // contiguous runs, viewed as `[M, K / G, G]`): those registers.
            let (src, threads) = (src_layout.shape.clone(), self.program.block_threads());
            let source = |c: &[usize]| unravel(ravel(c, &dst), &src);
            if let Some(chosen) = register_selection(&src_layout, &layout, threads, source) {
                let regs = chosen.into_iter().map(|u| src_regs[u]).collect();
                return self.bind(id, Lowered::Tile { layout, regs });
            }
        }
        if let OpKind::Permute { perm } = &op.kind {
            // Only `dot`s read it, staging each element by its coordinate, or
            // the operand is held as the result is, permuted back (a loaded
            // scale tile read for its repetition): the same registers, their
            // coordinates permuted.
            let permuted = src_layout
                .permuted(perm)
                .filter(|p| only_dot_operands(func, result) || p.holds_like(&layout));
            if let Some(permuted) = permuted {
                let layout = std::rc::Rc::new(permuted);
                return self.bind(
                    id,
                    Lowered::Tile {
                        layout,
                        regs: src_regs,
                    },
                );
            }
        }
        if matches!(op.kind, OpKind::Broadcast { .. } | OpKind::Expand { .. }) {
            // Every copy already in a register of the thread that wants it
            // (a row statistic of one accumulator broadcast over another
            // with the same rows): those registers.
            let threads = self.program.block_threads();
            if let Some(chosen) = broadcast_selection(&src_layout, &layout, threads) {
                let regs = chosen.into_iter().map(|u| src_regs[u]).collect();
                return self.bind(id, Lowered::Tile { layout, regs });
            }
            // A load of a tensor nothing writes: read again, not staged.
            if let Some(regs) = self.reload_broadcast(operand, &layout)? {
                return self.bind(id, Lowered::Tile { layout, regs });
            }
        }
        let src = src_layout.shape.clone();
        let fits = match op.kind {
            OpKind::Reshape { .. } => true,
            OpKind::Broadcast { .. } => src.len() <= dst.len(),
            _ => src.len() == dst.len(),
        };
        if !fits {
            return Err(self.invalid(id, "operand and result ranks do not fit the op"));
        }
        let rs = row_major(&src);
        let kind = op.kind.clone();
        // A permutation reads the staging across rows: swizzled.
        let swizzle = match kind {
            OpKind::Permute { .. } => self.staging_swizzle(dtype, &src),
            _ => None,
        };
        let alloc = self.stage_tile_swizzled(dtype, &src_layout, &src_regs, swizzle);
        let pad = match &kind {
            OpKind::Pad { value, .. } => Some(*value),
            _ => None,
        };
        let regs = match kind {
            OpKind::Broadcast { .. } | OpKind::Expand { .. } => {
                let lead = dst.len() - src.len().min(dst.len());
                self.gather(alloc, dtype, &layout, None, |s, c, _| {
                    let terms: Vec<(Reg, usize)> = (0..src.len())
                        .filter(|&j| src[j] > 1)
                        .map(|j| (c[lead + j], rs[j]))
                        .collect();
                    Source {
                        index: s.linear(&terms),
                        inside: None,
                    }
                })
            }
            OpKind::Reshape { .. } => {
                self.gather(alloc, dtype, &layout, None, |_, _, linear| Source {
                    index: linear,
                    inside: None,
                })
            }
            OpKind::Permute { perm } => {
                if perm.len() != dst.len() || perm.iter().any(|&p| p >= src.len()) {
                    return Err(self.invalid(id, "a permutation of the wrong rank"));
                }
                let sw = swizzle.map(|(sw, _)| sw);
                self.gather_swizzled(alloc, dtype, &layout, sw, |s, c, _| {
                    let terms: Vec<(Reg, usize)> = perm
                        .iter()
                        .enumerate()
                        .map(|(i, &p)| (c[i], rs[p]))
                        .collect();
                    Source {
                        index: s.linear(&terms),
                        inside: None,
                    }
                })
            }
            OpKind::Flip { axes } => self.gather(alloc, dtype, &layout, None, |s, c, _| {
                let terms: Vec<(Reg, usize)> = (0..src.len())
                    .map(|d| {
                        if axes.contains(&d) {
                            let last = s.i32c(src[d] as i64 - 1);
                            (s.binary(BinaryOp::Sub, last, c[d]), rs[d])
                        } else {
                            (c[d], rs[d])
                        }
                    })
                    .collect();
                Source {
                    index: s.linear(&terms),
                    inside: None,
                }
            }),
            OpKind::Slice { ranges } => {
                if ranges.len() != src.len() {
                    return Err(self.invalid(id, "slice bounds of the wrong rank"));
                }
                self.gather(alloc, dtype, &layout, None, |s, c, _| {
                    let terms: Vec<(Reg, usize)> = (0..src.len())
                        .map(|d| {
                            let k = s.i32c(ranges[d].step as i64);
                            let scaled = if ranges[d].step == 1 {
                                c[d]
                            } else {
                                s.binary(BinaryOp::Mul, c[d], k)
                            };
                            let first = s.i32c(ranges[d].start as i64);
                            let at = if ranges[d].start == 0 {
                                scaled
                            } else {
                                s.binary(BinaryOp::Add, scaled, first)
                            };
                            (at, rs[d])
                        })
                        .collect();
                    Source {
                        index: s.linear(&terms),
                        inside: None,
                    }
                })
            }
            OpKind::Pad { low, .. } => {
                if low.len() != src.len() {
                    return Err(self.invalid(id, "pad widths of the wrong rank"));
                }
                self.gather(alloc, dtype, &layout, pad, |s, c, _| {
                    let mut inside: Option<Reg> = None;
                    let mut terms = Vec::new();
                    for d in 0..src.len() {
                        let lo = s.i32c(low[d] as i64);
                        let at = s.binary(BinaryOp::Sub, c[d], lo);
                        let zero = s.i32c(0);
                        let extent = s.i32c(src[d] as i64);
                        let ge =
                            s.emit(ThreadOpKind::Cmp(CmpPred::Ge), vec![at, zero], DType::Bool);
                        let lt = s.emit(
                            ThreadOpKind::Cmp(CmpPred::Lt),
                            vec![at, extent],
                            DType::Bool,
                        );
                        let both = s.binary(BinaryOp::And, ge, lt);
                        inside = Some(match inside {
                            Some(i) => s.binary(BinaryOp::And, i, both),
                            None => both,
                        });
                        terms.push((at, rs[d]));
                    }
                    Source {
                        index: s.linear(&terms),
                        inside,
                    }
                })
            }
            _ => return Err(self.invalid(id, "not a movement op")),
        };
        self.release_shared(alloc);
        self.bind(id, Lowered::Tile { layout, regs })
    }
}

/// The row-major index of coordinate `c` in `shape`.
fn ravel(c: &[usize], shape: &[usize]) -> usize {
    c.iter()
        .zip(shape)
        .fold(0, |index, (&x, &extent)| index * extent + x)
}

/// The coordinate of row-major index `index` in `shape`.
fn unravel(mut index: usize, shape: &[usize]) -> Vec<usize> {
    let mut c = vec![0; shape.len()];
    for (x, &extent) in c.iter_mut().zip(shape).rev() {
        *x = index % extent.max(1);
        index /= extent.max(1);
    }
    c
}

/// Whether `v` is used, and only as the `a` or `b` of `dot`s (which stage
/// their operands element by element, wherever a thread holds them).
fn only_dot_operands(func: &Function, v: Value) -> bool {
    let (mut dots, mut others) = (0, 0);
    func.walk(&mut |id| {
        let op = func.op(id);
        for (at, _) in op.operands.iter().enumerate().filter(|&(_, &x)| x == v) {
            match op.kind {
                OpKind::Dot { .. } if at < 2 => dots += 1,
                _ => others += 1,
            }
        }
    });
    dots > 0 && others == 0
}

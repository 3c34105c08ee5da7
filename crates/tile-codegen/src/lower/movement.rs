//! Movement ops through shared memory, and broadcasts of scalars.
//!
//! A scalar broadcast is replication: every register of the result is the
//! scalar's register. Every other movement op is a layout conversion through
//! shared memory (the general path; register-only special cases are future
//! work):
//!
//! 1. *stage*: each thread writes the registers it owns to an allocation at
//!    the element's row-major index (one writer per element, so no race), then
//!    a `barrier`; inside a `for` body a `barrier` also comes first, so that
//!    the writes of one iteration cannot race with the reads of the previous;
//! 2. *gather*: each register of the result reads the element its coordinate
//!    maps to; dead registers read index 0 instead (always written).
//!
//! A `broadcast` or `expand` of a tile in a slice layout of the result's
//! layout keeps its registers (every copy is already there). `convert`, the
//! same two steps with the identity map, changes a tile's layout where two
//! layouts meet.
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

use super::{LowerError, Lowered, Lowerer};
use crate::layout_assign::{row_major, DistLayout};
use crate::thread::{Reg, SharedId, ThreadOpKind};
use tile_ir::{BinaryOp, CmpPred, DType, OpId, OpKind, Scalar};

/// What a gather reads for one result register.
pub(super) struct Source {
    /// The operand's row-major index.
    pub index: Reg,
    /// Whether the coordinate lies in the operand (`None`: always).
    pub inside: Option<Reg>,
}

impl Lowerer<'_> {
    /// A shared allocation of `dtype` with at least `len` elements: a
    /// released one if there is one (grown if needed; `true`: its earlier
    /// readers must be waited for), else a new one.
    pub(super) fn take_shared(&mut self, dtype: DType, len: usize) -> (SharedId, bool) {
        let program = &mut self.program;
        match self
            .free_shared
            .iter()
            .position(|&a| program.shared[a].dtype == dtype)
        {
            Some(at) => {
                let alloc = self.free_shared.remove(at);
                let entry = &mut program.shared[alloc];
                entry.len = entry.len.max(len);
                (alloc, true)
            }
            None => (program.alloc_shared(dtype, len), false),
        }
    }

    /// Marks an allocation as dead: its last reads have been emitted.
    pub(super) fn release_shared(&mut self, alloc: SharedId) {
        self.free_shared.push(alloc);
    }

    /// Writes `(values, indices, masks)` of each part into a shared
    /// allocation of `len` elements (see [`Self::take_shared`]), between
    /// barriers; the caller releases it after its reads.
    pub(super) fn stage(
        &mut self,
        dtype: DType,
        len: usize,
        parts: &[(Vec<Reg>, Vec<Reg>, Vec<Reg>)],
    ) -> SharedId {
        let (alloc, reused) = self.take_shared(dtype, len);
        if self.loop_depth > 0 || reused {
            self.barrier();
        }
        for (values, indices, masks) in parts {
            for ((&v, &i), &m) in values.iter().zip(indices).zip(masks) {
                self.emit_op(ThreadOpKind::StoreShared { alloc }, vec![i, v, m], &[]);
            }
        }
        self.barrier();
        alloc
    }

    /// Stages a tile at its row-major indices.
    pub(super) fn stage_tile(
        &mut self,
        dtype: DType,
        layout: &DistLayout,
        regs: &[Reg],
    ) -> SharedId {
        let coords = self.coords(layout);
        let len = layout.shape.iter().product();
        self.stage(
            dtype,
            len,
            &[(regs.to_vec(), coords.linear.clone(), coords.owner.clone())],
        )
    }

    /// `alloc[index]`, where `index` is replaced by 0 unless `guard`.
    pub(super) fn read_shared(
        &mut self,
        alloc: SharedId,
        dtype: DType,
        index: Reg,
        guard: Reg,
    ) -> Reg {
        let zero = self.i32c(0);
        let index = if self.is_true(guard) || index == zero {
            index
        } else {
            self.select(guard, index, zero)
        };
        self.emit(ThreadOpKind::LoadShared { alloc }, vec![index], dtype)
    }

    /// Whether `r` is the constant `true`.
    pub(super) fn is_true(&mut self, r: Reg) -> bool {
        self.constant(Scalar::Bool(true)) == r
    }

    /// `Σ c[i] * strides[i]` over the given (coordinate, stride) pairs, `i32`.
    pub(super) fn linear(&mut self, terms: &[(Reg, usize)]) -> Reg {
        let mut sum: Option<Reg> = None;
        for &(c, s) in terms {
            let term = if s == 1 {
                c
            } else {
                let k = self.i32c(s as i64);
                self.binary(BinaryOp::Mul, c, k)
            };
            sum = Some(match sum {
                Some(a) => self.binary(BinaryOp::Add, a, term),
                None => term,
            });
        }
        sum.unwrap_or_else(|| self.i32c(0))
    }

    /// Reads each register of a result of `layout` from `alloc` through `map`
    /// (from the register's coordinates), with `pad` outside the operand.
    fn gather(
        &mut self,
        alloc: SharedId,
        dtype: DType,
        layout: &DistLayout,
        pad: Option<Scalar>,
        mut map: impl FnMut(&mut Self, &[Reg], Reg) -> Source,
    ) -> Vec<Reg> {
        let coords = self.coords(layout);
        let mut regs = Vec::new();
        for v in 0..layout.registers() {
            let source = map(self, &coords.axes[v], coords.linear[v]);
            let mut guard = coords.live[v];
            if let Some(inside) = source.inside {
                guard = if self.is_true(guard) {
                    inside
                } else {
                    self.binary(BinaryOp::And, guard, inside)
                };
            }
            let value = self.read_shared(alloc, dtype, source.index, guard);
            regs.push(match (source.inside, pad) {
                (Some(inside), Some(pad)) => {
                    let pad = self.constant(pad);
                    self.select(inside, value, pad)
                }
                _ => value,
            });
        }
        regs
    }

    /// The registers of a tile of `from` (registers `regs`) in layout `to`
    /// of the same shape: unchanged if the layouts agree, else through
    /// shared memory.
    pub(super) fn convert(
        &mut self,
        dtype: DType,
        from: &DistLayout,
        regs: &[Reg],
        to: &DistLayout,
    ) -> Vec<Reg> {
        if from == to {
            return regs.to_vec();
        }
        let alloc = self.stage_tile(dtype, from, regs);
        let converted = self.gather(alloc, dtype, to, None, |_, _, linear| Source {
            index: linear,
            inside: None,
        });
        self.release_shared(alloc);
        converted
    }

    /// Lowers the movement ops.
    pub(super) fn movement(&mut self, id: OpId) -> Result<(), LowerError> {
        let func = self.func;
        let op = func.op(id);
        let result = *op
            .results
            .first()
            .ok_or_else(|| self.invalid(id, "no result"))?;
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
        let alloc = self.stage_tile(dtype, &src_layout, &src_regs);
        let kind = op.kind.clone();
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
                self.gather(alloc, dtype, &layout, None, |s, c, _| {
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
            OpKind::Slice { start, step, .. } => {
                if start.len() != src.len() || step.len() != src.len() {
                    return Err(self.invalid(id, "slice bounds of the wrong rank"));
                }
                self.gather(alloc, dtype, &layout, None, |s, c, _| {
                    let terms: Vec<(Reg, usize)> = (0..src.len())
                        .map(|d| {
                            let k = s.i32c(step[d] as i64);
                            let scaled = if step[d] == 1 {
                                c[d]
                            } else {
                                s.binary(BinaryOp::Mul, c[d], k)
                            };
                            let first = s.i32c(start[d] as i64);
                            let at = if start[d] == 0 {
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

//! Shared-memory staging: allocations with reuse, stage, gather, convert.
//!
//! 1. *stage*: each thread writes the registers it owns to an allocation at
//!    the element's row-major index (one writer per element, so no race), then
//!    a `barrier`; a `barrier` also comes first when the allocation is reused
//!    or inside a `for` body, so that new writes cannot race with earlier reads;
//! 2. *gather*: each register of the result reads the element its coordinate
//!    maps to; dead registers read index 0 instead (always written).
//!
//! `convert`, the two steps with the identity map, changes a tile's layout
//! (unless a register renaming or warp shuffles suffice).
//! Allocations are released after their last reads and taken again from a
//! free list: one of the same dtype (grown if needed), else the bytes of
//! one of another dtype, through an allocation that aliases them
//! (`SharedAlloc::aliases`), so that a conversion after a pipelined loop
//! reuses the memory of its stages.

use super::placement::StagedIndices;
use super::Lowerer;
use crate::layout_assign::DistLayout;
use crate::program::{Program, Reg, SharedId, ThreadOpKind};
use tile_ir::layout::Swizzle;
use tile_ir::{BinaryOp, DType, Scalar};

/// The allocation of `dtype` over the bytes of `root`: `root` itself or an
/// earlier alias of it if one has that dtype, else a new alias.
fn alias_of(program: &mut Program, root: SharedId, dtype: DType) -> SharedId {
    let existing = program
        .shared
        .iter()
        .find(|(id, a)| program.shared_root(*id) == root && a.dtype == dtype)
        .map(|(id, _)| id);
    existing.unwrap_or_else(|| {
        let alias = program.alloc_shared(dtype, 0);
        program.shared[alias].aliases = Some(root);
        alias
    })
}

/// What a gather reads for one result register.
pub(super) struct Source {
    /// The operand's row-major index.
    pub index: Reg,
    /// Whether the coordinate lies in the operand (`None`: always).
    pub inside: Option<Reg>,
}

impl Lowerer<'_> {
    /// A shared allocation of `dtype` with at least `len` elements
    /// (`true`: it reuses released bytes, whose earlier readers must be
    /// waited for): a released one of `dtype` (grown if needed), else one
    /// of `dtype` over the bytes of the largest released one (grown if
    /// needed), else a new one.
    pub(super) fn take_shared(&mut self, dtype: DType, len: usize) -> (SharedId, bool) {
        let Some(at) = self.reusable_shared(dtype) else {
            return (self.program.alloc_shared(dtype, len), false);
        };
        let program = &mut self.program;
        let released = self.free_shared.remove(at);
        let alloc = if program.shared[released].dtype == dtype {
            released
        } else {
            alias_of(program, program.shared_root(released), dtype)
        };
        let entry = &mut program.shared[alloc];
        entry.len = entry.len.max(len);
        (alloc, true)
    }

    /// The released allocation [`Self::take_shared`] takes for `dtype`,
    /// by its position in the free list.
    pub(super) fn reusable_shared(&self, dtype: DType) -> Option<usize> {
        let program = &self.program;
        let bytes = |a: SharedId| program.shared[a].len * program.shared[a].dtype.size_bytes();
        match self
            .free_shared
            .iter()
            .position(|&a| program.shared[a].dtype == dtype)
        {
            Some(at) => Some(at),
            None => (0..self.free_shared.len()).max_by_key(|&at| bytes(self.free_shared[at])),
        }
    }

    /// The bytes of the released allocation [`Self::take_shared`] would
    /// take for `dtype`, if any: what it holds without growing.
    pub(super) fn reusable_bytes(&self, dtype: DType) -> Option<usize> {
        let a = self.free_shared[self.reusable_shared(dtype)?];
        Some(self.program.shared[a].len * self.program.shared[a].dtype.size_bytes())
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
        self.stage_by(dtype, len, |s, alloc| {
            for (values, indices, masks) in parts {
                for ((&v, &i), &m) in values.iter().zip(indices).zip(masks) {
                    let store = ThreadOpKind::StoreShared { alloc, width: 1 };
                    s.emit_op(store, vec![i, v, m], &[]);
                }
            }
        })
    }

    /// A shared allocation of `len` elements of `dtype` that `write` fills,
    /// between the barriers of [`Self::stage`].
    pub(super) fn stage_by(
        &mut self,
        dtype: DType,
        len: usize,
        write: impl FnOnce(&mut Self, SharedId),
    ) -> SharedId {
        let (alloc, reused) = self.take_shared(dtype, len);
        if self.loop_depth > 0 || reused {
            self.barrier();
        }
        write(self, alloc);
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
        self.stage_tile_swizzled(dtype, layout, regs, None)
    }

    /// Stages a tile at its row-major indices through `swizzle` (with the
    /// allocation length it needs; see [`super::swizzle`]), if any.
    pub(super) fn stage_tile_swizzled(
        &mut self,
        dtype: DType,
        layout: &DistLayout,
        regs: &[Reg],
        swizzle: Option<(Swizzle, usize)>,
    ) -> SharedId {
        let coords = self.coords(layout);
        let (sw, len) = match swizzle {
            Some((sw, len)) => (Some(sw), len),
            None => (None, layout.shape.iter().product()),
        };
        let mut placed = StagedIndices::new(layout, &coords.linear, sw);
        let indices = (0..layout.registers())
            .map(|v| self.placed_index(&mut placed, v))
            .collect();
        self.stage(
            dtype,
            len,
            &[(regs.to_vec(), indices, coords.owner.clone())],
        )
    }

    /// Stores `regs` (each written by its owner, `owners`) to `alloc` in
    /// groups of `group` consecutive registers: one vector store per group
    /// whose registers share an owner, else one store per register, each
    /// at the element `index(self, v)` of its first register `v`.
    pub(super) fn store_groups(
        &mut self,
        alloc: SharedId,
        (regs, owners): (&[Reg], &[Reg]),
        group: usize,
        mut index: impl FnMut(&mut Self, usize) -> Reg,
    ) {
        for g in (0..regs.len()).step_by(group) {
            let shared = owners[g..g + group].iter().all(|&o| o == owners[g]);
            let width = if shared { group } else { 1 };
            for v in (g..g + group).step_by(width) {
                let mut operands = vec![index(self, v)];
                operands.extend(&regs[v..v + width]);
                operands.push(owners[v]);
                let store = ThreadOpKind::StoreShared {
                    alloc,
                    width: width as u8,
                };
                self.emit_op(store, operands, &[]);
            }
        }
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
        self.emit(
            ThreadOpKind::LoadShared { alloc, width: 1 },
            vec![index],
            dtype,
        )
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
    pub(super) fn gather(
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

    /// As [`Self::gather`] from a staging through `swizzle`, if any.
    pub(super) fn gather_swizzled(
        &mut self,
        alloc: SharedId,
        dtype: DType,
        layout: &DistLayout,
        swizzle: Option<Swizzle>,
        mut map: impl FnMut(&mut Self, &[Reg], Reg) -> Source,
    ) -> Vec<Reg> {
        self.gather(alloc, dtype, layout, None, |s, c, linear| {
            let source = map(s, c, linear);
            Source {
                index: s.swizzled(source.index, swizzle),
                inside: source.inside,
            }
        })
    }

    /// The registers of a tile of `from` (registers `regs`) in layout `to`
    /// of the same shape: unchanged if the layouts agree, renamed if every
    /// thread already holds each of its `to` elements (a register
    /// permutation: no memory, no barrier), through warp shuffles if every
    /// element comes from the same warp within the cost bound (see
    /// [`super::shuffle_convert`]), else through shared memory, swizzled
    /// against bank conflicts (see [`super::swizzle`]).
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
        let threads = self.program.block_threads();
        if let Some(permutation) = register_selection(from, to, threads, |c| c.to_vec()) {
            return permutation.into_iter().map(|u| regs[u]).collect();
        }
        if let Some(converted) = self.shuffle_convert(dtype, from, regs, to) {
            return converted;
        }
        let swizzle = self.staging_swizzle(dtype, &from.shape);
        self.convert_through_shared(dtype, from, regs, to, swizzle)
    }

    /// [`Self::convert`]'s path through shared memory, staged through
    /// `swizzle` (with the allocation length it needs), if any.
    pub(super) fn convert_through_shared(
        &mut self,
        dtype: DType,
        from: &DistLayout,
        regs: &[Reg],
        to: &DistLayout,
        swizzle: Option<(Swizzle, usize)>,
    ) -> Vec<Reg> {
        let alloc = self.stage_tile_swizzled(dtype, from, regs, swizzle);
        let sw = swizzle.map(|(sw, _)| sw);
        let target = self.coords(to);
        let mut placed = StagedIndices::new(to, &target.linear, sw);
        // `gather` maps the registers in order.
        let mut next = 0;
        let converted = self.gather(alloc, dtype, to, None, |s, _, _| {
            let index = s.placed_index(&mut placed, next);
            next += 1;
            Source {
                index,
                inside: None,
            }
        });
        self.release_shared(alloc);
        converted
    }
}

/// For each register of `to` (a broadcast's or expansion's result), the
/// register of `from` (its operand's, right-aligned, axes of extent 1
/// repeated) that holds the same element in every one of the block's
/// `threads` threads, if there is one for every register: the broadcast
/// picks registers, with no conversion.
pub(super) fn broadcast_selection(
    from: &DistLayout,
    to: &DistLayout,
    threads: u32,
) -> Option<Vec<usize>> {
    let (src, dst) = (&from.shape, &to.shape);
    let lead = dst.len().checked_sub(src.len())?;
    let source = |c: &[usize]| -> Vec<usize> {
        (0..src.len())
            .map(|j| if src[j] == 1 { 0 } else { c[lead + j] })
            .collect()
    };
    register_selection(from, to, threads, source)
}

/// For each register of `to`, the register of `from` that holds the
/// element it wants (the coordinate `source` maps its own to, and the same
/// liveness) in every one of the block's `threads` threads, if there is one
/// for every register: with the identity a renaming of the same tile's
/// registers, with a broadcast's map (`super::movement`) a broadcast that
/// reads each copy from a register the thread holds.
pub(super) fn register_selection(
    from: &DistLayout,
    to: &DistLayout,
    threads: u32,
    source: impl Fn(&[usize]) -> Vec<usize>,
) -> Option<Vec<usize>> {
    // Candidates from thread 0, checked on every thread.
    let mut by_coordinate = std::collections::HashMap::new();
    for u in 0..from.registers() {
        let (c, live, _) = from.coordinate(0, u);
        by_coordinate.entry((c, live)).or_insert(u);
    }
    (0..to.registers())
        .map(|v| {
            let (c, live, _) = to.coordinate(0, v);
            let u = *by_coordinate.get(&(source(&c), live))?;
            (1..threads as usize)
                .all(|t| {
                    let (a, la, _) = to.coordinate(t, v);
                    let (b, lb, _) = from.coordinate(t, u);
                    source(&a) == b && la == lb
                })
                .then_some(u)
        })
        .collect()
}

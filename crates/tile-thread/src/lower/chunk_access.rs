//! The chunks a thread's `cp.async` copies move (`copies.rs`): where each
//! starts in the tensor, how many of its elements lie inside the view, and
//! the bounds check of an unmasked load. Chunks of an additive layout are
//! bounded by what is left of each axis past the first chunk and addressed
//! from the previous chunk by one stride product (`placement.rs`).

use super::access::bounds_note;
use super::placement::chunk_deltas;
use super::window::Window;
use super::{LowerError, Lowerer};
use crate::layout_assign::DistLayout;
use crate::program::{Reg, ThreadOpKind};
use std::collections::HashMap;
use tile_ir::{BinaryOp, CmpPred, DType, OpId, Scalar, Shape};

impl Lowerer<'_> {
    /// Per chunk of `chunks` (a tile of `view = (param, tile, window)` at
    /// `indices`), the element offset of its first element and how many of
    /// its elements the copy reads (`i32`): those inside the view for a
    /// masked load, all of them for an unmasked one, which is checked as
    /// [`Self::access`] checks it (its whole partition must lie inside).
    /// Dead chunks read nothing.
    pub(super) fn chunk_access(
        &mut self,
        load: OpId,
        (param, tile, window): (usize, &Shape, Option<&Window>),
        chunks: &DistLayout,
        indices: &[Reg],
        masked: bool,
    ) -> Result<ChunkAccess, LowerError> {
        let rank = tile.rank();
        if indices.len() != rank || tile.dims() != chunks.shape.as_slice() {
            return Err(self.invalid(load, "indices or tile do not match the view"));
        }
        let width = *chunks.size_per_thread.last().unwrap_or(&1);
        let proven: Vec<bool> = (0..rank).map(|d| self.proofs.proven(load, d)).collect();
        let bounded = masked || self.bounds_checks;
        let checked = bounded && !masked && proven.contains(&false);
        let coords = self.coords(chunks);
        let (zero, truth) = (
            self.constant(Scalar::I64(0)),
            self.constant(Scalar::Bool(true)),
        );
        let wide = self.constant(Scalar::I64(width as i64));
        let mut index_ok = truth;
        let mut origins = Vec::new();
        for (d, &i) in indices.iter().enumerate() {
            if bounded && !proven[d] {
                let ok = self.emit(ThreadOpKind::Cmp(CmpPred::Ge), vec![i, zero], DType::Bool);
                index_ok = self.and(index_ok, ok);
            }
            let extent = self.constant(Scalar::I64(tile.dims()[d] as i64));
            origins.push(self.binary(BinaryOp::Mul, i, extent));
        }
        let (mut addresses, mut counts) = (Vec::new(), Vec::new());
        let mut all_ok = truth;
        // Chunks placed by constant offsets from the first (`chunk_offsets.rs`)
        // are bounded by what is left of each axis past the first chunk and
        // addressed from the previous chunk by one stride product
        // (`ChunkAddresses::Chained`).
        let deltas = chunk_deltas(chunks, width);
        let mut lefts: Vec<Option<Reg>> = Vec::new();
        let mut known_steps: HashMap<Vec<i64>, Reg> = HashMap::new();
        let mut steps = Vec::new();
        for g in 0..chunks.registers() / width {
            let first = g * width;
            let mut outer_ok = index_ok;
            let mut inner_count = wide;
            match &deltas {
                Some(deltas) if g > 0 => {
                    let step = (0..rank).map(|d| deltas[g][d] - deltas[g - 1][d]).collect();
                    steps.push(self.chunk_step(param, step, &mut known_steps));
                    for (d, left) in lefts.iter().enumerate() {
                        let Some(left) = *left else { continue };
                        let delta = self.constant(Scalar::I64(deltas[g][d]));
                        if d + 1 < rank {
                            let lt = self.emit(
                                ThreadOpKind::Cmp(CmpPred::Lt),
                                vec![delta, left],
                                DType::Bool,
                            );
                            outer_ok = self.and(outer_ok, lt);
                        } else {
                            let past = self.binary(BinaryOp::Sub, left, delta);
                            inner_count = self.clamped_count(past, wide);
                        }
                    }
                }
                _ => {
                    let mut address: Option<Reg> = None;
                    for (d, &origin) in origins.iter().enumerate() {
                        let c = self.hoisted_cast(coords.axes[first][d], DType::I64);
                        let at = self.binary(BinaryOp::Add, origin, c);
                        let mut left = None;
                        if bounded && !proven[d] {
                            let extent = self.view_extent(param, window, d);
                            if d + 1 < rank {
                                let lt = self.emit(
                                    ThreadOpKind::Cmp(CmpPred::Lt),
                                    vec![at, extent],
                                    DType::Bool,
                                );
                                outer_ok = self.and(outer_ok, lt);
                                if deltas.is_some() {
                                    left = Some(self.binary(BinaryOp::Sub, extent, at));
                                }
                            } else {
                                let past = self.binary(BinaryOp::Sub, extent, at);
                                inner_count = self.clamped_count(past, wide);
                                left = Some(past);
                            }
                        }
                        lefts.push(left);
                        let stride = self.tensor_meta(param, d, true);
                        let term = self.binary(BinaryOp::Mul, at, stride);
                        address = Some(match address {
                            Some(a) => self.binary(BinaryOp::Add, a, term),
                            None => term,
                        });
                    }
                    addresses.push(address.unwrap_or(zero));
                }
            }
            let live = coords.live[first];
            let reads = self.and(live, outer_ok);
            if checked {
                // Unmasked: the whole chunk must be inside.
                let full = self.emit(
                    ThreadOpKind::Cmp(CmpPred::Eq),
                    vec![inner_count, wide],
                    DType::Bool,
                );
                let inside = self.and(outer_ok, full);
                let ok = if self.is_true(live) {
                    inside
                } else {
                    self.select(live, inside, truth)
                };
                all_ok = self.and(all_ok, ok);
            }
            let count = self.cast(inner_count, DType::I32);
            let none = self.i32c(0);
            counts.push(if self.is_true(reads) {
                count
            } else {
                self.select(reads, count, none)
            });
        }
        if checked {
            self.bounds_check(load, all_ok, indices);
        }
        let addresses = match (deltas, addresses.as_slice()) {
            (Some(_), &[first]) => ChunkAddresses::Chained { first, steps },
            _ => ChunkAddresses::Each(addresses),
        };
        Ok(ChunkAccess {
            addresses,
            counts,
            note: bounds_note(&proven, masked, bounded),
        })
    }

    /// Chunk `g`'s element offset, through the view's window, emitted here;
    /// `previous` carries the previous chunk's between calls for `g` in
    /// order.
    pub(super) fn chunk_address(
        &mut self,
        addresses: &ChunkAddresses,
        g: usize,
        previous: &mut Option<Reg>,
        window: Option<&Window>,
    ) -> Reg {
        let address = match (addresses, *previous) {
            (ChunkAddresses::Each(each), _) => each[g],
            (ChunkAddresses::Chained { steps, .. }, Some(before)) if g > 0 => {
                let hidden = self.emit(ThreadOpKind::Opaque, vec![before], DType::I64);
                self.binary(BinaryOp::Add, hidden, steps[g - 1])
            }
            (ChunkAddresses::Chained { first, .. }, _) => *first,
        };
        *previous = Some(address);
        self.window_offset(window, address)
    }

    /// `min(max(left, 0), width)`: how many of a chunk's `width` elements
    /// lie inside when `left` elements of its row lie at or past its first.
    fn clamped_count(&mut self, left: Reg, width: Reg) -> Reg {
        let zero = self.constant(Scalar::I64(0));
        let left = self.binary(BinaryOp::Max, left, zero);
        self.binary(BinaryOp::Min, left, width)
    }

    /// `Σ_d step[d] · stride_d` of tensor parameter `param`, hoisted, once
    /// per step.
    fn chunk_step(
        &mut self,
        param: usize,
        step: Vec<i64>,
        known: &mut HashMap<Vec<i64>, Reg>,
    ) -> Reg {
        if let Some(&r) = known.get(&step) {
            return r;
        }
        let mut sum: Option<Reg> = None;
        for (d, &k) in step.iter().enumerate() {
            if k == 0 {
                continue;
            }
            let stride = self.tensor_meta(param, d, true);
            let term = if k == 1 {
                stride
            } else {
                let k = self.constant(Scalar::I64(k));
                self.hoist_binary(BinaryOp::Mul, stride, k)
            };
            sum = Some(match sum {
                Some(s) => self.hoist_binary(BinaryOp::Add, s, term),
                None => term,
            });
        }
        let r = sum.unwrap_or_else(|| self.constant(Scalar::I64(0)));
        known.insert(step, r);
        r
    }
}

/// The chunks one thread copies: per chunk, the element offset of its
/// first element in the tensor (`i64`) and how many elements it reads
/// (`i32`, `0..=width`).
pub(super) struct ChunkAccess {
    pub(super) addresses: ChunkAddresses,
    pub(super) counts: Vec<Reg>,
    /// How the access is kept in bounds, for the text form.
    pub(super) note: String,
}

/// Where a thread's chunks start, as element offsets from the tensor's
/// element zero before the view's window.
pub(super) enum ChunkAddresses {
    /// Computed per chunk.
    Each(Vec<Reg>),
    /// The first chunk's, then each chunk's from the previous one's plus
    /// `steps[g - 1]` (hoisted stride products). [`Lowerer::chunk_address`]
    /// emits each where it is used and hides the previous one from LLVM,
    /// which would otherwise hoist every chunk's offset out of a copy loop
    /// and hold them all through it.
    Chained { first: Reg, steps: Vec<Reg> },
}

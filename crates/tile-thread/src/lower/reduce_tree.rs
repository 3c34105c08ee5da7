//! Parallel reductions: where the order cannot change the result, and
//! float sums where the kernel allows any order (`fast_math`).
//!
//! Wrapping `add`/`mul` and `min`/`max` of integers, and `min`/`max` of
//! floats (NaN-propagating with a canonical NaN, `-0` below `+0`), are
//! associative and commutative bit for bit; a float sum in any order stays
//! within docs/semantics.md §6's bound. Such a `reduce … keepdim` of
//! an operand without copies along axis `a` is combined as on a GPU, into the slice
//! layout (with `keepdim`) or the layout with the axis dropped (without):
//!
//! 1. **in thread**: the registers of one row (equal coordinates off `a`)
//!    fold into one partial; dead registers contribute the identity
//!    (0, 1, the dtype's minimum or maximum, ∓inf; `-0.0` for a float sum,
//!    since `x + -0.0` is `x` for every `x`, `+0.0` and `-0.0` included);
//! 2. **across lanes**: for each of the `log2(tpw[a])` lane bits of axis `a`,
//!    `partial ⊕= shfl.bfly(partial, mask)` — afterwards every lane along `a`
//!    holds the warp's total; on CDNA, where a hardware wave is two warps,
//!    the first warp bit along `a` (thread bit 5) is a lane bit of the wave
//!    too, combined by a 64-lane butterfly, so that shared memory holds a
//!    total per wave, not per half-wave;
//! 3. **across warps** (when `wpb[a] > 1`): lane 0 along `a` of each warp
//!    (each wave, on CDNA) writes its total to shared memory at
//!    `row · wpb[a] + warp_a`; after a
//!    barrier every thread folds its row's `wpb[a]` totals, or from 8 warps
//!    on, where lanes lie along `a`, the lanes along `a` share the reads
//!    (one each where there are `wpb[a]` of them: lane `l` along `a` the
//!    total of warp `l mod wpb[a]`) and combine them by butterfly shuffles.
//!
//! Float products, and float sums of kernels without `fast_math`, keep the
//! sequential path of `reduce.rs`: a tree combines in another order and
//! gives other bits than the interpreter.

use super::coords::Coords;
use super::Lowerer;
use crate::layout_assign::DistLayout;
use crate::program::{Reg, SharedId, ShuffleMode, ThreadOpKind, WARP_SIZE};
use tile_ir::eval::round_f64;
use tile_ir::{BinaryOp, CmpPred, DType, Padding, Scalar};

/// From this many warps along the axis on, step 3 combines the warps'
/// totals by shuffles ([`Lowerer::fold_warp_totals`]).
const SHUFFLED_WARPS: usize = 8;

/// The identity of `op` on `dtype`: for floats `-0.0` for `add`, `-inf`
/// for `max` and `+inf` for `min` (in f8e4m3, FP6 and FP4, which have no
/// infinity, their extreme finite values).
pub(super) fn identity(op: BinaryOp, dtype: DType) -> Option<Scalar> {
    if dtype.is_float() && op == BinaryOp::Add {
        return round_f64(-0.0, dtype);
    }
    if dtype.is_float() {
        let (infinity, sign) = match op {
            BinaryOp::Max => (Padding::NegInf, -1.0),
            _ => (Padding::PosInf, 1.0),
        };
        // Without infinities (f8e4m3, FP6, FP4) the extreme finite values.
        return infinity
            .value(dtype)
            .or_else(|| round_f64(sign * dtype.max_finite()?, dtype));
    }
    let bits = dtype.bits();
    let (min, max) = if dtype.is_signed_int() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    let value = match op {
        BinaryOp::Add => 0,
        BinaryOp::Mul => 1,
        BinaryOp::Max => min,
        BinaryOp::Min => max,
        _ => return None,
    };
    Scalar::wrapping_from_i128(dtype, value)
}

/// Which bits of the thread index move a thread along the reduced axis:
/// those of the lanes (shuffled across) and of the warps (combined through
/// shared memory).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AxisBits {
    /// Thread-index bits below 5 whose flip moves along the axis only.
    pub(crate) lanes: Vec<u32>,
    /// Thread-index bits from 5 on whose flip moves along the axis only.
    pub(crate) warps: Vec<u32>,
}

/// The width of a butterfly shuffle across thread-index bit `bit`: the
/// warp, or the wave64 for bit 5.
pub(super) fn butterfly_width(bit: u32) -> u8 {
    crate::program::shuffle_span(2 << bit) as u8
}

impl AxisBits {
    /// The bits of `layout`'s thread index along `axis`, for any layout
    /// (blocked, or a tensor-core accumulator): each mode of the thread
    /// layout of power-of-two size contributes one bit per factor of 2,
    /// moving the thread by `stride · 2^j` in the padded tile. `None` when a
    /// mode is not a power of two, or when a bit moves along `axis` and
    /// another axis at once (no tree runs along the axis alone then).
    pub(crate) fn of(layout: &DistLayout, axis: usize) -> Option<AxisBits> {
        let ps = layout.padded_strides();
        let (along, extent) = (*ps.get(axis)? as i64, *layout.padded.get(axis)? as i64);
        let mut bits = AxisBits {
            lanes: Vec::new(),
            warps: Vec::new(),
        };
        let mut bit = 0u32;
        let shapes = layout.thread.shape().leaves();
        let strides = layout.thread.stride().leaves();
        for (&size, &stride) in shapes.iter().zip(&strides) {
            if size < 1 || (size as u64).count_ones() != 1 {
                return None;
            }
            for j in 0..size.trailing_zeros() {
                let delta = stride << j;
                let coordinate = (delta / along) % extent;
                let on_axis = coordinate * along;
                if coordinate != 0 && on_axis != delta {
                    return None;
                }
                if coordinate != 0 {
                    let to = if bit < WARP_SIZE.trailing_zeros() {
                        &mut bits.lanes
                    } else {
                        &mut bits.warps
                    };
                    to.push(bit);
                }
                bit += 1;
            }
        }
        Some(bits)
    }

    /// The bits with thread bit 5 counted among the lanes where a hardware
    /// wave has `wave_lanes` (64: two warps) and the axis holds the bit.
    pub(crate) fn in_waves(mut self, wave_lanes: u32) -> AxisBits {
        let bit = WARP_SIZE.trailing_zeros();
        if wave_lanes > WARP_SIZE && self.warps.first() == Some(&bit) {
            self.warps.remove(0);
            self.lanes.push(bit);
        }
        self
    }
}

impl Lowerer<'_> {
    /// The thread's bits `bits` of its index, packed in order into an
    /// integer (`Σ_k ((tid >> bits[k]) & 1) << k`), hoisted.
    pub(super) fn packed_bits(&mut self, bits: &[u32]) -> Reg {
        let tid = self.thread_id();
        let contiguous = bits.windows(2).all(|w| w[1] == w[0] + 1);
        if let (true, Some(&first)) = (contiguous, bits.first()) {
            let shifted = self.hoist_with_const(BinaryOp::Div, tid, 1 << first);
            return self.hoist_with_const(BinaryOp::Rem, shifted, 1 << bits.len());
        }
        let mut packed: Option<Reg> = None;
        for (k, &b) in bits.iter().enumerate() {
            let shifted = self.hoist_with_const(BinaryOp::Div, tid, 1 << b);
            let digit = self.hoist_with_const(BinaryOp::Rem, shifted, 2);
            let term = self.hoist_with_const(BinaryOp::Mul, digit, 1 << k);
            packed = Some(match packed {
                Some(p) => self.hoist_binary(BinaryOp::Add, p, term),
                None => term,
            });
        }
        packed.unwrap_or_else(|| self.i32c(0))
    }

    /// The lanes of the target's hardware wave ([`TensorCores::wave_lanes`])
    /// where the block's warps pair into such waves, else a warp's.
    ///
    /// [`TensorCores::wave_lanes`]: super::TensorCores::wave_lanes
    pub(super) fn wave_lanes(&self) -> u32 {
        self.tensor_cores.shuffle_span(self.program.num_warps)
    }

    /// Reduces `regs` (in the layout `from`, without copies) along `axis`
    /// with `op` into the registers of `to`: the slice of `from` along
    /// `axis`, or `from` with `axis` dropped.
    pub(super) fn tree_reduce(
        &mut self,
        op: BinaryOp,
        dtype: DType,
        axis: usize,
        from: &DistLayout,
        regs: &[Reg],
        to: &DistLayout,
    ) -> Vec<Reg> {
        let source = self.coords(from);
        let rows = self.coords(to);
        let combine =
            |s: &mut Self, a: Reg, b: Reg| s.emit(ThreadOpKind::Binary(op), vec![a, b], dtype);
        let identity = identity(op, dtype).map(|v| self.constant(v));
        // 1. In thread: one partial per row (keyed by its first register).
        let mut partials: Vec<(usize, Reg)> = Vec::new();
        for (v, &x) in regs.iter().enumerate() {
            let live = source.live[v];
            let x = match identity {
                Some(id) if !self.is_true(live) => self.select(live, x, id),
                _ => x,
            };
            let row = rows.representative[v];
            match partials.iter_mut().find(|(r, _)| *r == row) {
                Some((_, acc)) => *acc = combine(self, *acc, x),
                None => partials.push((row, x)),
            }
        }
        // 2. Across the lanes along `axis`.
        let bits = AxisBits::of(from, axis)
            .expect("the caller checked the axis bits")
            .in_waves(self.wave_lanes());
        for &bit in &bits.lanes {
            let mask = self.i32c(1 << bit);
            for (_, acc) in partials.iter_mut() {
                let kind = ThreadOpKind::Shuffle {
                    mode: ShuffleMode::Bfly,
                    width: butterfly_width(bit),
                };
                let other = self.emit(kind, vec![*acc, mask], dtype);
                *acc = combine(self, *acc, other);
            }
        }
        // 3. Across the warps along `axis`.
        let warps = 1usize << bits.warps.len();
        if warps > 1 {
            let len = to.shape.iter().product::<usize>() * warps;
            let alloc = self.take_totals(&[dtype], len)[0];
            let values: Vec<(usize, Vec<Reg>)> = partials
                .iter()
                .map(|&(row, acc)| (row, vec![acc]))
                .collect();
            let starts = self.store_warp_partials((&bits, warps), &rows, &values, &[alloc]);
            self.barrier();
            if warps >= SHUFFLED_WARPS && !bits.lanes.is_empty() {
                let stage = (alloc, warps, bits.lanes.as_slice());
                self.fold_warp_totals(op, dtype, stage, &mut partials, &starts, &rows.live);
                self.release_shared(alloc);
                return Self::row_results(regs, &rows.representative, &partials);
            }
            for ((row, acc), start) in partials.iter_mut().zip(starts) {
                let live = rows.live[*row];
                let mut total = self.read_shared(alloc, dtype, start, live);
                let start = if self.is_true(live) {
                    start
                } else {
                    let zero = self.i32c(0);
                    self.select(live, start, zero)
                };
                for w in 1..warps {
                    let offset = self.i32c(w as i64);
                    let index = self.binary(BinaryOp::Add, start, offset);
                    let x = self.emit(
                        ThreadOpKind::LoadShared { alloc, width: 1 },
                        vec![index],
                        dtype,
                    );
                    total = combine(self, total, x);
                }
                *acc = total;
            }
            self.release_shared(alloc);
        }
        Self::row_results(regs, &rows.representative, &partials)
    }

    /// Allocations of `len` elements of each of `dtypes` for step 3's
    /// totals, after a barrier where earlier readers of their bytes (or the
    /// last iteration's) must be done.
    pub(super) fn take_totals(&mut self, dtypes: &[DType], len: usize) -> Vec<SharedId> {
        let mut reused = false;
        let allocs = dtypes
            .iter()
            .map(|&dtype| {
                let (alloc, was) = self.take_shared(dtype, len);
                reused |= was;
                alloc
            })
            .collect();
        if self.loop_depth > 0 || reused {
            self.barrier();
        }
        allocs
    }

    /// Step 3's writes: the first lane along the axis of each warp stores
    /// each row's partial (one register per allocation of `allocs`) at
    /// slot `row · warps + warp`, then a barrier. Each row's first slot.
    pub(super) fn store_warp_partials(
        &mut self,
        (bits, warps): (&AxisBits, usize),
        rows: &Coords,
        partials: &[(usize, Vec<Reg>)],
        allocs: &[SharedId],
    ) -> Vec<Reg> {
        let lane = self.packed_bits(&bits.lanes);
        let warp = self.packed_bits(&bits.warps);
        let zero = self.i32c(0);
        let first_lane = self.hoist(
            ThreadOpKind::Cmp(CmpPred::Eq),
            vec![lane, zero],
            DType::Bool,
        );
        let stride = self.i32c(warps as i64);
        let mut starts = Vec::new();
        for (row, values) in partials {
            let start = self.binary(BinaryOp::Mul, rows.linear[*row], stride);
            let index = self.binary(BinaryOp::Add, start, warp);
            let live = rows.live[*row];
            let mask = if self.is_true(live) {
                first_lane
            } else {
                self.binary(BinaryOp::And, live, first_lane)
            };
            for (&alloc, &value) in allocs.iter().zip(values) {
                self.emit_op(
                    ThreadOpKind::StoreShared { alloc, width: 1 },
                    vec![index, value, mask],
                    &[],
                );
            }
            starts.push(start);
        }
        self.barrier();
        starts
    }

    /// Step 3 for many warps (`(alloc, warps)`: the totals' allocation and
    /// their count per row; `lanes`: the lane bits along the axis, whose
    /// lanes hold one row). Lanes that differ in `k` of those bits (as many
    /// as `log2(warps)` where there are) read `warps / 2^k` of their row's
    /// totals each, lane `l` those of the warps `≡ l (mod 2^k)`, and
    /// combine them by `k` butterfly shuffles: one read a lane where the
    /// axis has the lanes, instead of `warps` (each held in a register at
    /// once, which spilled at 32 warps). Lanes across the axis hold other
    /// rows and never combine. A combination of two lanes' values is the
    /// same in both (`op` commutes bit for bit), so every lane of a row
    /// ends with the same total.
    fn fold_warp_totals(
        &mut self,
        op: BinaryOp,
        dtype: DType,
        (alloc, warps, lanes): (SharedId, usize, &[u32]),
        partials: &mut [(usize, Reg)],
        starts: &[Reg],
        live: &[Reg],
    ) {
        let bits = &lanes[..lanes.len().min(warps.trailing_zeros() as usize)];
        let slot = self.packed_bits(bits);
        let zero = self.i32c(0);
        for ((row, acc), &start) in partials.iter_mut().zip(starts) {
            let live = live[*row];
            // A dead row reads slot 0's row instead, in bounds.
            let start = if self.is_true(live) {
                start
            } else {
                self.select(live, start, zero)
            };
            let first = self.binary(BinaryOp::Add, start, slot);
            let mut total = self.emit(
                ThreadOpKind::LoadShared { alloc, width: 1 },
                vec![first],
                dtype,
            );
            for j in 1..warps >> bits.len() {
                let offset = self.i32c((j << bits.len()) as i64);
                let index = self.binary(BinaryOp::Add, first, offset);
                let x = self.emit(
                    ThreadOpKind::LoadShared { alloc, width: 1 },
                    vec![index],
                    dtype,
                );
                total = self.emit(ThreadOpKind::Binary(op), vec![total, x], dtype);
            }
            for &bit in bits {
                let mask = self.i32c(1 << bit);
                let kind = ThreadOpKind::Shuffle {
                    mode: ShuffleMode::Bfly,
                    width: butterfly_width(bit),
                };
                let other = self.emit(kind, vec![total, mask], dtype);
                total = self.emit(ThreadOpKind::Binary(op), vec![total, other], dtype);
            }
            *acc = total;
        }
    }

    /// Each register's row result: its row's partial (`regs` itself where
    /// the row has none).
    pub(super) fn row_results(
        regs: &[Reg],
        representative: &[usize],
        partials: &[(usize, Reg)],
    ) -> Vec<Reg> {
        (0..regs.len())
            .map(|v| {
                let row = representative[v];
                partials
                    .iter()
                    .find(|(r, _)| *r == row)
                    .map_or(regs[v], |(_, acc)| *acc)
            })
            .collect()
    }
}

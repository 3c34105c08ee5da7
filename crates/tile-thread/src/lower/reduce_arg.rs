//! `argmax` and `argmin` in registers: a tree of `(index, value)` pairs
//! instead of the staged, sequential fold of `reduce.rs`.
//!
//! The interpreter's fold keeps the first NaN's index where there is a NaN,
//! else the first index of the largest (smallest) value, `+0` beyond `-0`.
//! That is the best pair under one total order, so the pairs combine in any
//! order to the same result: of two pairs, a NaN beats a number, a value
//! strictly beyond the other's wins, and equal values (or two NaNs) keep
//! the lower index. The steps are `reduce_tree.rs`'s: each thread folds its
//! registers of a row (a dead register counts as the dtype's worst value at
//! index `i32::MAX`, which every live element beats), the lanes along the
//! axis exchange pairs by butterfly shuffles (on CDNA also the two warps of
//! a wave, by 64-lane ones), and where warps (waves) lie along the axis the
//! first lane of each writes its pair to shared memory (values and
//! indices in two arrays of `warps` per row) and every thread combines its
//! row's pairs. No tile-sized staging: an `[8, 4096]` argmax fits gfx942's
//! 64 KiB of LDS as Triton's does.

use super::reduce_tree::{butterfly_width, identity, AxisBits};
use super::Lowerer;
use crate::layout_assign::DistLayout;
use crate::program::{Reg, ShuffleMode, ThreadOpKind};
use tile_ir::{ArgKind, BinaryOp, CmpPred, DType, Scalar, UnaryOp};

/// An `(index, value)` pair in registers.
type Pair = (Reg, Reg);

/// The value no element of `dtype` is beyond for `kind`: the dtype's
/// lowest (argmax) or highest (argmin), or `None` where it has none.
pub(super) fn worst(kind: ArgKind, dtype: DType) -> Option<Scalar> {
    let op = match kind {
        ArgKind::ArgMax => BinaryOp::Max,
        ArgKind::ArgMin => BinaryOp::Min,
    };
    identity(op, dtype)
}

impl Lowerer<'_> {
    /// The `kind` arg reduction of `regs` (in `from`, without copies, with
    /// [`worst`] defined for `dtype`) along `axis`, into the registers of
    /// `to`: the slice of `from` along `axis`, or `from` with it dropped.
    pub(super) fn tree_arg_reduce(
        &mut self,
        (kind, dtype): (ArgKind, DType),
        axis: usize,
        (from, regs): (&DistLayout, &[Reg]),
        to: &DistLayout,
    ) -> Vec<Reg> {
        let source = self.coords(from);
        let rows = self.coords(to);
        let worst = worst(kind, dtype).map(|v| self.constant(v));
        let never = self.i32c(i64::from(i32::MAX));
        // 1. In thread: one pair per row (keyed by its first register).
        let mut partials: Vec<(usize, Pair)> = Vec::new();
        for (v, &x) in regs.iter().enumerate() {
            let (live, k) = (source.live[v], source.axes[v][axis]);
            let pair = match worst {
                Some(w) if !self.is_true(live) => {
                    (self.select(live, k, never), self.select(live, x, w))
                }
                _ => (k, x),
            };
            let row = rows.representative[v];
            match partials.iter_mut().find(|(r, _)| *r == row) {
                Some((_, acc)) => *acc = self.arg_combine(kind, dtype, *acc, pair),
                None => partials.push((row, pair)),
            }
        }
        // 2. Across the lanes along `axis`.
        let bits = AxisBits::of(from, axis)
            .expect("the caller checked the axis bits")
            .in_waves(self.wave_lanes());
        for &bit in &bits.lanes {
            let mask = self.i32c(1 << bit);
            for (_, acc) in partials.iter_mut() {
                let kind_of = ThreadOpKind::Shuffle {
                    mode: ShuffleMode::Bfly,
                    width: butterfly_width(bit),
                };
                let k = self.emit(kind_of.clone(), vec![acc.0, mask], DType::I32);
                let x = self.emit(kind_of, vec![acc.1, mask], dtype);
                *acc = self.arg_combine(kind, dtype, *acc, (k, x));
            }
        }
        // 3. Across the warps along `axis`.
        let warps = 1usize << bits.warps.len();
        if warps > 1 {
            self.combine_warp_pairs((kind, dtype), (&bits, warps), to, &mut partials);
        }
        let indices: Vec<(usize, Reg)> = partials.iter().map(|&(row, (k, _))| (row, k)).collect();
        Self::row_results(regs, &rows.representative, &indices)
    }

    /// Step 3: the first lane along the axis of each warp writes its pairs
    /// (slot `row · warps + warp`); after a barrier every thread combines
    /// its rows' `warps` pairs in warp order.
    fn combine_warp_pairs(
        &mut self,
        (kind, dtype): (ArgKind, DType),
        (bits, warps): (&AxisBits, usize),
        to: &DistLayout,
        partials: &mut [(usize, Pair)],
    ) {
        let rows = self.coords(to);
        let len = to.shape.iter().product::<usize>() * warps;
        let [indices, values] = self.take_totals(&[DType::I32, dtype], len)[..] else {
            unreachable!("two dtypes, two allocations");
        };
        let pairs: Vec<(usize, Vec<Reg>)> = partials
            .iter()
            .map(|&(row, (k, x))| (row, vec![k, x]))
            .collect();
        let starts = self.store_warp_partials((bits, warps), &rows, &pairs, &[indices, values]);
        for ((row, acc), start) in partials.iter_mut().zip(starts) {
            let live = rows.live[*row];
            let read = |me: &mut Self, w: usize| {
                let offset = me.i32c(w as i64);
                let at = me.binary(BinaryOp::Add, start, offset);
                let k = me.read_shared(indices, DType::I32, at, live);
                (k, me.read_shared(values, dtype, at, live))
            };
            let mut pair = read(self, 0);
            for w in 1..warps {
                let next = read(self, w);
                pair = self.arg_combine(kind, dtype, pair, next);
            }
            *acc = pair;
        }
        self.release_shared(values);
        self.release_shared(indices);
    }

    /// The better of two pairs (see the module docs): a NaN beats a number,
    /// a value strictly beyond the other wins, equal values or two NaNs
    /// keep the lower index. Commutative and associative.
    fn arg_combine(&mut self, kind: ArgKind, dtype: DType, (k1, x1): Pair, (k2, x2): Pair) -> Pair {
        let beyond2 = self.strictly_beyond(kind, dtype, x1, x2);
        let beyond1 = self.strictly_beyond(kind, dtype, x2, x1);
        let either = self.binary(BinaryOp::Or, beyond1, beyond2);
        let neither_beyond =
            self.emit(ThreadOpKind::Unary(UnaryOp::Not), vec![either], DType::Bool);
        let lower = self.emit(ThreadOpKind::Cmp(CmpPred::Lt), vec![k2, k1], DType::Bool);
        let take = if dtype.is_float() {
            let n1 = self.emit(ThreadOpKind::Cmp(CmpPred::Ne), vec![x1, x1], DType::Bool);
            let n2 = self.emit(ThreadOpKind::Cmp(CmpPred::Ne), vec![x2, x2], DType::Bool);
            let any = self.binary(BinaryOp::Or, n1, n2);
            let no_nan = self.emit(ThreadOpKind::Unary(UnaryOp::Not), vec![any], DType::Bool);
            let both = self.binary(BinaryOp::And, n1, n2);
            let not1 = self.emit(ThreadOpKind::Unary(UnaryOp::Not), vec![n1], DType::Bool);
            let nan_wins = self.binary(BinaryOp::And, n2, not1);
            let value_wins = self.binary(BinaryOp::And, no_nan, beyond2);
            let equal_numbers = self.binary(BinaryOp::And, no_nan, neither_beyond);
            let equal = self.binary(BinaryOp::Or, equal_numbers, both);
            let tie_wins = self.binary(BinaryOp::And, equal, lower);
            let wins = self.binary(BinaryOp::Or, nan_wins, value_wins);
            self.binary(BinaryOp::Or, wins, tie_wins)
        } else {
            let tie_wins = self.binary(BinaryOp::And, neither_beyond, lower);
            self.binary(BinaryOp::Or, beyond2, tie_wins)
        };
        (self.select(take, k2, k1), self.select(take, x2, x1))
    }

    /// Whether `b` is strictly beyond `a` for `kind` (larger for argmax,
    /// smaller for argmin; `+0` beyond `-0` for argmax and vice versa);
    /// false where either is NaN.
    fn strictly_beyond(&mut self, kind: ArgKind, dtype: DType, a: Reg, b: Reg) -> Reg {
        let (low, high) = match kind {
            ArgKind::ArgMax => (a, b),
            ArgKind::ArgMin => (b, a),
        };
        let beyond = self.emit(ThreadOpKind::Cmp(CmpPred::Lt), vec![low, high], DType::Bool);
        if !dtype.is_float() {
            return beyond;
        }
        let zeros = self.negative_then_positive_zero(dtype, low, high);
        self.binary(BinaryOp::Or, beyond, zeros)
    }
}

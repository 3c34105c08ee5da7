//! Which vector accesses a tensor allows: the width a tile's layout moves
//! at once, whether a tensor is promised aligned for it, and the hoisted
//! runtime test that its rows are contiguous and aligned when it is not.

use super::Lowerer;
use crate::layout_assign::DistLayout;
use crate::program::{Reg, ThreadOpKind};
use tile_ir::types::TENSOR_ALIGNMENT;
use tile_ir::{BinaryOp, CmpPred, DType, Scalar};

impl Lowerer<'_> {
    /// Whether tensor parameter `param` is promised aligned
    /// (`tile_ir::TensorType::aligned`) and `width` elements of `dtype`
    /// divide the promised [`TENSOR_ALIGNMENT`] bytes: its `width`-wide
    /// accesses along rows are then contiguous and aligned with no test.
    pub(super) fn promised_aligned(&self, param: usize, width: usize, dtype: DType) -> bool {
        let promised = self
            .program
            .params
            .get(param)
            .and_then(|p| p.kind.tensor())
            .is_some_and(|t| t.aligned);
        promised && (TENSOR_ALIGNMENT / dtype.size_bytes().max(1)).is_multiple_of(width)
    }

    /// The hoisted test that `width`-wide accesses to tensor `param` (of
    /// `rank` axes) are contiguous and aligned (see [`Self::vectorized`]):
    /// the constant `true` for a tensor promised aligned.
    pub(super) fn contiguous(
        &mut self,
        param: usize,
        rank: usize,
        width: usize,
        dtype: DType,
    ) -> Reg {
        if let Some(&r) = self.contiguity.get(&(param, width)) {
            return r;
        }
        if self.promised_aligned(param, width, dtype) {
            let truth = self.constant(Scalar::Bool(true));
            self.contiguity.insert((param, width), truth);
            return truth;
        }
        let one = self.constant(Scalar::I64(1));
        let zero = self.constant(Scalar::I64(0));
        let w = self.constant(Scalar::I64(width as i64));
        let inner = self.tensor_meta(param, rank - 1, true);
        let mut ok = self.hoist(
            ThreadOpKind::Cmp(CmpPred::Eq),
            vec![inner, one],
            DType::Bool,
        );
        let multiple_of = |s: &mut Self, x: Reg, k: Reg, ok: Reg| {
            let r = s.hoist(ThreadOpKind::Binary(BinaryOp::Rem), vec![x, k], DType::I64);
            let is = s.hoist(ThreadOpKind::Cmp(CmpPred::Eq), vec![r, zero], DType::Bool);
            s.hoist(
                ThreadOpKind::Binary(BinaryOp::And),
                vec![ok, is],
                DType::Bool,
            )
        };
        for axis in 0..rank - 1 {
            let stride = self.tensor_meta(param, axis, true);
            ok = multiple_of(self, stride, w, ok);
        }
        let align = self.hoist(ThreadOpKind::TensorAlign { param }, vec![], DType::I64);
        let bytes = self.constant(Scalar::I64((width * dtype.size_bytes()) as i64));
        ok = multiple_of(self, align, bytes, ok);
        self.contiguity.insert((param, width), ok);
        ok
    }
}

/// The elements of `dtype` one access of a tile in `layout` moves at once:
/// registers `g·w .. g·w + w` of a thread hold consecutive elements along
/// the innermost axis, in at most 16 bytes. A vector covers consecutive
/// elements only if it divides both the thread's run along that axis and
/// the axis' extent (otherwise the run wraps around the tile, e.g. two
/// registers holding copies of a one-element tile), and is a power of two
/// (a vector's alignment is its size).
pub(super) fn vector_width(layout: &DistLayout, dtype: DType) -> usize {
    let inner = layout.shape.len() - 1;
    let run = layout.size_per_thread[inner];
    let extent = layout.shape[inner];
    let widest = run.min(16 / dtype.size_bytes().max(1)).max(1);
    let mut width = 1 << widest.ilog2();
    while width > 1 && (!run.is_multiple_of(width) || !extent.is_multiple_of(width)) {
        width /= 2;
    }
    width
}

#[cfg(test)]
mod tests {
    use super::vector_width;
    use crate::layout_assign::DistLayout;
    use tile_ir::DType;

    /// Runs of 3 along a row of 24 give no 3-wide vector (its alignment
    /// would be 3 elements): scalars; runs of 6 give pairs, of 8 vectors
    /// of 8 (16 bytes of f16).
    #[test]
    fn vectors_are_powers_of_two_dividing_the_run_and_the_row() {
        let width = |spt: &[usize]| {
            let layout = DistLayout::blocked_runs(&[16, 24], 4, spt).unwrap();
            vector_width(&layout, DType::F16)
        };
        assert_eq!(width(&[1, 3]), 1);
        assert_eq!(width(&[1, 6]), 2);
        assert_eq!(width(&[1, 8]), 8);
    }
}

//! Windows of partition views: `partition_view %t [S] offset(%o..)
//! extent(%n..)` sees the tensor from element `o` on, `min(dim_k − o_k,
//! n_k)` elements along axis `k` (0 past the end). Lowered, a window is a
//! base offset `Σ o_k·stride_k` (elements, added to every address of the
//! view's accesses) and its extents (which its masks and checks test
//! instead of the tensor's): the view behaves as a partition view of a
//! tensor whose element zero is the window's first. Its `w`-wide vectors
//! are aligned where the tensor's are and the base is a multiple of `w`,
//! a test added to the tensor's contiguity (known without one for an
//! aligned tensor whose window starts at a multiple of `w` along its rows:
//! a constant, `i * BLOCK`, a `multiple_of` hint; see
//! `tile_ir::divisibility`). Such a window whose rows are also a whole
//! number of vectors long (`offset`, or a `window` whose last extent is
//! the row length of a tensor promised aligned, its own or another's, or a
//! multiple of `w`) is accessed as an aligned tensor is: whole vectors,
//! with no element-by-element path.

use super::{LowerError, Lowerer};
use crate::program::{CheckKind, Reg, ThreadOpKind};
use tile_ir::{BinaryOp, CmpPred, DType, OpId, Scalar, Value};

/// A partition view's window of its tensor.
#[derive(Clone, Debug)]
pub(crate) struct Window {
    /// The element offset of the window's first element from the tensor's
    /// element zero (`i64`, uniform).
    pub(crate) base: Reg,
    /// The window's extent along each axis (`i64`, uniform).
    pub(crate) extents: Vec<Reg>,
    /// A power of two the offset along the last axis is a multiple of
    /// (`tile_ir::divisibility`).
    pub(crate) last_offset_divisor: u64,
    /// What is known of the extent along the last axis.
    pub(crate) last_extent: LastExtent,
}

/// What is known at compile time of a window's extent along its last axis,
/// `min(max(dim − o, 0), n)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LastExtent {
    /// At most the row length of tensor parameter `p` (`n` is its `dim`
    /// along the last axis; for `offset`, the viewed tensor's own).
    RowLength(usize),
    /// At most `n`, a multiple of this power of two.
    AtMostMultiple(u64),
    /// Nothing.
    Unknown,
}

impl Window {
    /// Whether the window's rows are a whole number of `width`-wide groups
    /// from a multiple of `width` on, where the viewed tensor's rows are
    /// (it is promised aligned): then a group of a row lies wholly inside
    /// the window or wholly outside. `whole_rows(p)`: whether tensor `p`'s
    /// rows are whole groups of `width` elements.
    pub(crate) fn whole_groups(&self, width: usize, whole_rows: impl Fn(usize) -> bool) -> bool {
        let w = width as u64;
        let starts_whole = self.last_offset_divisor.is_multiple_of(w);
        starts_whole
            && match self.last_extent {
                LastExtent::RowLength(p) => whole_rows(p),
                LastExtent::AtMostMultiple(n) => n.is_multiple_of(w),
                LastExtent::Unknown => false,
            }
    }
}

impl Lowerer<'_> {
    /// The window of `partition_view` op `id` over tensor `param` of `rank`
    /// axes, from its operands after the tensor (`None` for none: the
    /// whole tensor). With bounds checks on, a `window` check that every
    /// offset and extent is at least 0 comes first.
    pub(super) fn view_window(
        &mut self,
        id: OpId,
        param: usize,
        rank: usize,
        operands: &[Value],
    ) -> Result<Option<Window>, LowerError> {
        if operands.is_empty() {
            return Ok(None);
        }
        if operands.len() != rank && operands.len() != 2 * rank {
            return Err(self.invalid(id, "window operands of the wrong count"));
        }
        let mut values = Vec::new();
        for &v in operands {
            let r = self.scalar(id, v)?;
            values.push(self.cast(r, DType::I64));
        }
        let (offsets, limits) = values.split_at(rank);
        let last_offset_divisor = operands[..rank]
            .last()
            .map_or(1, |&v| self.divisibility.divisor(v));
        let last_extent = match operands.get(rank..).and_then(<[Value]>::last) {
            None => LastExtent::RowLength(param),
            Some(&n) => match self.row_length_of(n) {
                Some(p) => LastExtent::RowLength(p),
                None => match self.divisibility.divisor(n) {
                    1 => LastExtent::Unknown,
                    d => LastExtent::AtMostMultiple(d),
                },
            },
        };
        if self.bounds_checks {
            let zero = self.constant(Scalar::I64(0));
            let mut ok = self.constant(Scalar::Bool(true));
            for &v in &values {
                let nonnegative =
                    self.emit(ThreadOpKind::Cmp(CmpPred::Ge), vec![v, zero], DType::Bool);
                ok = self.and(ok, nonnegative);
            }
            let mut check = vec![ok];
            check.extend(&values);
            let op = self.check_site(id);
            self.emit_op(
                ThreadOpKind::Check {
                    kind: CheckKind::Window,
                    op,
                },
                check,
                &[],
            );
        }
        let zero = self.constant(Scalar::I64(0));
        let mut base: Option<Reg> = None;
        let mut extents = Vec::new();
        for (d, &o) in offsets.iter().enumerate() {
            let dim = self.tensor_meta(param, d, false);
            let room = self.binary(BinaryOp::Sub, dim, o);
            let room = self.binary(BinaryOp::Max, room, zero);
            extents.push(match limits.get(d) {
                Some(&n) => self.binary(BinaryOp::Min, room, n),
                None => room,
            });
            let stride = self.tensor_meta(param, d, true);
            let term = self.binary(BinaryOp::Mul, o, stride);
            base = Some(match base {
                Some(b) => self.binary(BinaryOp::Add, b, term),
                None => term,
            });
        }
        Ok(Some(Window {
            base: base.unwrap_or(zero),
            extents,
            last_offset_divisor,
            last_extent,
        }))
    }

    /// The tensor parameter whose row length `v` is: its `dim` along its
    /// last axis, or that cast to another integer type.
    fn row_length_of(&self, v: Value) -> Option<usize> {
        let op = self.func.op(self.func.defining_op(v)?);
        match (&op.kind, op.operands.as_slice()) {
            (tile_ir::OpKind::Dim { axis }, [tensor]) => match self.env.get(tensor) {
                Some(super::Lowered::Tensor { param }) => {
                    let rank = self.tensor_type(*param)?.rank;
                    (*axis + 1 == rank).then_some(*param)
                }
                _ => None,
            },
            (tile_ir::OpKind::Cast { to }, [x])
                if to.is_int() && self.func.ty(*x).dtype().is_int() =>
            {
                self.row_length_of(*x)
            }
            _ => None,
        }
    }

    /// The type of tensor parameter `param`.
    pub(super) fn tensor_type(&self, param: usize) -> Option<tile_ir::TensorType> {
        self.program.params.get(param)?.kind.tensor()
    }

    /// The extent along axis `d` of a view of tensor `param`: its window's,
    /// or the tensor's.
    pub(super) fn view_extent(&mut self, param: usize, window: Option<&Window>, d: usize) -> Reg {
        match window {
            Some(w) => w.extents[d],
            None => self.tensor_meta(param, d, false),
        }
    }

    /// The element offset `offset` (from a view's first element) from the
    /// tensor's element zero.
    pub(super) fn window_offset(&mut self, window: Option<&Window>, offset: Reg) -> Reg {
        match window {
            Some(w) => self.binary(BinaryOp::Add, w.base, offset),
            None => offset,
        }
    }

    /// The test that `width`-wide accesses through a view of tensor `param`
    /// are contiguous and aligned ([`Self::contiguous`]), and for a window
    /// that its base is a multiple of `width` elements: known where the
    /// tensor is promised aligned (every stride but the innermost a
    /// multiple of 16 bytes) and the window's last offset is a constant
    /// multiple of `width` (a window of the first `m` rows, say), else
    /// tested at run time.
    pub(super) fn view_contiguous(
        &mut self,
        (param, window): (usize, Option<&Window>),
        rank: usize,
        width: usize,
        dtype: DType,
    ) -> Reg {
        let tensor = self.contiguous(param, rank, width, dtype);
        let Some(w) = window else {
            return tensor;
        };
        let whole = w.last_offset_divisor.is_multiple_of(width as u64);
        if whole && self.promised_aligned(param, width, dtype) {
            return tensor;
        }
        let (zero, wide) = (
            self.constant(Scalar::I64(0)),
            self.constant(Scalar::I64(width as i64)),
        );
        let rest = self.binary(BinaryOp::Rem, w.base, wide);
        let aligned = self.emit(
            ThreadOpKind::Cmp(CmpPred::Eq),
            vec![rest, zero],
            DType::Bool,
        );
        self.and(tensor, aligned)
    }
}

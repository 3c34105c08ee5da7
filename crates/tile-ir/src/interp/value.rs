//! The runtime values of one program instance.

use super::error::Fault;
use crate::dtype::DType;
use crate::layout::Layout;
use crate::rules::MAX_TILE_ELEMENTS;
use crate::scalar::Scalar;
use crate::types::Type;

/// A tile: a row-major array of scalars of one dtype.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Tile {
    /// The extents, outermost first.
    pub shape: Vec<usize>,
    /// The element type.
    pub dtype: DType,
    /// The elements in row-major order (`shape.iter().product()` of them).
    pub data: Vec<Scalar>,
}

/// The number of elements of a tile of `shape`, or a fault when it exceeds
/// [`MAX_TILE_ELEMENTS`] (or overflows): the typing rules forbid such tiles.
pub(crate) fn numel(shape: &[usize]) -> Result<usize, Fault> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|&n| n <= MAX_TILE_ELEMENTS)
        .ok_or_else(|| {
            Fault::Type(format!(
                "a tile of shape {shape:?} holds more than {MAX_TILE_ELEMENTS} elements"
            ))
        })
}

impl Tile {
    /// The multi-index of row-major position `linear` in `shape`.
    pub fn unravel(mut linear: usize, shape: &[usize]) -> Vec<usize> {
        let mut index = vec![0; shape.len()];
        for axis in (0..shape.len()).rev() {
            index[axis] = linear % shape[axis];
            linear /= shape[axis];
        }
        index
    }

    /// A tile of `shape` whose element at each multi-index is `f(index)`,
    /// the indices visited in row-major order.
    pub fn build(
        shape: Vec<usize>,
        dtype: DType,
        mut f: impl FnMut(&[usize]) -> Result<Scalar, Fault>,
    ) -> Result<Tile, Fault> {
        let count = numel(&shape)?;
        let mut data = Vec::with_capacity(count);
        let mut index = vec![0; shape.len()];
        for _ in 0..count {
            data.push(f(&index)?);
            // Advance the row-major odometer.
            for axis in (0..shape.len()).rev() {
                index[axis] += 1;
                if index[axis] < shape[axis] {
                    break;
                }
                index[axis] = 0;
            }
        }
        Ok(Tile { shape, dtype, data })
    }

    /// The element at multi-index `index` (which must lie inside the shape).
    pub fn at(&self, index: &[usize]) -> Result<Scalar, Fault> {
        let inside =
            index.len() == self.shape.len() && index.iter().zip(&self.shape).all(|(i, d)| i < d);
        let linear = index
            .iter()
            .zip(&self.shape)
            .fold(0, |acc, (&i, &d)| acc * d + i);
        match self.data.get(linear) {
            Some(v) if inside => Ok(*v),
            _ => Err(Fault::Type(format!(
                "index {index:?} outside the tile {:?}",
                self.shape
            ))),
        }
    }
}

/// A tensor the program reads or writes: a tensor argument, or one element
/// of a tensor-array argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TensorRef {
    /// The argument's position among the kernel's arguments.
    pub arg: usize,
    /// The element of a tensor-array argument, `None` for a tensor.
    pub element: Option<usize>,
}

impl std::fmt::Display for TensorRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.element {
            Some(e) => write!(f, "tensor {e} of argument {}", self.arg),
            None => write!(f, "tensor argument {}", self.arg),
        }
    }
}

/// A partition view: a tensor argument, or a window of it, cut into tiles
/// of a static shape.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PartitionView {
    /// The viewed tensor.
    pub arg: TensorRef,
    /// The shape of one partition.
    pub tile: Vec<usize>,
    /// The element type.
    pub dtype: DType,
    /// The tensor coordinates of the window's first element, and the
    /// window's extents (the tensor's own for a view of the whole tensor).
    pub origin: Vec<usize>,
    pub extents: Vec<usize>,
}

/// A layout view: a tensor argument seen through a layout from a base.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LView {
    /// The viewed tensor.
    pub arg: TensorRef,
    /// The element type.
    pub dtype: DType,
    /// The layout (the one in the value's type).
    pub layout: Layout,
    /// The element offset added to every layout offset; `i128` so that no
    /// index arithmetic wraps (it saturates far outside any element space).
    pub base: i128,
    /// A masked view's extent along each top-level mode (at most the mode's
    /// size): tile element `J` is in the view when `J_k < extents_k` for
    /// every `k`. `None` for a view that is not masked: all of each mode.
    pub extents: Option<Vec<i128>>,
    /// The swizzle of its offsets, if any: element `c` is at
    /// `swizzle(base + layout(c))`.
    pub swizzle: Option<crate::layout::Swizzle>,
}

/// The value of an SSA value in one program instance.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum RtValue {
    /// A scalar.
    Scalar(Scalar),
    /// A tile.
    Tile(Tile),
    /// A tensor argument or an element of a tensor-array argument.
    Tensor(TensorRef),
    /// A tensor-array argument, by its position among the arguments.
    Tensors(usize),
    /// A partition view.
    PartitionView(PartitionView),
    /// A layout view.
    LView(LView),
}

impl RtValue {
    /// A short description for messages: `f32 scalar`, `tile [4, 8] of f16`.
    pub fn describe(&self) -> String {
        match self {
            RtValue::Scalar(s) => format!("{} scalar", s.dtype()),
            RtValue::Tile(t) => format!("tile {:?} of {}", t.shape, t.dtype),
            RtValue::Tensor(r) => r.to_string(),
            RtValue::Tensors(arg) => format!("tensor-array argument {arg}"),
            RtValue::PartitionView(v) => format!("view of tile {:?} of {}", v.tile, v.dtype),
            RtValue::LView(v) => format!("layout view {} of {}", v.layout, v.dtype),
        }
    }

    /// Whether this value has the declared type `ty` (for a tensor, only that
    /// it is a tensor: its argument was checked against the parameter).
    pub fn has_type(&self, ty: &Type) -> bool {
        match (self, ty) {
            (RtValue::Scalar(s), Type::Scalar(d)) => s.dtype() == *d,
            (RtValue::Tile(t), Type::Tile(tt)) => t.dtype == tt.dtype && t.shape == tt.shape.dims(),
            (RtValue::Tensor(_), Type::Tensor(_)) | (RtValue::Tensors(_), Type::Tensors(_)) => true,
            (RtValue::PartitionView(v), Type::PartitionView(vt)) => {
                v.dtype == vt.dtype && v.tile == vt.tile.dims()
            }
            (RtValue::LView(v), Type::LayoutView(vt)) => {
                v.dtype == vt.dtype && v.layout == vt.layout
            }
            _ => false,
        }
    }

    /// The scalar, or a type-confusion fault naming `what`.
    pub fn scalar(&self, what: &str) -> Result<Scalar, Fault> {
        match self {
            RtValue::Scalar(s) => Ok(*s),
            other => Err(Fault::Type(format!(
                "{what} must be a scalar, found {}",
                other.describe()
            ))),
        }
    }

    /// The tile, or a type-confusion fault naming `what`.
    pub fn tile(&self, what: &str) -> Result<&Tile, Fault> {
        match self {
            RtValue::Tile(t) => Ok(t),
            other => Err(Fault::Type(format!(
                "{what} must be a tile, found {}",
                other.describe()
            ))),
        }
    }

    /// The integer value of an integer scalar, or a fault naming `what`.
    pub fn integer(&self, what: &str) -> Result<i128, Fault> {
        let s = self.scalar(what)?;
        match s.to_i128() {
            Some(v) if s.dtype().is_int() => Ok(v),
            _ => Err(Fault::Type(format!(
                "{what} must be an integer scalar, found {}",
                s.dtype()
            ))),
        }
    }
}

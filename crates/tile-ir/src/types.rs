//! The types of IR values: scalars, tiles, global tensors and partition views.

use crate::dtype::DType;
use crate::layout::{Layout, Swizzle};
use std::fmt;

/// The static shape of a tile: one positive extent per axis, outermost first
/// (row-major: the last axis is contiguous in the tile's element order).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shape(pub Vec<usize>);

impl Shape {
    /// A shape with the given extents.
    pub fn new(extents: impl Into<Vec<usize>>) -> Self {
        Shape(extents.into())
    }

    /// The number of axes.
    pub fn rank(&self) -> usize {
        self.0.len()
    }

    /// The number of elements (the product of the extents).
    pub fn numel(&self) -> usize {
        self.0.iter().product()
    }

    /// The extents, outermost first.
    pub fn dims(&self) -> &[usize] {
        &self.0
    }

    /// The row-major strides of a dense tile of this shape, in elements.
    pub fn row_major_strides(&self) -> Vec<usize> {
        let mut strides = vec![1; self.rank()];
        for axis in (0..self.rank().saturating_sub(1)).rev() {
            strides[axis] = strides[axis + 1] * self.0[axis + 1];
        }
        strides
    }
}

/// Shapes print as `[128, 64]`.
impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

/// A tile: a value of static shape whose elements all have one dtype.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TileType {
    /// The extents of the tile.
    pub shape: Shape,
    /// The element type.
    pub dtype: DType,
}

/// A global tensor parameter: elements in device memory with runtime extents
/// and strides (in elements); only its rank and dtype are static.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TensorType {
    /// The element type.
    pub dtype: DType,
    /// The number of axes.
    pub rank: usize,
    /// Whether every argument is promised [aligned](TensorType::misalignment):
    /// code may then access its rows in 16-byte vectors without testing
    /// (`tensor<f32, 2, aligned>`; `#[tile_kernel(aligned(x))]`).
    pub aligned: bool,
}

/// The bytes an aligned tensor's start, row strides and row length are
/// multiples of.
pub const TENSOR_ALIGNMENT: usize = 16;

/// What an aligned tensor is, as error messages say it.
pub const ALIGNED_TENSOR: &str =
    "contiguous rows, and its start, row strides and row length multiples of 16 bytes";

impl TensorType {
    /// A tensor type with no alignment promise.
    pub fn new(dtype: DType, rank: usize) -> TensorType {
        TensorType {
            dtype,
            rank,
            aligned: false,
        }
    }

    /// Why an argument of `shape` and `strides` (in elements) whose element
    /// zero lies `offset` elements into a [`TENSOR_ALIGNMENT`]-aligned
    /// buffer breaks this type's alignment promise, if it does. An aligned
    /// tensor has contiguous rows (innermost stride 1), and its start,
    /// every other stride and its innermost extent are multiples of
    /// [`TENSOR_ALIGNMENT`] bytes (Triton's `divisibility=16` of pointers,
    /// strides and sizes). A tensor without the promise, or without
    /// elements, is never misaligned.
    pub fn misalignment(
        &self,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Option<String> {
        if !self.aligned {
            return None;
        }
        let size = self.dtype.size_bytes().max(1);
        let multiple = |elements: usize| (elements * size).is_multiple_of(TENSOR_ALIGNMENT);
        let inner = shape.len().checked_sub(1)?;
        if shape.contains(&0) {
            // No element is ever accessed.
            return None;
        }
        if strides.get(inner) != Some(&1) {
            return Some(format!(
                "its rows are not contiguous: the innermost stride is {}, not 1",
                strides.get(inner).copied().unwrap_or_default()
            ));
        }
        if let Some(&extent) = shape.get(inner).filter(|&&e| !multiple(e)) {
            return Some(format!(
                "its rows are {extent} elements ({} bytes), not a multiple of {TENSOR_ALIGNMENT} bytes",
                extent * size
            ));
        }
        for (axis, &stride) in strides[..inner].iter().enumerate() {
            if !multiple(stride.unsigned_abs()) {
                return Some(format!(
                    "the stride of axis {axis} is {stride} elements ({} bytes), not a multiple of {TENSOR_ALIGNMENT} bytes",
                    stride.unsigned_abs() * size
                ));
            }
        }
        if !multiple(offset) {
            return Some(format!(
                "its start is {} bytes into its buffer, not a multiple of {TENSOR_ALIGNMENT}",
                offset * size
            ));
        }
        None
    }
}

/// The inside of a tensor type's brackets: `f32, 2` or `f32, 2, aligned`.
impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, {}", self.dtype, self.rank)?;
        if self.aligned {
            f.write_str(", aligned")?;
        }
        Ok(())
    }
}

/// A partition view: a tensor cut into tiles of a static shape (see
/// `partition_view` in `docs/ir.md`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PartitionViewType {
    /// The element type of the viewed tensor.
    pub dtype: DType,
    /// The shape of one partition: the tile loaded or stored.
    pub tile: Shape,
}

/// A layout view: the memory of a tensor parameter seen through a static
/// CuTe layout (see "Layout views" in `docs/ir.md`). Loading it gives a tile
/// whose extents are the sizes of the layout's top-level modes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LayoutViewType {
    /// The element type of the viewed tensor.
    pub dtype: DType,
    /// The layout: natural coordinate to element offset (from the view's base).
    pub layout: Layout,
    /// Whether the view is *masked* (Mojo's `masked`): an edge tile, or a
    /// view derived from one, whose value also holds a runtime extent per
    /// top-level mode, at most the mode's size; elements past it are not in
    /// the view.
    pub masked: bool,
    /// A swizzle of the view's offsets (CuTe's `Swizzle<B,M,S>` outside
    /// the layout): the element at natural coordinate `c` is at
    /// `swizzle(base + layout(c))`.
    pub swizzle: Option<Swizzle>,
}

/// The type of an IR value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// A single value of a dtype, uniform across the program instance.
    Scalar(DType),
    /// A tile of static shape.
    Tile(TileType),
    /// A global tensor: a tensor parameter, or an element of a tensor
    /// array (`get_tensor`).
    Tensor(TensorType),
    /// An array of global tensors of one dtype and rank, each with its own
    /// extents and strides, chosen among at run time (kernel parameters
    /// only).
    Tensors(TensorType),
    /// A partition view of a tensor.
    PartitionView(PartitionViewType),
    /// A layout view of a tensor.
    LayoutView(LayoutViewType),
}

impl Type {
    /// A tile type.
    pub fn tile(shape: impl Into<Vec<usize>>, dtype: DType) -> Type {
        Type::Tile(TileType {
            shape: Shape::new(shape),
            dtype,
        })
    }

    /// The element dtype of a scalar, tile, tensor or view.
    pub fn dtype(&self) -> DType {
        match self {
            Type::Scalar(d) => *d,
            Type::Tile(t) => t.dtype,
            Type::Tensor(t) | Type::Tensors(t) => t.dtype,
            Type::PartitionView(v) => v.dtype,
            Type::LayoutView(v) => v.dtype,
        }
    }

    /// The shape of a tile, or `None` for any other type.
    pub fn tile_shape(&self) -> Option<&Shape> {
        match self {
            Type::Tile(t) => Some(&t.shape),
            _ => None,
        }
    }

    /// Whether this is a scalar or a tile (a value that ops compute with).
    pub fn is_data(&self) -> bool {
        matches!(self, Type::Scalar(_) | Type::Tile(_))
    }

    /// The same kind of value (scalar, or tile of the same shape) with another
    /// dtype; tensors and views are returned unchanged but for the dtype.
    pub fn with_dtype(&self, dtype: DType) -> Type {
        match self {
            Type::Scalar(_) => Type::Scalar(dtype),
            Type::Tile(t) => Type::Tile(TileType {
                shape: t.shape.clone(),
                dtype,
            }),
            Type::Tensor(t) => Type::Tensor(TensorType { dtype, ..*t }),
            Type::Tensors(t) => Type::Tensors(TensorType { dtype, ..*t }),
            Type::PartitionView(v) => Type::PartitionView(PartitionViewType {
                dtype,
                tile: v.tile.clone(),
            }),
            Type::LayoutView(v) => Type::LayoutView(LayoutViewType {
                dtype,
                layout: v.layout.clone(),
                masked: v.masked,
                swizzle: v.swizzle,
            }),
        }
    }
}

/// Types print as `f32`, `tile<128x64xf32>`, `tensor<f32, 2>`,
/// `tensors<f32, 2>` and `view<f32, [64, 64]>`; layout views as `lview<f32, (4,8):(8,1)>`,
/// swizzled ones as `lview<f32, Sw<1,2,3> o (4,8):(8,1)>` and masked ones
/// as `lview<f32, (4,8):(8,1), masked>`.
impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Scalar(d) => write!(f, "{d}"),
            Type::Tile(t) => {
                f.write_str("tile<")?;
                for d in t.shape.dims() {
                    write!(f, "{d}x")?;
                }
                write!(f, "{}>", t.dtype)
            }
            Type::Tensor(t) => write!(f, "tensor<{t}>"),
            Type::Tensors(t) => write!(f, "tensors<{t}>"),
            Type::PartitionView(v) => write!(f, "view<{}, {}>", v.dtype, v.tile),
            Type::LayoutView(v) => {
                write!(f, "lview<{}, ", v.dtype)?;
                if let Some(swizzle) = v.swizzle {
                    write!(f, "{swizzle} o ")?;
                }
                write!(f, "{}", v.layout)?;
                f.write_str(if v.masked { ", masked>" } else { ">" })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_promise_is_in_bytes_and_holds_for_empty_tensors() {
        let aligned = |dtype| TensorType {
            aligned: true,
            ..TensorType::new(dtype, 2)
        };
        // Rows of 8 f16 (16 bytes) 24 apart, starting 8 elements in.
        assert_eq!(aligned(DType::F16).misalignment(&[3, 8], &[24, 1], 8), None);
        assert!(aligned(DType::F16)
            .misalignment(&[3, 8], &[20, 1], 0)
            .is_some());
        assert!(aligned(DType::F64)
            .misalignment(&[3, 2], &[2, 1], 1)
            .is_some());
        assert_eq!(aligned(DType::F64).misalignment(&[3, 2], &[2, 1], 2), None);
        // No element is accessed: any layout.
        assert_eq!(aligned(DType::F32).misalignment(&[0, 3], &[3, 7], 1), None);
        // Without the promise nothing is required.
        let plain = TensorType::new(DType::F32, 2);
        assert_eq!(plain.misalignment(&[3, 3], &[3, 7], 1), None);
        assert_eq!(
            Type::Tensor(aligned(DType::F32)).to_string(),
            "tensor<f32, 2, aligned>"
        );
    }
}

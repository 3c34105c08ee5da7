//! Host tensors: the interpreter's global memory.
//!
//! A [`HostTensor`] is a strided view of little-endian elements in a byte
//! buffer, like a `tensor_span`: element `(i_0, ..., i_{n-1})` lives at
//! element offset `offset + Σ i_k · strides[k]` of `data`. Constructors
//! validate that every reachable element lies inside the buffer, so reads and
//! writes through valid indices never fail.
//!
//! The buffer is a [`HostBuffer`]: it starts on a 64-byte boundary (a cache
//! line) for the host back end's vector and streaming stores, and a tensor of
//! zeros leaves its pages untouched until first written. Constructors taking
//! a `Vec<u8>` copy it into such a buffer; [`HostTensor::from_buffer`] and
//! [`HostTensor::from_buffer_with_strides`] take one as it is.

use super::buffer::HostBuffer;
use crate::dtype::DType;
use crate::f8::{F8E4M3, F8E5M2};
use crate::mx::{F4E2M1, F6E2M3, F6E3M2, F8E8M0};
use crate::scalar::Scalar;
use half::{bf16, f16};

/// A broken invariant of a host tensor, or an access of the wrong type.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TensorError {
    /// The number of values does not match the shape.
    #[error("shape {shape:?} holds {expected} elements, found {found} values")]
    Length {
        /// The requested shape.
        shape: Vec<usize>,
        /// The product of its extents.
        expected: usize,
        /// The number of values given.
        found: usize,
    },
    /// A value or element type of the wrong dtype.
    #[error("the tensor holds {expected}, found {found}")]
    DType {
        /// The tensor's dtype.
        expected: DType,
        /// The offending dtype.
        found: DType,
    },
    /// Strides and shape of different ranks.
    #[error("{strides} strides for a shape of rank {rank}")]
    Rank {
        /// The rank of the shape.
        rank: usize,
        /// The number of strides.
        strides: usize,
    },
    /// A reachable element outside the buffer.
    #[error("shape {shape:?} with strides {strides:?} and offset {offset} reaches elements outside a buffer of {len} elements")]
    OutOfBuffer {
        /// The shape.
        shape: Vec<usize>,
        /// The strides, in elements.
        strides: Vec<isize>,
        /// The offset of element zero, in elements.
        offset: usize,
        /// The buffer's length in elements.
        len: usize,
    },
    /// A buffer whose length is not a whole number of elements.
    #[error("a buffer of {bytes} bytes is not a whole number of {dtype} elements")]
    Ragged {
        /// The buffer's length in bytes.
        bytes: usize,
        /// The element type.
        dtype: DType,
    },
    /// An index of the wrong rank or outside the extents.
    #[error("index {index:?} is outside the shape {shape:?}")]
    Index {
        /// The offending index.
        index: Vec<usize>,
        /// The tensor's shape.
        shape: Vec<usize>,
    },
}

/// A dense or strided tensor in host memory.
#[derive(Clone, Debug, PartialEq)]
pub struct HostTensor {
    dtype: DType,
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: usize,
    data: HostBuffer,
}

impl HostTensor {
    /// A row-major contiguous tensor of zeros. Its buffer is not written
    /// (see [`HostBuffer::zeroed`]).
    pub fn zeros(dtype: DType, shape: &[usize]) -> Self {
        let numel = shape.iter().product::<usize>();
        HostTensor {
            dtype,
            shape: shape.to_vec(),
            strides: row_major_strides(shape),
            offset: 0,
            data: HostBuffer::zeroed(numel * dtype.size_bytes()),
        }
    }

    /// A row-major contiguous tensor holding `values` in row-major order.
    pub fn from_vec<T: Element>(shape: &[usize], values: Vec<T>) -> Result<Self, TensorError> {
        let expected = shape.iter().product::<usize>();
        if values.len() != expected {
            return Err(TensorError::Length {
                shape: shape.to_vec(),
                expected,
                found: values.len(),
            });
        }
        let mut data = HostBuffer::zeroed(expected * T::DTYPE.size_bytes());
        T::write_le_slice(&values, &mut data);
        Ok(HostTensor {
            dtype: T::DTYPE,
            shape: shape.to_vec(),
            strides: row_major_strides(shape),
            offset: 0,
            data,
        })
    }

    /// A row-major contiguous tensor over `data` (little-endian elements),
    /// which must hold exactly the elements of `shape`. The buffer is used
    /// as it is, not copied.
    pub fn from_buffer(
        dtype: DType,
        shape: &[usize],
        data: HostBuffer,
    ) -> Result<Self, TensorError> {
        let size = dtype.size_bytes();
        if !data.len().is_multiple_of(size) {
            return Err(TensorError::Ragged {
                bytes: data.len(),
                dtype,
            });
        }
        let expected = shape.iter().product::<usize>();
        if data.len() / size != expected {
            return Err(TensorError::Length {
                shape: shape.to_vec(),
                expected,
                found: data.len() / size,
            });
        }
        Ok(HostTensor {
            dtype,
            shape: shape.to_vec(),
            strides: row_major_strides(shape),
            offset: 0,
            data,
        })
    }

    /// A row-major contiguous tensor holding `values` (all of `dtype`) in
    /// row-major order.
    pub fn from_scalars(
        dtype: DType,
        shape: &[usize],
        values: &[Scalar],
    ) -> Result<Self, TensorError> {
        let expected = shape.iter().product::<usize>();
        if values.len() != expected {
            return Err(TensorError::Length {
                shape: shape.to_vec(),
                expected,
                found: values.len(),
            });
        }
        let size = dtype.size_bytes();
        let mut data = HostBuffer::zeroed(expected * size);
        for (value, chunk) in values.iter().zip(data.chunks_exact_mut(size)) {
            check_dtype(dtype, value.dtype())?;
            value.write_le(chunk);
        }
        Ok(HostTensor {
            dtype,
            shape: shape.to_vec(),
            strides: row_major_strides(shape),
            offset: 0,
            data,
        })
    }

    /// A strided tensor over `data` (little-endian elements): element `i` is
    /// at element offset `offset + Σ i_k · strides[k]`, which must lie inside
    /// `data` for every index within `shape`. The bytes are copied into an
    /// aligned [`HostBuffer`].
    pub fn with_strides(
        dtype: DType,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
        data: Vec<u8>,
    ) -> Result<Self, TensorError> {
        Self::from_buffer_with_strides(dtype, shape, strides, offset, HostBuffer::from(data))
    }

    /// [`HostTensor::with_strides`] over a [`HostBuffer`], used as it is.
    pub fn from_buffer_with_strides(
        dtype: DType,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
        data: HostBuffer,
    ) -> Result<Self, TensorError> {
        if strides.len() != shape.len() {
            return Err(TensorError::Rank {
                rank: shape.len(),
                strides: strides.len(),
            });
        }
        let size = dtype.size_bytes();
        if !data.chunks_exact(size).remainder().is_empty() {
            return Err(TensorError::Ragged {
                bytes: data.len(),
                dtype,
            });
        }
        let len = data.len() / size;
        let out_of_buffer = || TensorError::OutOfBuffer {
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            offset,
            len,
        };
        if shape.iter().all(|&e| e > 0) {
            // The lowest and highest reachable offsets, in i128 (no overflow).
            let mut low = offset as i128;
            let mut high = offset as i128;
            for (&extent, &stride) in shape.iter().zip(strides) {
                let span = (extent as i128 - 1) * stride as i128;
                low += span.min(0);
                high += span.max(0);
            }
            if low < 0 || high >= len as i128 {
                return Err(out_of_buffer());
            }
        }
        Ok(HostTensor {
            dtype,
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            offset,
            data,
        })
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The extents, outermost first.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The strides, in elements.
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// The element offset of element zero in the buffer.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The underlying buffer of little-endian elements; it starts on a
    /// [`HostBuffer::ALIGN`]-byte boundary.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The underlying buffer, for back ends that write elements in place
    /// (every reachable element is inside it). A `bool` element reads as
    /// `true` for any non-zero byte.
    pub fn data_mut(&mut self) -> &mut [u8] {
        &mut self.data
    }

    /// The number of logical elements (the product of the extents).
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// The element offset in the buffer of the element at `index`, or `None`
    /// when `index` has the wrong rank or lies outside the shape.
    pub fn element_offset(&self, index: &[usize]) -> Option<usize> {
        if index.len() != self.shape.len() {
            return None;
        }
        let mut at = self.offset as i128;
        for ((&i, &extent), &stride) in index.iter().zip(&self.shape).zip(&self.strides) {
            if i >= extent {
                return None;
            }
            at += i as i128 * stride as i128;
        }
        usize::try_from(at).ok()
    }

    /// The element at `index`, or `None` outside the shape.
    pub fn get(&self, index: &[usize]) -> Option<Scalar> {
        let at = self.element_offset(index)?;
        self.read(at)
    }

    /// Writes the element at `index`; `value` must have the tensor's dtype.
    pub fn set(&mut self, index: &[usize], value: Scalar) -> Result<(), TensorError> {
        check_dtype(self.dtype, value.dtype())?;
        let at = self
            .element_offset(index)
            .ok_or_else(|| TensorError::Index {
                index: index.to_vec(),
                shape: self.shape.clone(),
            })?;
        self.write(at, value).ok_or_else(|| TensorError::Index {
            index: index.to_vec(),
            shape: self.shape.clone(),
        })
    }

    /// The element at buffer element offset `at`, or `None` past the buffer.
    pub(crate) fn read(&self, at: usize) -> Option<Scalar> {
        let size = self.dtype.size_bytes();
        Scalar::read_le(self.dtype, self.data.get(at.checked_mul(size)?..)?)
    }

    /// Writes `value` at buffer element offset `at`, or returns `None` past
    /// the buffer.
    pub(crate) fn write(&mut self, at: usize, value: Scalar) -> Option<()> {
        let size = self.dtype.size_bytes();
        value.write_le(self.data.get_mut(at.checked_mul(size)?..)?)
    }

    /// Every element in logical row-major order.
    pub fn to_scalars(&self) -> Vec<Scalar> {
        let mut out = Vec::with_capacity(self.numel());
        for_each_index(&self.shape, |index| {
            if let Some(v) = self.get(index) {
                out.push(v);
            }
        });
        out
    }

    /// Every element in logical row-major order, as `T` (which must be the
    /// tensor's element type).
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>, TensorError> {
        check_dtype(self.dtype, T::DTYPE)?;
        Ok(self
            .to_scalars()
            .into_iter()
            .filter_map(T::from_scalar)
            .collect())
    }
}

/// Calls `visit` with every index of `shape` in row-major order (none when an
/// extent is zero; once, with `[]`, for rank 0).
pub(crate) fn for_each_index(shape: &[usize], mut visit: impl FnMut(&[usize])) {
    if shape.contains(&0) {
        return;
    }
    let mut index = vec![0; shape.len()];
    loop {
        visit(&index);
        let mut axis = shape.len();
        loop {
            if axis == 0 {
                return;
            }
            axis -= 1;
            index[axis] += 1;
            if index[axis] < shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
}

fn row_major_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![1isize; shape.len()];
    for axis in (0..shape.len().saturating_sub(1)).rev() {
        strides[axis] = strides[axis + 1].saturating_mul(shape[axis + 1] as isize);
    }
    strides
}

fn check_dtype(expected: DType, found: DType) -> Result<(), TensorError> {
    if expected == found {
        Ok(())
    } else {
        Err(TensorError::DType { expected, found })
    }
}

/// A Rust type that is the element type of one [`DType`].
pub trait Element: Copy {
    /// The dtype of this element type.
    const DTYPE: DType;
    /// The value as a [`Scalar`] of [`Self::DTYPE`].
    fn to_scalar(self) -> Scalar;
    /// The value of a [`Scalar`] of [`Self::DTYPE`], or `None` for another
    /// dtype.
    fn from_scalar(value: Scalar) -> Option<Self>;

    /// Writes `values` little-endian, one after another, into `bytes`: the
    /// bytes a buffer of them holds. (The element types of this crate do so
    /// without going through [`Scalar`]s.)
    ///
    /// # Panics
    ///
    /// Panics when `bytes` is not exactly `values.len()` elements long.
    fn write_le_slice(values: &[Self], bytes: &mut [u8]) {
        let size = Self::DTYPE.size_bytes();
        assert_eq!(
            bytes.len(),
            values.len() * size,
            "bytes for {} {} elements",
            values.len(),
            Self::DTYPE
        );
        for (value, chunk) in values.iter().zip(bytes.chunks_exact_mut(size)) {
            value.to_scalar().write_le(chunk);
        }
    }
}

macro_rules! element {
    ($($ty:ty => $variant:ident, $le_bytes:expr);* $(;)?) => {$(
        impl Element for $ty {
            const DTYPE: DType = DType::$variant;
            fn to_scalar(self) -> Scalar {
                Scalar::$variant(self)
            }
            fn from_scalar(value: Scalar) -> Option<Self> {
                match value {
                    Scalar::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn write_le_slice(values: &[Self], bytes: &mut [u8]) {
                const SIZE: usize = std::mem::size_of::<$ty>();
                assert_eq!(
                    bytes.len(),
                    values.len() * SIZE,
                    "bytes for {} {} elements",
                    values.len(),
                    Self::DTYPE,
                );
                let le_bytes: fn($ty) -> [u8; SIZE] = $le_bytes;
                for (&value, chunk) in values.iter().zip(bytes.chunks_exact_mut(SIZE)) {
                    chunk.copy_from_slice(&le_bytes(value));
                }
            }
        }
    )*};
}

element!(
    bool => Bool, |v| [u8::from(v)];
    i8 => I8, i8::to_le_bytes;
    i16 => I16, i16::to_le_bytes;
    i32 => I32, i32::to_le_bytes;
    i64 => I64, i64::to_le_bytes;
    u8 => U8, u8::to_le_bytes;
    u16 => U16, u16::to_le_bytes;
    u32 => U32, u32::to_le_bytes;
    u64 => U64, u64::to_le_bytes;
    f16 => F16, f16::to_le_bytes;
    bf16 => BF16, bf16::to_le_bytes;
    f32 => F32, f32::to_le_bytes;
    f64 => F64, f64::to_le_bytes;
    F8E4M3 => F8E4M3, |v| [v.to_bits()];
    F8E5M2 => F8E5M2, |v| [v.to_bits()];
    F4E2M1 => F4E2M1, |v| [v.to_bits()];
    F6E2M3 => F6E2M3, |v| [v.to_bits()];
    F6E3M2 => F6E3M2, |v| [v.to_bits()];
    F8E8M0 => F8E8M0, |v| [v.to_bits()];
);

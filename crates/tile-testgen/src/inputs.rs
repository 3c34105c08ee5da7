//! Deterministic inputs for tests of every stage: tensors of known values,
//! byte images of arguments, layouts from text and kernel parameters.

use tile_ir::builder::Builder;
use tile_ir::interp::{Arg, HostTensor};
use tile_ir::layout::Layout;
use tile_ir::{DType, Scalar, TensorType, Type, Value};

/// Deterministic values in [-2, 2) from a seed (an LCG; no dependency).
pub fn values(seed: u64, n: usize) -> Vec<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0
        })
        .collect()
}

/// An f32 tensor of `shape` with [`values`] of `seed`.
pub fn tensor(seed: u64, shape: &[usize]) -> Arg {
    let n = shape.iter().product();
    Arg::Tensor(HostTensor::from_vec(shape, values(seed, n)).unwrap())
}

/// A `rows × cols` matrix of `dtype` with [`values`] of `seed`, its rows
/// `stride` elements apart (`stride ≥ cols`: padded rows, e.g. to whole
/// 16-byte chunks).
pub fn padded_rows(seed: u64, rows: usize, cols: usize, stride: usize, dtype: DType) -> Arg {
    let size = dtype.size_bytes();
    let mut bytes = vec![0u8; rows * stride * size];
    for (i, v) in values(seed, rows * stride).into_iter().enumerate() {
        let element = tile_ir::eval::cast(Scalar::F32(v), dtype);
        element
            .write_le(&mut bytes[i * size..])
            .expect("room for the element");
    }
    let strides = [stride as isize, 1];
    Arg::Tensor(
        HostTensor::with_strides(dtype, &[rows, cols], &strides, 0, bytes)
            .expect("the rows fit the buffer"),
    )
}

/// A tensor of `dtype` and `shape` with [`values`] of `seed` cast to it.
pub fn tensor_of(seed: u64, shape: &[usize], dtype: DType) -> Arg {
    let n = shape.iter().product();
    let scalars: Vec<Scalar> = values(seed, n)
        .into_iter()
        .map(|v| tile_ir::eval::cast(Scalar::F32(v), dtype))
        .collect();
    Arg::Tensor(HostTensor::from_scalars(dtype, shape, &scalars).unwrap())
}

/// An f32 tensor of `shape` holding `0.5·i − 3` at linear index `i`.
pub fn iota(shape: &[usize]) -> Arg {
    let n: usize = shape.iter().product();
    Arg::Tensor(
        HostTensor::from_vec(shape, (0..n).map(|i| i as f32 * 0.5 - 3.0).collect()).unwrap(),
    )
}

/// An f32 tensor of `shape` holding zeros.
pub fn zeros(shape: &[usize]) -> Arg {
    let n: usize = shape.iter().product();
    Arg::Tensor(HostTensor::from_vec(shape, vec![0.0f32; n]).unwrap())
}

/// The number of blocks of `b` covering `n`.
pub fn blocks(n: usize, b: usize) -> u32 {
    n.div_ceil(b) as u32
}

/// Every argument's bytes (a tensor's whole buffer, gaps included).
pub fn bytes(args: &[Arg]) -> Vec<Vec<u8>> {
    args.iter()
        .map(|a| match a {
            Arg::Tensor(t) => t.data().to_vec(),
            Arg::Tensors(ts) => ts.iter().flat_map(|t| t.data().to_vec()).collect(),
            Arg::Scalar(s) => s.to_bits().to_le_bytes().to_vec(),
        })
        .collect()
}

/// A layout from its text form.
pub fn layout(text: &str) -> Layout {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e:?}"))
}

/// A new f32 tensor parameter of `rank` axes.
pub fn f32_tensor(b: &mut Builder, name: &str, rank: usize) -> Value {
    b.param(name, Type::Tensor(TensorType::new(DType::F32, rank)))
}

/// A tensor array of 1-D f32 tensors of `lengths`, tensor `g` holding
/// `i + 100·g + seed` at index `i` (every value distinct across the array).
pub fn f32_vectors(lengths: &[usize], seed: usize) -> Arg {
    Arg::Tensors(
        lengths
            .iter()
            .enumerate()
            .map(|(g, &n)| {
                let values = (0..n).map(|i| (i + g * 100 + seed) as f32).collect();
                HostTensor::from_vec(&[n], values).expect("a vector")
            })
            .collect(),
    )
}

//! Helpers shared by the interpreter tests: whole-tile kernels built with the
//! builder, and running them on host tensors.
#![allow(dead_code)] // each test file uses a different subset

use rand::{rngs::SmallRng, Rng};
use tile_ir::builder::{BuildError, Builder};
use tile_ir::interp::{run, Arg, HostTensor, InterpError};
use tile_ir::{DType, Function, Scalar, TensorType, Type, Value};

/// The type of a tensor parameter.
pub fn tensor_ty(dtype: DType, rank: usize) -> Type {
    Type::Tensor(TensorType::new(dtype, rank))
}

/// One `i32` zero constant per axis: the index of a tensor's first partition.
pub fn zero_index(b: &mut Builder, rank: usize) -> Result<Vec<Value>, BuildError> {
    (0..rank).map(|_| b.constant(Scalar::I32(0))).collect()
}

/// A whole-tile kernel, its output shape and dtype.
pub struct MapKernel {
    /// The kernel: params `in0, in1, ...` then `out`.
    pub func: Function,
    /// The shape of the output tensor (a scalar result is stored as `[1]`).
    pub out_shape: Vec<usize>,
    /// The output dtype.
    pub out_dtype: DType,
}

/// A kernel that loads each input as one tile of its tensor's full shape,
/// applies `f`, and stores the result as one tile of `out`.
pub fn map_kernel(
    inputs: &[(&[usize], DType)],
    f: impl FnOnce(&mut Builder, &[Value]) -> Result<Value, BuildError>,
) -> MapKernel {
    let mut b = Builder::new("map");
    let params: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, (shape, dtype))| b.param(format!("in{i}"), tensor_ty(*dtype, shape.len())))
        .collect();
    let mut tiles = Vec::new();
    for (&param, (shape, _)) in params.iter().zip(inputs) {
        let view = b.partition_view(param, shape).unwrap();
        let index = zero_index(&mut b, shape.len()).unwrap();
        tiles.push(b.load(view, &index).unwrap());
    }
    let mut result = f(&mut b, &tiles).unwrap();
    if let Type::Scalar(_) = b.ty(result) {
        result = b.broadcast(result, &[1]).unwrap();
    }
    let (out_shape, out_dtype) = match b.ty(result) {
        Type::Tile(t) => (t.shape.dims().to_vec(), t.dtype),
        other => panic!("a map kernel must produce a tile, found {other}"),
    };
    let out = b.param("out", tensor_ty(out_dtype, out_shape.len()));
    let view = b.partition_view(out, &out_shape).unwrap();
    let index = zero_index(&mut b, out_shape.len()).unwrap();
    b.store(result, view, &index).unwrap();
    MapKernel {
        func: b.finish().unwrap(),
        out_shape,
        out_dtype,
    }
}

/// Runs a map kernel on one program and returns its output tensor.
pub fn run_map(kernel: &MapKernel, inputs: Vec<HostTensor>) -> Result<HostTensor, InterpError> {
    let mut args: Vec<Arg> = inputs.into_iter().map(Arg::Tensor).collect();
    args.push(Arg::Tensor(HostTensor::zeros(
        kernel.out_dtype,
        &kernel.out_shape,
    )));
    run(&kernel.func, [1, 1, 1], &mut args)?;
    match args.pop() {
        Some(Arg::Tensor(t)) => Ok(t),
        _ => panic!("the output argument disappeared"),
    }
}

/// `f(x)` elementwise over a tile of `shape`, through a map kernel.
pub fn apply(
    x: &HostTensor,
    f: impl FnOnce(&mut Builder, Value) -> Result<Value, BuildError>,
) -> HostTensor {
    let kernel = map_kernel(&[(x.shape(), x.dtype())], |b, v| f(b, v[0]));
    run_map(&kernel, vec![x.clone()]).unwrap()
}

/// `n` random `f32` values in `[-4, 4)`.
pub fn random_f32(rng: &mut SmallRng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.gen_range(-4.0..4.0)).collect()
}

/// `n` random `i32` values in `[-100, 100)`.
pub fn random_i32(rng: &mut SmallRng, n: usize) -> Vec<i32> {
    (0..n).map(|_| rng.gen_range(-100..100)).collect()
}

/// A tensor of `f32` values in row-major order.
pub fn f32_tensor(shape: &[usize], values: Vec<f32>) -> HostTensor {
    HostTensor::from_vec(shape, values).unwrap()
}

/// The row-major index of `index` in `shape`.
pub fn linear(index: &[usize], shape: &[usize]) -> usize {
    index.iter().zip(shape).fold(0, |acc, (&i, &d)| acc * d + i)
}

/// Every multi-index of `shape` in row-major order.
pub fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let numel: usize = shape.iter().product();
    (0..numel)
        .map(|mut l| {
            let mut index = vec![0; shape.len()];
            for axis in (0..shape.len()).rev() {
                index[axis] = l % shape[axis];
                l /= shape[axis];
            }
            index
        })
        .collect()
}

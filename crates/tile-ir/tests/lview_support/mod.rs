//! Helpers of the layout-view tests: run a text kernel (after checking that
//! it verifies and that printing it round-trips) over f32 tensors.

#![allow(dead_code)]

use tile_ir::interp::{run, Arg, HostTensor, InterpError};
use tile_ir::text::parse_function;
use tile_ir::verify;

/// Parses, verifies and round-trips `src`, then runs it on one program over
/// `args`, returning the arguments after the run.
pub fn run_text(src: &str, mut args: Vec<Arg>) -> Result<Vec<Arg>, InterpError> {
    let func = parse_function(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    verify::verify(&func).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let printed = func.to_string();
    let again = parse_function(&printed).unwrap_or_else(|e| panic!("{e}\n{printed}"));
    assert_eq!(again.to_string(), printed);
    run(&func, [1, 1, 1], &mut args)?;
    Ok(args)
}

/// A dense row-major f32 tensor.
pub fn tensor(shape: &[usize], values: Vec<f32>) -> Arg {
    Arg::Tensor(HostTensor::from_vec(shape, values).unwrap())
}

/// A dense row-major f32 tensor holding 0, 1, 2, ...
pub fn iota(shape: &[usize]) -> Arg {
    let n = shape.iter().product::<usize>();
    tensor(shape, (0..n).map(|i| i as f32).collect())
}

/// A zero f32 tensor.
pub fn zeros(shape: &[usize]) -> Arg {
    tensor(shape, vec![0.0; shape.iter().product()])
}

/// The elements of tensor argument `i`, row-major.
pub fn values(args: &[Arg], i: usize) -> Vec<f32> {
    match &args[i] {
        Arg::Tensor(t) => t.to_vec::<f32>().unwrap(),
        other => panic!("argument {i} is {other:?}"),
    }
}

/// The compact row-major layout of `shape` in CuTe text: `(2,3):(3,1)`.
pub fn row_major(shape: &[usize]) -> String {
    let mut strides = vec![1; shape.len()];
    for k in (0..shape.len().saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * shape[k + 1];
    }
    let join = |v: &[usize]| v.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    format!("({}):({})", join(shape), join(&strides))
}

/// Runs a kernel that views a 1-D tensor holding `0, 1, ..., len-1` through
/// `layout`, derives the view `%r` with `ops` (text lines that may use `%v`
/// and the i32 constants `%c0`..`%c3`), loads it as a tile of `shape` and
/// stores it densely; returns the stored tile, row-major. Since every source
/// element is its own offset, the tile holds the offsets the view reads.
pub fn offsets_read(
    len: usize,
    layout: &str,
    ops: &str,
    shape: &[usize],
) -> Result<Vec<f32>, InterpError> {
    let dst = row_major(shape);
    let dims = shape.iter().map(|d| format!("{d}x")).collect::<String>();
    let src = format!(
        "kernel @k(%src: tensor<f32, 1>, %dst: tensor<f32, 1>) {{
  %c0 = constant 0 : i32
  %c1 = constant 1 : i32
  %c2 = constant 2 : i32
  %c3 = constant 3 : i32
  %v = layout_view %src <{layout}> : lview<f32, {layout}>
{ops}
  %x = lview_load %r : tile<{dims}f32>
  %w = layout_view %dst <{dst}> : lview<f32, {dst}>
  lview_store %x, %w
}}"
    );
    let n = shape.iter().product();
    let out = run_text(&src, vec![iota(&[len]), zeros(&[n])])?;
    Ok(values(&out, 1))
}

/// Every row-major multi-index of `shape`, in order.
pub fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let n: usize = shape.iter().product();
    (0..n)
        .map(|mut linear| {
            let mut index = vec![0; shape.len()];
            for k in (0..shape.len()).rev() {
                index[k] = linear % shape[k];
                linear /= shape[k];
            }
            index
        })
        .collect()
}

/// `f` at every row-major multi-index of `shape`, as f32.
pub fn dense(shape: &[usize], f: impl Fn(&[usize]) -> usize) -> Vec<f32> {
    indices(shape).iter().map(|i| f(i) as f32).collect()
}

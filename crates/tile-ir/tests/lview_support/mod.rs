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

/// A kernel `@k(%src: tensor<f32, 1>, %dst: tensor<f32, 1>)` that builds the
/// view `%v` of `%src` with `view_ops` (lines ending in the view `%r` of
/// type `ty`), loads it and stores the tile to `%dst` through a row-major
/// layout view of `dst_layout`.
pub fn copy_kernel(src_layout: &str, view_ops: &str, dst_layout: &str, tile: &str) -> String {
    format!(
        "kernel @k(%src: tensor<f32, 1>, %dst: tensor<f32, 1>) {{
  %v = layout_view %src <{src_layout}> : lview<f32, {src_layout}>
{view_ops}
  %x = lview_load %r : {tile}
  %w = layout_view %dst <{dst_layout}> : lview<f32, {dst_layout}>
  lview_store %x, %w
}}"
    )
}

//! Launching kernels on the CPU device, and every launch error with its
//! message.

use tile_ir::samples;
use tile_runtime::{launch, Device, Error, KernelSpec, LaunchArg};

/// A kernel spec for an IR text built at run time (tests only: the macro
/// embeds `&'static str`s).
fn spec(name: &'static str, ir: String) -> KernelSpec {
    KernelSpec::without_images(name, "test", Box::leak(ir.into_boxed_str()), 4)
}

fn vector_add(block: usize) -> KernelSpec {
    spec(
        "vector_add",
        samples::vector_add(block).unwrap().to_string(),
    )
}

#[test]
fn vector_add_on_the_cpu_device() {
    let dev = Device::cpu();
    assert_eq!(dev.to_string(), "cpu");
    let n = 1000;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let ys: Vec<f32> = (0..n).map(|i| 0.5 * i as f32).collect();
    let x = dev.tensor_from_slice(&xs, &[n]).unwrap();
    let y = dev.tensor_from_slice(&ys, &[n]).unwrap();
    let mut out = dev.zeros::<f32>(&[n]).unwrap();
    let kernel = vector_add(128);
    let grid = [n.div_ceil(128) as u32, 1, 1];
    launch(
        &dev,
        &kernel,
        grid,
        &mut [(&x).into(), (&y).into(), (&mut out).into()],
    )
    .unwrap();
    let want: Vec<f32> = xs.iter().zip(&ys).map(|(a, b)| a + b).collect();
    assert_eq!(out.to_vec().unwrap(), want);
    // A second launch reuses the loaded module and gives the same result.
    launch(
        &dev,
        &kernel,
        grid,
        &mut [(&x).into(), (&y).into(), (&mut out).into()],
    )
    .unwrap();
    assert_eq!(out.to_vec().unwrap(), want);
}

#[test]
fn layernorm_takes_a_scalar_argument() {
    let dev = Device::cpu();
    let (rows, cols) = (3, 5);
    let x = dev.tensor_from_slice(&[1.0f32; 15], &[rows, cols]).unwrap();
    let w = dev.tensor_from_slice(&[2.0f32; 5], &[cols]).unwrap();
    let b = dev.tensor_from_slice(&[0.5f32; 5], &[cols]).unwrap();
    let mut out = dev.zeros::<f32>(&[rows, cols]).unwrap();
    let kernel = spec("layernorm", samples::layernorm(2, 8).unwrap().to_string());
    let mut args = [
        (&x).into(),
        (&w).into(),
        (&b).into(),
        (&mut out).into(),
        LaunchArg::scalar(1e-5f32),
    ];
    launch(&dev, &kernel, [2, 1, 1], &mut args).unwrap();
    // Constant rows normalize to 0, so the output is the bias.
    assert_eq!(out.to_vec().unwrap(), vec![0.5f32; 15]);
}

fn expect_err(result: Result<(), Error>) -> String {
    result.unwrap_err().to_string()
}

#[test]
fn wrong_number_of_arguments() {
    let dev = Device::cpu();
    let x = dev.zeros::<f32>(&[4]).unwrap();
    let msg = expect_err(launch(&dev, &vector_add(4), [1, 1, 1], &mut [(&x).into()]));
    assert_eq!(
        msg,
        "kernel `vector_add` takes 3 arguments (x: tensor<f32, 1>, y: tensor<f32, 1>, out: tensor<f32, 1>), found 1"
    );
}

#[test]
fn wrong_dtype_names_the_argument_and_device() {
    let dev = Device::cpu();
    let x = dev.zeros::<f32>(&[4]).unwrap();
    let y = dev.zeros::<half::f16>(&[4]).unwrap();
    let mut out = dev.zeros::<f32>(&[4]).unwrap();
    let msg = expect_err(launch(
        &dev,
        &vector_add(4),
        [1, 1, 1],
        &mut [(&x).into(), (&y).into(), (&mut out).into()],
    ));
    assert_eq!(
        msg,
        "kernel `vector_add`, argument `y` on device cpu: expected &tensor<f32, 1> or &mut tensor<f32, 1>, found &tensor<f16, 1>"
    );
}

#[test]
fn wrong_rank_names_the_argument() {
    let dev = Device::cpu();
    let x = dev.zeros::<f32>(&[2, 2]).unwrap();
    let y = dev.zeros::<f32>(&[4]).unwrap();
    let mut out = dev.zeros::<f32>(&[4]).unwrap();
    let msg = expect_err(launch(
        &dev,
        &vector_add(4),
        [1, 1, 1],
        &mut [(&x).into(), (&y).into(), (&mut out).into()],
    ));
    assert_eq!(
        msg,
        "kernel `vector_add`, argument `x` on device cpu: expected &tensor<f32, 1> or &mut tensor<f32, 1>, found &tensor<f32, 2>"
    );
}

#[test]
fn a_written_tensor_must_be_passed_mutably() {
    let dev = Device::cpu();
    let x = dev.zeros::<f32>(&[4]).unwrap();
    let out = dev.zeros::<f32>(&[4]).unwrap();
    let msg = expect_err(launch(
        &dev,
        &vector_add(4),
        [1, 1, 1],
        &mut [(&x).into(), (&x).into(), (&out).into()],
    ));
    assert_eq!(
        msg,
        "kernel `vector_add`, argument `out` on device cpu: expected &mut tensor<f32, 1> (the kernel writes it), found &tensor<f32, 1>"
    );
}

#[test]
fn a_scalar_of_the_wrong_dtype() {
    let dev = Device::cpu();
    let x = dev.zeros::<f32>(&[1, 4]).unwrap();
    let w = dev.zeros::<f32>(&[4]).unwrap();
    let mut out = dev.zeros::<f32>(&[1, 4]).unwrap();
    let kernel = spec("layernorm", samples::layernorm(1, 4).unwrap().to_string());
    let mut args = [
        (&x).into(),
        (&w).into(),
        (&w).into(),
        (&mut out).into(),
        LaunchArg::scalar(1e-5f64),
    ];
    assert_eq!(
        expect_err(launch(&dev, &kernel, [1, 1, 1], &mut args)),
        "kernel `layernorm`, argument `eps` on device cpu: expected f32, found f64"
    );
}

#[test]
fn programs_along_an_axis_the_kernel_never_reads_are_refused() {
    let dev = Device::cpu();
    let x = dev.tensor_from_slice(&[1.0f32; 8], &[8]).unwrap();
    let mut out = dev.zeros::<f32>(&[8]).unwrap();
    let msg = expect_err(launch(
        &dev,
        &vector_add(4),
        [2, 3, 1],
        &mut [(&x).into(), (&x).into(), (&mut out).into()],
    ));
    assert_eq!(
        msg,
        "kernel `vector_add`: the grid [2, 3, 1] has 3 programs along axis 1, but the kernel never reads `program_id(1)`, so they would all do the same work; use 1 there"
    );
    assert_eq!(out.to_vec().unwrap(), [0.0; 8], "nothing ran");
    let args = &mut [(&x).into(), (&x).into(), (&mut out).into()];
    launch(&dev, &vector_add(4), [2, 1, 1], args).unwrap();
    assert_eq!(out.to_vec().unwrap(), [2.0; 8]);
}

#[test]
fn an_empty_grid_runs_nothing_once_its_arguments_are_checked() {
    let dev = Device::cpu();
    let x = dev.tensor_from_slice(&[1.0f32; 4], &[4]).unwrap();
    let mut out = dev.zeros::<f32>(&[4]).unwrap();
    for grid in [[0, 1, 1], [1, 0, 1], [1, 1, 0]] {
        let args = &mut [(&x).into(), (&x).into(), (&mut out).into()];
        launch(&dev, &vector_add(4), grid, args).unwrap();
    }
    assert_eq!(out.to_vec().unwrap(), [0.0; 4], "nothing ran");
    // The arguments are still checked.
    let msg = expect_err(launch(
        &dev,
        &vector_add(4),
        [0, 1, 1],
        &mut [(&x).into(), (&mut out).into()],
    ));
    assert!(msg.contains("takes 3 arguments"), "{msg}");
}

#[test]
fn an_out_of_bounds_access_is_an_error_and_writes_nothing() {
    let dev = Device::cpu();
    let ir = r#"kernel @copy(%x: tensor<f32, 1>, %out: tensor<f32, 1>) {
  %0 = program_id 0 : i32
  %1 = partition_view %x [4] : view<f32, [4]>
  %2 = partition_view %out [4] : view<f32, [4]>
  %3 = load %1[%0] : tile<4xf32> loc("tests/copy.rs":5:40, "x.load(..)")
  store %3, %2[%0]
}"#;
    let kernel = spec("copy", ir.to_string());
    let x = dev.tensor_from_slice(&[1.0f32; 6], &[6]).unwrap();
    let mut out = dev.zeros::<f32>(&[6]).unwrap();
    let msg = expect_err(launch(
        &dev,
        &kernel,
        [2, 1, 1],
        &mut [(&x).into(), (&mut out).into()],
    ));
    assert_eq!(
        msg,
        "kernel `copy` failed on device cpu: program (1, 0, 0): `x.load(..)` at tests/copy.rs:5:40 (`%3 = load %1, %0`, a view of `x`): partition [1] (tile [4]) is partially outside the tensor of extents [6]: element [6] is out of bounds (use the masked form)"
    );
    assert_eq!(out.to_vec().unwrap(), vec![0.0; 6]);
}

#[test]
fn an_invalid_module_is_a_load_error() {
    let dev = Device::cpu();
    let kernel = spec(
        "broken",
        "kernel @broken() {\n  %0 = program_id 7 : i32\n}".to_string(),
    );
    assert_eq!(
        expect_err(launch(&dev, &kernel, [1, 1, 1], &mut [])),
        "kernel `broken` (test) could not be loaded on device cpu: verifier: in kernel `broken`, op `%0 = program_id`: the grid axis must be 0, 1 or 2, found 7"
    );
}

#[test]
fn tensor_creation_errors() {
    let dev = Device::cpu();
    assert_eq!(
        dev.tensor_from_slice(&[1.0f32; 5], &[2, 3])
            .unwrap_err()
            .to_string(),
        "tensor of shape [2, 3] needs 6 elements, found 5 (device cpu)"
    );
    assert_eq!(
        dev.zeros::<f32>(&[]).unwrap_err().to_string(),
        "invalid tensor of shape [] on device cpu: a tensor needs at least one axis"
    );
    assert_eq!(
        dev.zeros::<f32>(&[1 << 31]).unwrap_err().to_string(),
        "invalid tensor of shape [2147483648] on device cpu: axis 0 exceeds the largest extent a kernel indexes, 2147483647"
    );
}

#[test]
fn a_tensor_written_through_a_layout_view_must_be_passed_mutably() {
    let dev = Device::cpu();
    let ir = "kernel @fill(%out: tensor<f32, 1>) {
  %0 = layout_view %out <(4):(1)> : lview<f32, (4):(1)>
  %1 = full 1.0 : tile<4xf32>
  lview_store %1, %0
}";
    let kernel = spec("fill", ir.to_string());
    let out = dev.zeros::<f32>(&[4]).unwrap();
    assert_eq!(
        expect_err(launch(&dev, &kernel, [1, 1, 1], &mut [(&out).into()])),
        "kernel `fill`, argument `out` on device cpu: expected &mut tensor<f32, 1> (the kernel writes it), found &tensor<f32, 1>"
    );
    let mut out = out;
    launch(&dev, &kernel, [1, 1, 1], &mut [(&mut out).into()]).unwrap();
    assert_eq!(out.to_vec().unwrap(), vec![1.0; 4]);
}

#[test]
fn a_tensor_written_by_atomics_alone_must_be_passed_mutably() {
    let dev = Device::cpu();
    let ir = "\
kernel @count(%hist: tensor<i32, 1>) {
  %0 = iota : tile<4xi32>
  %1 = full 1 : tile<4xi32>
  %2 = full true : tile<4xbool>
  %3 = atomic add relaxed gpu %hist[%0], %1, %2 : tile<4xi32>
}";
    let hist = dev.zeros::<i32>(&[4]).unwrap();
    let msg = expect_err(launch(
        &dev,
        &spec("count", ir.to_string()),
        [1, 1, 1],
        &mut [(&hist).into()],
    ));
    assert_eq!(
        msg,
        "kernel `count`, argument `hist` on device cpu: expected &mut tensor<i32, 1> (the kernel writes it), found &tensor<i32, 1>"
    );
}

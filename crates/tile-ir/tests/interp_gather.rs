//! `gather`: loads at index tiles (a stencil's shifted reads, a 2-D
//! transpose), the mask and its other values, the text form and the
//! errors.

use tile_ir::interp::{run, Arg, HostTensor, InterpError};
use tile_ir::text::parse_function;
use tile_ir::verify;
use tile_ir::DType;

/// Each program sums its 8 elements with both neighbours, reading
/// `other` (-100) past the tensor's ends.
const STENCIL: &str = "
kernel @stencil(%x: tensor<f32, 1>, %y: tensor<f32, 1>) {
  %pid = program_id 0 : i32
  %i = iota : tile<8xi32>
  %eight = full 8 : tile<8xi32>
  %p = broadcast %pid to [8] : tile<8xi32>
  %base = mul %p, %eight : tile<8xi32>
  %at = add %base, %i : tile<8xi32>
  %one = full 1 : tile<8xi32>
  %left = sub %at, %one : tile<8xi32>
  %right = add %at, %one : tile<8xi32>
  %zero = full 0 : tile<8xi32>
  %n = dim %x axis 0 : i32
  %ns = broadcast %n to [8] : tile<8xi32>
  %lok = cmp ge %left, %zero : tile<8xbool>
  %rok = cmp lt %right, %ns : tile<8xbool>
  %all = full true : tile<8xbool>
  %pad = full -100.0 : tile<8xf32>
  %l = gather %x[%left], %lok, %pad : tile<8xf32>
  %c = gather %x[%at], %all, %pad : tile<8xf32>
  %r = gather %x[%right], %rok, %pad : tile<8xf32>
  %lc = add %l, %c : tile<8xf32>
  %s = add %lc, %r : tile<8xf32>
  %vy = partition_view %y [8] : view<f32, [8]>
  store %s, %vy[%pid]
}";

fn tensor(arg: &Arg) -> &HostTensor {
    match arg {
        Arg::Tensor(t) => t,
        other => panic!("not a tensor: {other:?}"),
    }
}

#[test]
fn a_stencil_reads_its_neighbours_and_other_values_past_the_ends() {
    let func = parse_function(STENCIL).unwrap();
    verify::verify(&func).unwrap();
    let x: Vec<f32> = (0..24).map(|i| (i * i % 7) as f32).collect();
    let mut args = vec![
        Arg::Tensor(HostTensor::from_vec(&[24], x.clone()).unwrap()),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[24])),
    ];
    run(&func, [3, 1, 1], &mut args).unwrap();
    let want: Vec<f32> = (0..24)
        .map(|i| {
            let left = if i == 0 { -100.0 } else { x[i - 1] };
            let right = if i == 23 { -100.0 } else { x[i + 1] };
            left + x[i] + right
        })
        .collect();
    assert_eq!(tensor(&args[1]).to_vec::<f32>().unwrap(), want);
    // The text form reads back to itself.
    let text = func.to_string();
    assert!(
        text.contains("%18 = gather %x[%8], %13, %15 : tile<8xf32>"),
        "{text}"
    );
    assert_eq!(parse_function(&text).unwrap().to_string(), text);
}

/// `y = xᵀ` for a 4×4 `x` through a gather with swapped index tiles, from
/// a transposed (strided) view of `x`'s buffer.
const TRANSPOSE: &str = "
kernel @transpose(%x: tensor<i32, 2>, %y: tensor<i32, 2>) {
  %zero = constant 0 : i32
  %r = iota : tile<4x4xi32>
  %four = full 4 : tile<4x4xi32>
  %rows = div %r, %four : tile<4x4xi32>
  %cols = rem %r, %four : tile<4x4xi32>
  %all = full true : tile<4x4xbool>
  %none = full 0 : tile<4x4xi32>
  %t = gather %x[%cols, %rows], %all, %none : tile<4x4xi32>
  %vy = partition_view %y [4, 4] : view<i32, [4, 4]>
  store %t, %vy[%zero, %zero]
}";

#[test]
fn a_gather_follows_the_tensors_strides() {
    let func = parse_function(TRANSPOSE).unwrap();
    verify::verify(&func).unwrap();
    let data: Vec<i32> = (0..16).collect();
    // x[i][j] = data[i + 4 j]: a column-major view.
    let x = HostTensor::with_strides(
        DType::I32,
        &[4, 4],
        &[1, 4],
        0,
        data.iter().flat_map(|v| v.to_le_bytes()).collect(),
    )
    .unwrap();
    let mut args = vec![
        Arg::Tensor(x),
        Arg::Tensor(HostTensor::zeros(DType::I32, &[4, 4])),
    ];
    run(&func, [1, 1, 1], &mut args).unwrap();
    // y[i][j] = x[j][i] = data[j + 4 i]: the buffer in order.
    assert_eq!(tensor(&args[1]).to_vec::<i32>().unwrap(), data);
}

#[test]
fn an_element_outside_the_tensor_whose_mask_holds_is_an_error() {
    let func = parse_function(
        &STENCIL.replace("%l = gather %x[%left], %lok", "%l = gather %x[%left], %all"),
    )
    .unwrap();
    let mut args = vec![
        Arg::Tensor(HostTensor::zeros(DType::F32, &[24])),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[24])),
    ];
    let err: InterpError = run(&func, [3, 1, 1], &mut args).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(
            "element [0] reaches index [-1], outside the tensor of extents [24] (mask it off)"
        ),
        "{text}"
    );
    assert!(text.contains("gather"), "{text}");
}

#[test]
fn malformed_gathers_are_verifier_errors_naming_the_op() {
    let cases = [
        ("%g = gather %x[%i], %m : tile<4xf32>", "needs 4 operands"),
        (
            "%g = gather %x[%i], %m, %wrong : tile<4xf32>",
            "other values must be a tile or scalar of f32",
        ),
        (
            "%g = gather %x[%f], %m, %o : tile<4xf32>",
            "index 0 must be an integer tile of shape [4]",
        ),
        (
            "%g = gather %x[%i], %i, %o : tile<4xf32>",
            "the mask must have type tile<4xbool>",
        ),
        (
            "%g = gather %x[%i], %m, %z : f32",
            "the mask must have type bool",
        ),
        (
            "%g = gather %x[%i], %t, %z : f32",
            "index 0 must be an integer scalar",
        ),
    ];
    for (line, want) in cases {
        let text = format!(
            "kernel @k(%x: tensor<f32, 1>) {{
  %i = iota : tile<4xi32>
  %f = full 1.0 : tile<4xf32>
  %m = full true : tile<4xbool>
  %o = full 0.0 : tile<4xf32>
  %wrong = full 0 : tile<4xi32>
  %t = constant true : bool
  %z = constant 0.0 : f32
  {line}
}}"
        );
        let err = verify::verify(&parse_function(&text).unwrap())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("gather") && err.contains(want),
            "{line}: {err}"
        );
    }
}

#[test]
fn a_gather_of_scalars_reads_one_element() {
    let func = parse_function(
        "kernel @pick(%x: tensor<i32, 2>, %y: tensor<i32, 1>, %r: i32, %c: i32) {
  %zero = constant 0 : i32
  %four = constant 4 : i32
  %in = cmp lt %c, %four : bool
  %o = constant -7 : i32
  %v = gather %x[%r, %c], %in, %o : i32
  %t = broadcast %v to [2] : tile<2xi32>
  %vy = partition_view %y [2] : view<i32, [2]>
  store %t, %vy[%zero]
}",
    )
    .unwrap();
    verify::verify(&func).unwrap();
    let run_at = |c: i32| {
        let x = HostTensor::from_vec(&[3, 4], (0..12).collect::<Vec<i32>>()).unwrap();
        let mut args = vec![
            Arg::Tensor(x),
            Arg::Tensor(HostTensor::zeros(DType::I32, &[2])),
            Arg::Scalar(tile_ir::Scalar::I32(1)),
            Arg::Scalar(tile_ir::Scalar::I32(c)),
        ];
        run(&func, [1, 1, 1], &mut args).map(|()| tensor(&args[1]).to_vec::<i32>().unwrap())
    };
    assert_eq!(run_at(2).unwrap(), [6, 6]);
    // Past the row the mask is off: the other value, no read.
    assert_eq!(run_at(9).unwrap(), [-7, -7]);
    let err = run_at(-1).unwrap_err().to_string();
    assert!(
        err.contains("reaches index [1, -1], outside the tensor of extents [3, 4]"),
        "{err}"
    );
}

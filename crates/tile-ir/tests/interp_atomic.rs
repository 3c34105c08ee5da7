//! `atomic`: a histogram, a compare-and-swap, the old values returned, the
//! text form and the errors.

use tile_ir::interp::{run, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::verify;
use tile_ir::DType;

/// Counts each program's 8 values (0..4) into `%hist`; `%old` receives the
/// counts each update saw.
const HISTOGRAM: &str = "
kernel @histogram(%x: tensor<i32, 1>, %hist: tensor<i32, 1>, %old: tensor<i32, 1>) {
  %pid = program_id 0 : i32
  %vx = partition_view %x [8] : view<i32, [8]>
  %bins = load %vx[%pid] : tile<8xi32>
  %one = full 1 : tile<8xi32>
  %all = full true : tile<8xbool>
  %seen = atomic add acq_rel gpu %hist[%bins], %one, %all : tile<8xi32>
  %vo = partition_view %old [8] : view<i32, [8]>
  store %seen, %vo[%pid]
}";

fn tensor(arg: &Arg) -> &HostTensor {
    match arg {
        Arg::Tensor(t) => t,
        other => panic!("not a tensor: {other:?}"),
    }
}

#[test]
fn a_histogram_counts_every_value_and_returns_the_counts_seen() {
    let func = parse_function(HISTOGRAM).unwrap();
    verify::verify(&func).unwrap();
    let x: Vec<i32> = (0..32).map(|i| (i * 7 + i / 3) % 4).collect();
    let mut args = vec![
        Arg::Tensor(HostTensor::from_vec(&[32], x.clone()).unwrap()),
        Arg::Tensor(HostTensor::zeros(DType::I32, &[4])),
        Arg::Tensor(HostTensor::zeros(DType::I32, &[32])),
    ];
    run(&func, [4, 1, 1], &mut args).unwrap();
    let mut want = [0i32; 4];
    let mut seen = Vec::new();
    for &v in &x {
        seen.push(want[v as usize]);
        want[v as usize] += 1;
    }
    assert_eq!(tensor(&args[1]).to_vec::<i32>().unwrap(), want);
    // The interpreter updates in program order, then row-major order.
    assert_eq!(tensor(&args[2]).to_vec::<i32>().unwrap(), seen);
}

/// Swaps in `%new` where `%t` holds `%expect`, on a 2-D tensor, with the
/// odd columns masked off.
const CAS: &str = "
kernel @cas(%t: tensor<f32, 2>, %old: tensor<f32, 2>) {
  %zero = constant 0 : i32
  %r = iota : tile<2x4xi32>
  %four = full 4 : tile<2x4xi32>
  %rows = div %r, %four : tile<2x4xi32>
  %cols = rem %r, %four : tile<2x4xi32>
  %two = full 2 : tile<2x4xi32>
  %parity = rem %cols, %two : tile<2x4xi32>
  %zeros = full 0 : tile<2x4xi32>
  %even = cmp eq %parity, %zeros : tile<2x4xbool>
  %expect = full 1.0 : tile<2x4xf32>
  %new = full 9.0 : tile<2x4xf32>
  %seen = atomic cas relaxed cta %t[%rows, %cols], %expect, %new, %even : tile<2x4xf32>
  %vo = partition_view %old [2, 4] : view<f32, [2, 4]>
  store %seen, %vo[%zero, %zero]
}";

#[test]
fn cas_swaps_where_the_value_matches_and_the_mask_holds() {
    let func = parse_function(CAS).unwrap();
    verify::verify(&func).unwrap();
    let t = vec![1.0f32, 1.0, 2.0, 1.0, 1.0, 3.0, 1.0, 1.0];
    let mut args = vec![
        Arg::Tensor(HostTensor::from_vec(&[2, 4], t).unwrap()),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[2, 4])),
    ];
    run(&func, [1, 1, 1], &mut args).unwrap();
    assert_eq!(
        tensor(&args[0]).to_vec::<f32>().unwrap(),
        [9.0, 1.0, 2.0, 1.0, 9.0, 3.0, 9.0, 1.0]
    );
    // Masked-off elements return zero.
    assert_eq!(
        tensor(&args[1]).to_vec::<f32>().unwrap(),
        [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    );
}

#[test]
fn the_text_form_round_trips() {
    for text in [HISTOGRAM, CAS] {
        let func = parse_function(text).unwrap();
        let printed = func.to_string();
        assert_eq!(parse_function(&printed).unwrap().to_string(), printed);
        assert!(printed.contains("atomic "), "{printed}");
    }
}

#[test]
fn an_unmasked_index_outside_the_tensor_is_an_error() {
    let func = parse_function(HISTOGRAM).unwrap();
    let mut args = vec![
        Arg::Tensor(HostTensor::from_vec(&[8], vec![0i32, 1, 2, 3, 4, 0, 0, 0]).unwrap()),
        Arg::Tensor(HostTensor::zeros(DType::I32, &[4])),
        Arg::Tensor(HostTensor::zeros(DType::I32, &[8])),
    ];
    let err = run(&func, [1, 1, 1], &mut args).unwrap_err().to_string();
    assert!(
        err.contains("element [4] reaches index [4], outside the tensor of extents [4]"),
        "{err}"
    );
}

fn verify_error(text: &str) -> String {
    let func = parse_function(text).unwrap();
    verify::verify(&func).unwrap_err().to_string()
}

#[test]
fn the_verifier_names_the_broken_rule() {
    let and_of_floats = "
kernel @k(%t: tensor<f32, 1>) {
  %i = iota : tile<4xi32>
  %v = full 1.0 : tile<4xf32>
  %m = full true : tile<4xbool>
  %o = atomic and acq_rel gpu %t[%i], %v, %m : tile<4xf32>
}";
    let err = verify_error(and_of_floats);
    assert!(
        err.contains("atomic and supports i32, u32, i64 and u64, the tensor is f32"),
        "{err}"
    );
    let bad_mask = "
kernel @k(%t: tensor<i32, 1>) {
  %i = iota : tile<4xi32>
  %v = full 1 : tile<4xi32>
  %m = full true : tile<8xbool>
  %o = atomic add acq_rel gpu %t[%i], %v, %m : tile<4xi32>
}";
    let err = verify_error(bad_mask);
    assert!(
        err.contains("the mask must have type tile<4xbool>, found tile<8xbool>"),
        "{err}"
    );
    let missing_index = "
kernel @k(%t: tensor<i32, 2>) {
  %i = iota : tile<4xi32>
  %v = full 1 : tile<4xi32>
  %m = full true : tile<4xbool>
  %o = atomic max acq_rel gpu %t[%i], %v, %m : tile<4xi32>
}";
    let err = verify_error(missing_index);
    assert!(
        err.contains("atomic max on a tensor of rank 2 needs 5 operands"),
        "{err}"
    );
    let float_index = "
kernel @k(%t: tensor<i32, 1>) {
  %i = iota : tile<4xf32>
  %v = full 1 : tile<4xi32>
  %m = full true : tile<4xbool>
  %o = atomic min acq_rel gpu %t[%i], %v, %m : tile<4xi32>
}";
    let err = verify_error(float_index);
    assert!(
        err.contains("index 0 must be an integer tile of shape [4], found tile<4xf32>"),
        "{err}"
    );
}

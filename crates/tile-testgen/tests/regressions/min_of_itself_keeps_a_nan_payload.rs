//! Regression (canonicalize, fixed): `min(x, x) == x` (and `max`, `and`,
//! `or` share the rule; only min/max matter for floats) forwards `x`'s bits,
//! but docs/semantics.md §1 says an op that computes a float and gets a NaN
//! returns the canonical NaN: the interpreter stores `0x7ff8000000000000`
//! where the canonicalized kernel stores the input's NaN payload
//! (`0xfffd315aa935be6c`, element 1 of `t6`). The pass now applies arithmetic identities to integers only.

use tile_ir::interp::Arg;
use tile_ir::interp::HostTensor;
use tile_ir::DType;

const KERNEL: &str = r#"kernel @gen_2364(%t6: tensor<f64, 1>, %t7: tensor<f64, 1>) {
  %0 = constant 0 : i32
  %1 = partition_view %t6 [8] : view<f64, [8]>
  %2 = constant 0 : i32
  %3 = load %1[%2] : tile<8xf64>
  %4 = min %3, %3 : tile<8xf64>
  %5 = partition_view %t7 [8] : view<f64, [8]>
  store_masked %4, %5[%0]
}"#;

/// The case, exactly as it failed.
pub fn case() -> tile_testgen::Case {
    let func = tile_ir::text::parse_function(KERNEL).expect("the kernel parses");
    let args: Vec<Arg> = vec![
        Arg::Tensor(HostTensor::with_strides(DType::F64, &[8], &[1], 0, tile_testgen::hex_bytes("6022995a6377d0bfa97a4daaea32f4fffcf499a12c18ffbf01000000000000006cbe35a95a31fdff000000000000f03f2e801bba5cc0fcbf000000000000e8bf")).expect("a valid layout")),
        Arg::Tensor(HostTensor::with_strides(DType::F64, &[2], &[1], 0, tile_testgen::hex_bytes("00000000000000000000000000000000")).expect("a valid layout")),
    ];
    tile_testgen::Case {
        func,
        grid: [1, 1, 1],
        args,
    }
}

#[test]
fn min_of_itself_keeps_a_nan_payload() {
    if let Err(failure) = tile_testgen::check_case(&case()) {
        panic!("{failure}");
    }
}

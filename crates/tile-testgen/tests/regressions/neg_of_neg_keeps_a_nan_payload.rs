//! Regression (canonicalize, fixed): `neg(neg(x)) == x` forwards `x`'s bits,
//! but `neg` of a NaN is the canonical NaN (docs/semantics.md §3, `neg abs`),
//! so the kernel stores `0x7fc00000` and the canonicalized one the loaded
//! payload `0x7fa00001`. Written by hand (the generator rarely nests two
//! `neg`s) and printed with `to_regression_test`. The pass now applies arithmetic identities to integers only.

use tile_ir::interp::Arg;
use tile_ir::interp::HostTensor;
use tile_ir::DType;

const KERNEL: &str = r#"kernel @neg_neg(%x: tensor<f32, 1>, %y: tensor<f32, 1>) {
  %0 = constant 0 : i32
  %1 = partition_view %x [1] : view<f32, [1]>
  %2 = partition_view %y [1] : view<f32, [1]>
  %3 = load %1[%0] : tile<1xf32>
  %4 = neg %3 : tile<1xf32>
  %5 = neg %4 : tile<1xf32>
  store %5, %2[%0]
}"#;

/// The case, exactly as it failed.
pub fn case() -> tile_testgen::Case {
    let func = tile_ir::text::parse_function(KERNEL).expect("the kernel parses");
    let args: Vec<Arg> = vec![
        Arg::Tensor(
            HostTensor::with_strides(
                DType::F32,
                &[1],
                &[1],
                0,
                tile_testgen::hex_bytes("0100a07f"),
            )
            .expect("a valid layout"),
        ),
        Arg::Tensor(
            HostTensor::with_strides(
                DType::F32,
                &[1],
                &[1],
                0,
                tile_testgen::hex_bytes("00000000"),
            )
            .expect("a valid layout"),
        ),
    ];
    tile_testgen::Case {
        func,
        grid: [1, 1, 1],
        args,
    }
}

#[test]
fn neg_of_neg_keeps_a_nan_payload() {
    if let Err(failure) = tile_testgen::check_case(&case()) {
        panic!("{failure}");
    }
}

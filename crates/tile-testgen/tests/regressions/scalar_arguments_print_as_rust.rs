//! Not a bug: a passing case with scalar arguments (an `i8` and a `bool`), so
//! that the source `to_regression_test` prints for scalars is compiled and
//! run. Shrunk from seed 1 while it kept two scalar arguments and passed.

use tile_ir::interp::Arg;
use tile_ir::interp::HostTensor;
use tile_ir::DType;
use tile_ir::Scalar;

const KERNEL: &str = r#"kernel @gen_1(%t0: tensor<bf16, 3>, %s1: i8, %s2: bool) {
  %0 = constant 0 : u32
  %1 = constant 0 : i32
  %2 = constant 0 : i16
  %3 = full 0.0 : tile<64x4x1xbf16>
  %4 = partition_view %t0 [64, 4, 1] : view<bf16, [64, 4, 1]>
  %5 = cast %s1 to bool : bool
  %6 = and %5, %s2 : bool
  if %6 {
    store %3, %4[%1, %0, %2]
    yield
  } else {
    yield
  }
}"#;

/// The case, exactly as it failed.
pub fn case() -> tile_testgen::Case {
    let func = tile_ir::text::parse_function(KERNEL).expect("the kernel parses");
    let args: Vec<Arg> = vec![
        Arg::Tensor(
            HostTensor::with_strides(
                DType::BF16,
                &[1, 1, 1],
                &[1, 1, 1],
                0,
                tile_testgen::hex_bytes("0000"),
            )
            .expect("a valid layout"),
        ),
        Arg::Scalar(Scalar::from_bits(DType::I8, 0x0)),
        Arg::Scalar(Scalar::from_bits(DType::Bool, 0x0)),
    ];
    tile_testgen::Case {
        func,
        grid: [1, 1, 1],
        args,
    }
}

#[test]
fn scalar_arguments_print_as_rust() {
    if let Err(failure) = tile_testgen::check_case(&case()) {
        panic!("{failure}");
    }
}

//! The sample kernels build and verify for several specializations.

use tile_ir::samples;
use tile_ir::DType;

#[test]
fn every_sample_verifies_for_several_specializations() {
    for block in [1, 7, 128, 1000] {
        samples::vector_add(block).unwrap();
    }
    for (r, c) in [(1, 1), (3, 5), (4, 128)] {
        samples::softmax(r, c).unwrap();
        samples::layernorm(r, c).unwrap();
        samples::transpose(r, c).unwrap();
    }
    for dtype in [DType::F32, DType::F16, DType::BF16, DType::F8E4M3] {
        samples::matmul(16, 8, 4, dtype).unwrap();
    }
    samples::matmul(5, 3, 7, DType::F32).unwrap();
}

#[test]
fn matmul_with_integer_operands_is_rejected_by_the_dot_rule() {
    let err = samples::matmul(16, 16, 16, DType::I32).unwrap_err();
    assert_eq!(
        err.to_string(),
        "dot(tile<16x16xi32>, tile<16x16xi32>, tile<16x16xf32>): dot supports f16×f16, bf16×bf16, f8×f8, f32×f32, f64×f64 and i8×i8 operands, found i32×i32"
    );
}

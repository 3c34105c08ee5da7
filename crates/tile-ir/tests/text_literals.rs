//! Float literals round once to their dtype.

use tile_ir::text::parse_function;
use tile_ir::{OpKind, Scalar};

fn constant(literal: &str, dtype: &str) -> Scalar {
    let src = format!("kernel @k() {{\n  %0 = constant {literal} : {dtype}\n}}");
    let func = parse_function(&src).unwrap();
    match func.op(func.body.ops[0]).kind {
        OpKind::Constant { value } => value,
        ref other => panic!("expected a constant, found {other:?}"),
    }
}

#[test]
fn a_literal_just_above_a_half_ulp_rounds_up_in_f16_and_bf16() {
    // 1 + 2^-11 + 2^-40: above the midpoint between 1 and 1 + 2^-10 (f16),
    // which rounding through f32 first would lose (it rounds to 1 + 2^-11,
    // then ties to even down to 1.0).
    assert_eq!(
        constant("1.0004882812509095", "f16").to_f64(),
        1.0 + 2f64.powi(-10)
    );
    // The same for bf16 (8 bits): 1 + 2^-8 + 2^-40 rounds up to 1 + 2^-7.
    assert_eq!(
        constant("1.0039062500009095", "bf16").to_f64(),
        1.0 + 2f64.powi(-7)
    );
}

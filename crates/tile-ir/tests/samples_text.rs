//! The printed IR of every sample kernel, pinned, and the text round trip
//! over all of them.

use tile_ir::text::parse_function;
use tile_ir::{samples, DType, Function};

fn all_samples() -> Vec<(&'static str, Function)> {
    vec![
        ("vector_add", samples::vector_add(1024).unwrap()),
        ("softmax", samples::softmax(4, 128).unwrap()),
        ("layernorm", samples::layernorm(2, 96).unwrap()),
        ("matmul", samples::matmul(32, 32, 16, DType::F16).unwrap()),
        ("transpose", samples::transpose(16, 24).unwrap()),
        (
            "grouped_matmul",
            samples::grouped_matmul(64, 64, 32, DType::F16).unwrap(),
        ),
        ("double_each", samples::double_each(64).unwrap()),
    ]
}

#[test]
fn printed_samples() {
    for (name, func) in all_samples() {
        insta::assert_snapshot!(name, func.to_string());
    }
}

#[test]
fn print_parse_print_is_the_identity_on_every_sample() {
    for (name, func) in all_samples() {
        let printed = func.to_string();
        let parsed = parse_function(&printed).unwrap_or_else(|e| panic!("{name}: {e}"));
        tile_ir::verify::verify(&parsed).unwrap();
        assert_eq!(parsed.to_string(), printed, "{name}");
    }
}

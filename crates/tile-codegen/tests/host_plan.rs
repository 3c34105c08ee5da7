//! The host back end's plan of every example kernel, pinned: which tiles are
//! lazy, which NaNs stay as computed, which reductions fold in row blocks,
//! which loads prefetch and which stores may stream.

use tile_codegen::host::plan;
use tile_ir::{samples, DType};

#[test]
fn plans_of_the_examples() {
    let examples = [
        samples::vector_add(1024).unwrap(),
        samples::softmax(8, 256).unwrap(),
        samples::layernorm(8, 384).unwrap(),
        samples::matmul(64, 64, 32, DType::F32).unwrap(),
        samples::transpose(32, 32).unwrap(),
    ];
    for func in &examples {
        insta::assert_snapshot!(func.name.clone(), plan(func).to_string());
    }
}

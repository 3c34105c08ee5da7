//! Layout choices that save shared-memory round trips, pinned by counting
//! the shared allocations (each is one staging with its barriers).

use tile_codegen::lower::{lower, Options};
use tile_ir::samples;

#[test]
fn staging_counts_of_the_samples() {
    let count = |func: tile_ir::Function| lower(&func, &Options::warps(2)).unwrap().shared.len();
    // vector add: nothing to move.
    assert_eq!(count(samples::vector_add(64).unwrap()), 0);
    // softmax: the two reductions; their broadcasts stay in registers.
    assert_eq!(count(samples::softmax(2, 16).unwrap()), 2);
    // layernorm: the two reductions, and the broadcasts of the 1-D iota,
    // weight and bias to 2-D; the `n`, `eps` broadcasts take the reductions'
    // slice layout instead of being converted.
    assert_eq!(count(samples::layernorm(2, 16).unwrap()), 5);
    // transpose: the permute.
    assert_eq!(count(samples::transpose(8, 16).unwrap()), 1);
    // matmul: both operands of the dot.
    assert_eq!(
        count(samples::matmul(8, 8, 4, tile_ir::DType::F32).unwrap()),
        2
    );
}

//! Layout choices and shared-memory reuse, pinned by counting the shared
//! allocations and barriers of each sample.

use tile_ir::{samples, DType, Function};
use tile_thread::lower::{lower, LowerOptions};

/// (allocations, barriers) of `func` lowered for 2 warps.
fn counts(func: Function) -> (usize, usize) {
    let program = lower(&func, &LowerOptions::warps(2)).unwrap();
    (
        program.shared.len(),
        program.to_string().matches("barrier").count(),
    )
}

#[test]
fn allocations_and_barriers_of_the_samples() {
    // vector add: nothing to move.
    assert_eq!(counts(samples::vector_add(64).unwrap()), (0, 0));
    // softmax: the max runs as a tree of shuffles (no shared memory: the
    // warps lie along the rows); the sum stages its operand once. Both
    // broadcasts stay in registers.
    assert_eq!(counts(samples::softmax(2, 16).unwrap()), (1, 1));
    // layernorm: only the two sums stage their operands (sharing one
    // allocation: one barrier, then two for the reuse). The `n` and `eps`
    // broadcasts are computed in the sums' slice layout, and the 1-D iota,
    // weight and bias are computed and loaded in the 2-D tile's layout with
    // the rows dropped, so their broadcasts stay in registers.
    assert_eq!(counts(samples::layernorm(2, 16).unwrap()), (1, 3));
    // transpose: the permute.
    assert_eq!(counts(samples::transpose(8, 16).unwrap()), (1, 1));
    // matmul: both operands of the dot, in the loop (a barrier before the
    // writes of each iteration, one before the reads).
    assert_eq!(
        counts(samples::matmul(8, 8, 4, DType::F32).unwrap()),
        (2, 2)
    );
}

#[test]
fn dot_registers_share_operand_loads() {
    // An 8x8 accumulator over 2 warps: each thread holds 4 consecutive
    // columns of one row, so each k costs 1 load of `a` and 4 of `b` (not 8).
    let program = lower(
        &samples::matmul(8, 8, 4, DType::F32).unwrap(),
        &LowerOptions::warps(2),
    )
    .unwrap();
    assert_eq!(
        program.to_string().matches("ld.shared").count(),
        4 * (1 + 4)
    );
}

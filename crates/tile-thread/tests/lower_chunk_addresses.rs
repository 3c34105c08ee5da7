//! The addresses of a `cp.async` copy's chunks (`lower/placement.rs`,
//! `lower/copies.rs`): one swizzled shared index per class of chunks, the
//! others a constant past it, and global offsets chained from the first
//! chunk's; the same results as the interpreter on partial tiles, where the
//! chained bounds cut rows and columns.

mod tensor_check;

use tensor_check::{small_integer_rows, values};
use tile_ir::samples::matmul;
use tile_ir::{interp, BinaryOp, DType};
use tile_testgen::inputs::{blocks, zeros};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions, TensorCores};
use tile_thread::program::{Program, ThreadOpKind};

fn count(program: &Program, wanted: impl Fn(&ThreadOpKind) -> bool) -> usize {
    program
        .ops
        .iter()
        .filter(|(_, op)| wanted(&op.kind))
        .count()
}

#[test]
fn a_copys_chunks_share_one_swizzled_index_and_chain_their_offsets() {
    // 128 × 64 f16 tiles on 4 warps: 8 chunks of 8 elements a thread and
    // operand, 16 rows apart, each under the 8-row swizzle of 64-column rows.
    let func = matmul(128, 128, 64, DType::F16).unwrap();
    let options = LowerOptions::warps(4)
        .with_tensor_cores(TensorCores::MmaSync)
        .with_stages(1);
    let program = lower(&func, &options).unwrap();
    tile_thread::program::verify(&program).unwrap();
    let copies = count(&program, |k| matches!(k, ThreadOpKind::CopyAsync { .. }));
    let hidden = count(&program, |k| matches!(k, ThreadOpKind::Opaque));
    // Two operands of 8 chunks each, copied once.
    assert_eq!(copies, 16);
    // One swizzled destination per operand; each other chunk's is an add.
    let defined_by = |reg| {
        program
            .ops
            .iter()
            .find(|(_, op)| op.results.contains(&reg))
            .map(|(_, op)| op.kind.clone())
    };
    let destinations: Vec<_> = program
        .ops
        .iter()
        .filter(|(_, op)| matches!(op.kind, ThreadOpKind::CopyAsync { .. }))
        .map(|(_, op)| defined_by(op.operands[0]))
        .collect();
    let swizzled = destinations
        .iter()
        .filter(|k| matches!(k, Some(ThreadOpKind::Binary(BinaryOp::Xor))))
        .count();
    let shifted = destinations
        .iter()
        .filter(|k| matches!(k, Some(ThreadOpKind::Binary(BinaryOp::Add))))
        .count();
    assert_eq!((swizzled, shifted), (2, 14), "{program}");
    // Each chunk but the first chained from the one before, in the copies
    // and again in their element-by-element fallback; the store of `c`
    // hides its partition's two origins for its element path.
    assert_eq!(hidden, 2 * 2 * 7 + 2, "{program}");
}

#[test]
fn chained_chunks_agree_with_the_interpreter_on_partial_tiles() {
    let (bm, bn, bk) = (64, 64, 32);
    let func = matmul(bm, bn, bk, DType::F16).unwrap();
    for stages in [1, 3] {
        let options = LowerOptions::warps(4)
            .with_tensor_cores(TensorCores::MmaSync)
            .with_stages(stages);
        let program = lower(&func, &options).unwrap();
        tile_thread::program::verify(&program).unwrap();
        // Rows, columns and K past whole tiles: the last tiles' chunks are
        // cut by rows (outer bounds) and by columns (counts below 8).
        let (m, k, n) = (bm + 37, 2 * bk + 11, bn + 21);
        let strides = [
            ((k, n), "rows of odd lengths: the element-by-element path"),
            (
                (k.next_multiple_of(8), n.next_multiple_of(8)),
                "aligned rows: cp.async",
            ),
        ];
        for ((stride_a, stride_b), label) in strides {
            let args = vec![
                small_integer_rows(41, m, k, stride_a),
                small_integer_rows(42, k, n, stride_b),
                zeros(&[m, n]),
            ];
            let grid = [blocks(m, bm), blocks(n, bn), 1];
            let (mut emulated, mut reference) = (args.clone(), args);
            emulate::run(&program, grid, &mut emulated).unwrap();
            interp::run(&func, grid, &mut reference).unwrap();
            assert_eq!(
                values(&emulated[2]),
                values(&reference[2]),
                "{stages} stages, {label}"
            );
        }
    }
}

/// `(x·y)ᵀ · z` for `[64, 64]` f16 tiles: the product's f16 cast staged
/// transposed as the second product's `a`.
const TRANSPOSED_PRODUCT: &str = "kernel @transposed_product(%x: tensor<f16, 2>, %y: tensor<f16, 2>, %z: tensor<f16, 2>, %o: tensor<f32, 2>) {
  %c0 = constant 0 : i32
  %v = partition_view %x [64, 64] : view<f16, [64, 64]>
  %w = partition_view %y [64, 64] : view<f16, [64, 64]>
  %u = partition_view %z [64, 64] : view<f16, [64, 64]>
  %a = load %v[%c0, %c0] : tile<64x64xf16>
  %b = load %w[%c0, %c0] : tile<64x64xf16>
  %zero = full 0.0 : tile<64x64xf32>
  %p = dot tensor %a, %b, %zero : tile<64x64xf32>
  %h = cast %p to f16 : tile<64x64xf16>
  %t = permute %h [1, 0] : tile<64x64xf16>
  %e = load %u[%c0, %c0] : tile<64x64xf16>
  %q = dot tensor %t, %e, %zero : tile<64x64xf32>
  %vo = partition_view %o [64, 64] : view<f32, [64, 64]>
  store %q, %vo[%c0, %c0]
}";

#[test]
fn a_transposed_accumulators_stores_share_their_indices() {
    let func = tile_ir::text::parse_function(TRANSPOSED_PRODUCT).unwrap();
    for (cores, own) in [(TensorCores::MmaSync, 14), (TensorCores::Wgmma, 13)] {
        let options = LowerOptions::warps(4).with_tensor_cores(cores);
        let program = lower(&func, &options).unwrap();
        tile_thread::program::verify(&program).unwrap();
        let defined_by = |reg| {
            program
                .ops
                .iter()
                .find(|(_, op)| op.results.contains(&reg))
                .map(|(_, op)| op)
        };
        let is_const =
            |reg| defined_by(reg).is_some_and(|op| matches!(op.kind, ThreadOpKind::Const(_)));
        // The scalar stores of the transposed tile: each index its class's
        // first, or that plus a constant.
        let indices: Vec<_> = program
            .ops
            .iter()
            .filter(|(_, op)| {
                matches!(op.kind, ThreadOpKind::StoreShared { width: 1, .. })
                    && program.dtype(op.operands[1]) == DType::F16
            })
            .map(|(_, op)| op.operands[0])
            .collect();
        let after = indices
            .iter()
            .filter(|&&i| {
                defined_by(i).is_some_and(|op| {
                    op.kind == ThreadOpKind::Binary(BinaryOp::Add)
                        && indices.contains(&op.operands[0])
                        && is_const(op.operands[1])
                })
            })
            .count();
        // 44 without the classes: every store its own index.
        assert_eq!(indices.len(), 44, "{cores:?}:\n{program}");
        assert_eq!(indices.len() - after, own, "{cores:?}:\n{program}");
    }
}

//! Shared memory reused across dtypes: a staging of one dtype after another
//! dtype's is released takes its bytes through an alias, the block's shared
//! memory is the larger of the two, not their sum, and the emitted code
//! computes as the interpreter does on the emulation targets.

mod emulated;

use tile_codegen::{gpu, Gfx, Sm, Target};
use tile_ir::builder::{BuildError, Builder};
use tile_ir::interp;
use tile_ir::{DType, Function, Padding, TensorType, Type};
use tile_testgen::inputs::{blocks, bytes, tensor_of};
use tile_thread::lower::{lower, LowerOptions};

/// Transposes a 32×32 block of the f16 `x`, then of the f32 `y`: two
/// stagings through shared memory, 2 KiB then 4 KiB.
fn two_transposes() -> Result<Function, BuildError> {
    let mut b = Builder::new("two_transposes");
    let tensor = |dtype| Type::Tensor(TensorType::new(dtype, 2));
    let params = [
        ("x", DType::F16),
        ("x_t", DType::F16),
        ("y", DType::F32),
        ("y_t", DType::F32),
    ]
    .map(|(name, dtype)| b.param(name, tensor(dtype)));
    let (pid_m, pid_n) = (b.program_id(0)?, b.program_id(1)?);
    for pair in params.chunks(2) {
        let from = b.partition_view(pair[0], &[32, 32])?;
        let to = b.partition_view(pair[1], &[32, 32])?;
        let block = b.load_masked(from, &[pid_m, pid_n], Padding::Zero)?;
        let transposed = b.permute(block, &[1, 0])?;
        b.store_masked(transposed, to, &[pid_n, pid_m])?;
    }
    b.finish()
}

#[test]
fn the_second_staging_takes_the_first_ones_bytes() {
    let func = two_transposes().unwrap();
    let program = lower(&func, &LowerOptions::warps(4)).unwrap();
    let text = program.to_string();
    assert!(text.contains("shared @s1: f32[1024] aliases @s0"), "{text}");
    assert_eq!(gpu::shared_bytes(&program), 4096, "{text}");
    let (rows, cols) = (45, 70);
    let args = vec![
        tensor_of(1, &[rows, cols], DType::F16),
        tensor_of(0, &[cols, rows], DType::F16),
        tensor_of(2, &[rows, cols], DType::F32),
        tensor_of(0, &[cols, rows], DType::F32),
    ];
    let grid = [blocks(rows, 32), blocks(cols, 32), 1];
    let mut expected = args.clone();
    interp::run(&func, grid, &mut expected).unwrap();
    for target in [Target::Nvptx(Sm::Sm80), Target::Amdgpu(Gfx::Gfx942)] {
        let mut actual = args.clone();
        emulated::run(&func, target, 4, grid, &mut actual)
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(bytes(&actual), bytes(&expected), "{target}");
    }
}

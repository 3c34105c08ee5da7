//! What a build that produces no code runs of the compile driver (`cargo check`,
//! `cargo clippy`, rust-analyzer: the macro's caller decides, see
//! `tile-frontend`): the pass pipeline, whose IR the kernel embeds, and every
//! check of [`super::compile`] that needs no LLVM, so that such a build
//! reports the same errors as a real one but for those of LLVM's stages.

use super::{check_blocks, optimize, resources, CompileError, Options, Programs};
use crate::target::Target;
use tile_ir::Function;

/// Runs the pass pipeline on `func` (specialization `label`) and, for the GPU
/// targets of `options`, the checks [`super::compile`] makes before LLVM: a
/// tile's elements per thread, the lowering to the thread-level program (for
/// each target's tensor cores and stages) and the shared memory of a block.
/// Not made: the AMD register limit (read from the code object) and the back
/// ends' own failures; nothing is dumped and the kernel cache is not read.
pub fn check_only(func: &mut Function, label: &str, options: &Options) -> Result<(), CompileError> {
    optimize(func)?;
    let func = &*func;
    let gpus: Vec<Target> = options
        .targets
        .iter()
        .copied()
        .filter(Target::is_gpu)
        .collect();
    if gpus.is_empty() {
        return Ok(());
    }
    check_blocks(func, label, options, &gpus)?;
    let mut programs = Programs::default();
    for target in gpus {
        let (program, _) = programs.for_target(func, label, options, target)?;
        resources::check_shared_memory(&func.name, label, target, &program)?;
    }
    Ok(())
}

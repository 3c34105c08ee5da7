//! The blocks of each target: a warp count that gives a target no thread,
//! or more than a block holds, is an error naming the target, for a build
//! and for an emulation image alike.

use tile_codegen::driver::{self, Options};
use tile_codegen::{CodegenOptions, Gfx, Sm, Target};

fn options(num_warps: u32, target_warps: Vec<(Target, u32)>) -> Options {
    Options {
        targets: vec![Target::Nvptx(Sm::Sm80), Target::Amdgpu(Gfx::Gfx942)],
        num_warps,
        codegen: CodegenOptions::default(),
        dump_dir: None,
        cache: None,
        max_threads: None,
        target_warps,
        target_stages: Vec::new(),
        num_stages: None,
    }
}

#[test]
fn blocks_without_threads_or_beyond_1024_are_errors_naming_the_target() {
    let func = tile_ir::samples::vector_add(256).unwrap();
    let gfx942 = Target::Amdgpu(Gfx::Gfx942);
    let error =
        |options: &Options, target| match driver::emulate(&func, "BLOCK=256", target, options) {
            Ok(_) => "ok".to_string(),
            Err(e) => e.to_string(),
        };
    assert_eq!(
        error(&options(4, vec![(gfx942, 0)]), gfx942),
        "kernel `vector_add` (BLOCK=256) asks for 0 warps on gfx942; a block needs at least one"
    );
    assert_eq!(
        error(&options(32, Vec::new()), gfx942),
        "kernel `vector_add` (BLOCK=256) asks for 32 warps, which on gfx942 are 2048 threads a block (its warps are 64-lane wavefronts), more than the 1024 a block holds; use fewer warps there: `num_warps(gfx942 = n)` sets its own"
    );
    assert_eq!(error(&options(32, vec![(gfx942, 16)]), gfx942), "ok");
    let mut func = func.clone();
    let compiled = driver::compile(&mut func, "BLOCK=256", &options(4, vec![(gfx942, 0)]));
    assert!(compiled.is_err_and(|e| e.to_string().contains("0 warps on gfx942")));
}

//! The stages of software-pipelined loops per target: the kernel's
//! `num_stages`, a target's own (`num_stages(sm_86 = 2)`), and a count that
//! does not fit a target's shared memory, which names the per-target form.

use tile_codegen::driver::{self, CompileError, Compiled, Options};
use tile_codegen::{CodegenOptions, Sm, Target};
use tile_ir::DType;

const SM80: Target = Target::Nvptx(Sm::Sm80);
const SM86: Target = Target::Nvptx(Sm::Sm86);

/// A 128×128×64 f16 matmul: each buffer of its K loop's ring holds a
/// 128×64 block of A and a 64×128 block of B, 32 KiB; `mma.sync` reads them
/// into registers, so from 3 stages on the ring has one buffer fewer than
/// the stages, and 2 stages have 2.
fn compile(num_stages: u32, target_stages: Vec<(Target, u32)>) -> Result<Compiled, CompileError> {
    let mut func = tile_ir::samples::matmul(128, 128, 64, DType::F16).unwrap();
    let options = Options {
        targets: vec![SM80, SM86],
        num_warps: 4,
        codegen: CodegenOptions::default(),
        dump_dir: None,
        cache: None,
        max_threads: None,
        target_warps: Vec::new(),
        num_stages: Some(num_stages),
        target_stages,
    };
    driver::compile(&mut func, "default", &options)
}

#[test]
fn a_target_takes_its_own_stages_where_the_kernel_gives_them() {
    let compiled = compile(5, vec![(SM86, 2)]).unwrap_or_else(|e| panic!("{e}"));
    let shared = |target| {
        compiled
            .images
            .iter()
            .find(|i| i.target == target)
            .unwrap()
            .shared_memory_bytes
    };
    // Four buffers on sm_80, two on sm_86.
    assert_eq!(shared(SM80) - shared(SM86), 2 * 32 * 1024);
}

#[test]
fn stages_beyond_a_targets_shared_memory_name_the_per_target_setting() {
    let Err(error) = compile(5, Vec::new()) else {
        panic!("5 stages, 4 buffers of 32 KiB, overflow sm_86's 99 KiB");
    };
    let error = error.to_string();
    assert!(
        error.contains("more than the 101376 of sm_86")
            && error.ends_with(
                "use smaller tiles or fewer `num_stages` (`num_stages(sm_86 = n)` sets its own)"
            ),
        "{error}"
    );
}

//! Snapshots of every stage the emitter produces for each sample kernel: the
//! LLVM IR as emitted and the PTX for sm_80, and the AMDGPU assembly for
//! gfx90a. Lines that name a tool version are removed so the snapshots only
//! change when the code does.

use tile_codegen::gpu::{emit, Emitted};
use tile_codegen::CodegenOptions;
use tile_codegen::{Gfx, Sm, Target};
use tile_ir::{samples, DType, Function};
use tile_thread::lower::{lower, LowerOptions};

fn kernels() -> Vec<(&'static str, Function)> {
    vec![
        ("vector_add", samples::vector_add(1024).unwrap()),
        (
            "vector_add_aligned",
            samples::with_aligned_tensors(samples::vector_add(1024).unwrap()),
        ),
        ("softmax", samples::softmax(4, 256).unwrap()),
        ("layernorm", samples::layernorm(2, 384).unwrap()),
        ("matmul", samples::matmul(32, 32, 16, DType::F32).unwrap()),
        ("transpose", samples::transpose(32, 32).unwrap()),
    ]
}

fn emitted(func: &Function, target: Target) -> Emitted {
    let program = lower(func, &LowerOptions::warps(4)).unwrap();
    emit(&program, target, &CodegenOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// Drops lines that carry tool versions.
fn normalized(text: &str) -> String {
    text.lines()
        .filter(|l| {
            !l.contains("clang version")
                && !l.contains("LLVM version")
                && !l.starts_with("\t.ident")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn llvm_ir_and_ptx_for_sm_80() {
    for (name, func) in kernels() {
        let out = emitted(&func, Target::Nvptx(Sm::Sm80));
        insta::assert_snapshot!(format!("{name}.sm_80.ll"), normalized(&out.module.llvm_ir));
        insta::assert_snapshot!(format!("{name}.sm_80.ptx"), normalized(&out.assembly));
    }
}

#[test]
fn amdgpu_assembly_for_gfx90a() {
    for (name, func) in kernels() {
        let out = emitted(&func, Target::Amdgpu(Gfx::Gfx90a));
        insta::assert_snapshot!(format!("{name}.gfx90a.s"), normalized(&out.assembly));
    }
}

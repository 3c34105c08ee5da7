//! Tensor arrays on every GPU stage: the modules sm_80, sm_90a, sm_100a,
//! gfx942, gfx950, gfx1100 and gfx1200 receive, run on the emulation
//! target (whose memory checks every access), store the interpreter's bits
//! for a grouped matmul on their tensor cores with pipelined operand copies
//! and for a loop over an array's tensors; ptxas assembles and ld.lld links
//! them; and an index outside the array is the kernel's `tensor_index`
//! check, with the index and the count in its status record.

mod emulated;

use emulated::{agrees, assembles_and_links, Failure};
use tile_codegen::{CodegenOptions, Gfx, Sm, Target};
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::{eval, samples, DType, Scalar};
use tile_testgen::inputs::f32_vectors;

/// A `rows × cols` tensor of `dtype` holding small integers (every product
/// sum exact in any order), different per `seed`.
fn small(seed: usize, (rows, cols): (usize, usize), dtype: DType) -> HostTensor {
    let data: Vec<Scalar> = (0..rows * cols)
        .map(|i| eval::cast(Scalar::F64(((i * 7 + seed) % 5) as f64 - 2.0), dtype))
        .collect();
    HostTensor::from_scalars(dtype, &[rows, cols], &data).unwrap()
}

/// The grouped matmul's arguments for problems `(m, n, k)`.
fn grouped(problems: &[(usize, usize, usize)], dtype: DType) -> Vec<Arg> {
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for (g, &(m, n, k)) in problems.iter().enumerate() {
        a.push(small(g, (m, k), dtype));
        b.push(small(g + 3, (k, n), dtype));
        c.push(small(g + 6, (m, n), DType::F32));
    }
    vec![Arg::Tensors(a), Arg::Tensors(b), Arg::Tensors(c)]
}

#[test]
fn a_grouped_matmul_on_each_targets_tensor_cores() {
    let problems = [(150, 70, 80), (9, 130, 40), (1, 1, 1), (40, 16, 0)];
    let grid = [2, 3, problems.len() as u32];
    let func = samples::grouped_matmul(128, 64, 32, DType::F16).unwrap();
    let mut want = grouped(&problems, DType::F16);
    interp::run(&func, grid, &mut want).unwrap();
    let targets = [
        (Target::Nvptx(Sm::Sm80), "llvm.nvvm.mma.m16n8k16"),
        (Target::Nvptx(Sm::Sm90a), "wgmma.mma_async"),
        (Target::Nvptx(Sm::Sm100a), "tcgen05.mma"),
        (Target::Amdgpu(Gfx::Gfx942), "mfma"),
        (Target::Amdgpu(Gfx::Gfx950), "mfma"),
        (Target::Amdgpu(Gfx::Gfx1100), "wmma"),
        (Target::Amdgpu(Gfx::Gfx1200), "wmma"),
    ];
    for (target, instruction) in targets {
        let lowering = tile_thread::lower::LowerOptions::warps(4)
            .with_tensor_cores(target.tensor_cores())
            .with_stages(3);
        let module = emulated::lowered_module(&func, target, &lowering, &CodegenOptions::default())
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(
            module.llvm_ir_opt.contains(instruction),
            "{target}: no {instruction}"
        );
        let kernel = emulated::image(&module).unwrap_or_else(|e| panic!("{target}: {e}"));
        let mut got = grouped(&problems, DType::F16);
        emulated::launch(&kernel, grid, 4, &mut got).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(
            emulated::bytes(&got, 2),
            emulated::bytes(&want, 2),
            "{target}"
        );
    }
    assemble_grouped(&func);
}

/// The grouped matmul's PTX assembles and its code objects link.
fn assemble_grouped(func: &tile_ir::Function) {
    assembles_and_links(func, 4);
}

#[test]
fn a_loop_over_an_arrays_tensors() {
    let func = samples::double_each(64).unwrap();
    let lengths = [100, 3, 0, 64, 129];
    agrees(
        &func,
        || vec![f32_vectors(&lengths, 0), f32_vectors(&lengths, 7)],
        1,
        [3, 1, 1],
    );
}

#[test]
fn an_index_outside_the_array_fails_the_check() {
    let func = samples::double_each(64).unwrap();
    // `ys` holds one tensor more than `xs`: its last index is outside `xs`.
    let args = || vec![f32_vectors(&[4, 4], 0), f32_vectors(&[4, 4, 4], 0)];
    for target in emulated::TARGETS {
        match emulated::run(&func, target, 2, [1, 1, 1], &mut args()) {
            Err(Failure::Status(status)) => {
                assert_eq!(
                    status.code,
                    tile_abi::FaultCode::TensorIndex as u32,
                    "{target}"
                );
                assert_eq!(status.index[..2], [2, 2], "{target}");
            }
            other => panic!("{target}: {other:?}"),
        }
    }
}

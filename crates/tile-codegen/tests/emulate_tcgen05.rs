//! The matmul sample on sm_100a's `tcgen05.mma` through the emulation
//! target: the NVPTX module's inline PTX (tensor memory allocated by warp
//! 0, the accumulator stored to it, thread 0's products read through
//! sm_100's descriptors of the shared addresses the image really has, the
//! commit's mbarrier waited on by its phase's parity, the rows loaded
//! back), over a grid of partial tiles, with and without a software
//! pipeline: bit for bit the product stepped by 16 and the lockstep
//! emulator's result; ptxas assembles the PTX for sm_100a and sm_103a.

mod emulated;

use tile_codegen::gpu::emit;
use tile_codegen::{tools, CodegenOptions, Sm, Target};
use tile_ir::interp::Arg;
use tile_ir::{samples, DType};
use tile_testgen::inputs::{blocks, tensor_of, zeros};
use tile_testgen::products::{mxfp8_dot_case_of, stepped};
use tile_thread::lower::{lower, LowerOptions};

fn values(arg: &Arg) -> Vec<f32> {
    match arg {
        Arg::Tensor(t) => t.to_scalars().iter().map(|s| s.to_f64() as f32).collect(),
        Arg::Tensors(ts) => ts
            .iter()
            .flat_map(|t| values(&Arg::Tensor(t.clone())))
            .collect(),
        Arg::Scalar(s) => vec![s.to_f64() as f32],
    }
}

#[test]
fn matmuls_on_tcgen05() {
    let target = Target::Nvptx(Sm::Sm100a);
    for (dtype, (bm, bn, bk), warps, stages) in [
        (DType::F16, (128, 128, 64), 4, 1),
        (DType::BF16, (128, 64, 64), 8, 2),
        (DType::F16, (256, 64, 32), 4, 3),
    ] {
        let what = format!("{dtype} {bm}x{bn}x{bk} on {warps} warps, {stages} stages");
        let func = samples::matmul(bm, bn, bk, dtype).unwrap();
        let lowering = LowerOptions::warps(warps)
            .with_tensor_cores(target.tensor_cores())
            .with_stages(stages);
        let program = lower(&func, &lowering).unwrap();
        let module = emulated::lowered_module(&func, target, &lowering, &CodegenOptions::default())
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            module
                .llvm_ir_opt
                .contains("tcgen05.mma.cta_group::1.kind::f16"),
            "{what}"
        );
        let kernel = emulated::image(&module).unwrap_or_else(|e| panic!("{what}: {e}"));
        let (m, n, k) = (bm + 29, 2 * bn - 5, 3 * bk - 24);
        let args = vec![
            tensor_of(71, &[m, k], dtype),
            tensor_of(72, &[k, n], dtype),
            zeros(&[m, n]),
        ];
        let grid = [blocks(m, bm), blocks(n, bn), 1];
        let mut emulated = args.clone();
        emulated::launch(&kernel, grid, warps, &mut emulated)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut lockstep = args.clone();
        tile_thread::emulate::run(&program, grid, &mut lockstep).unwrap();
        let (a, b, c) = (values(&args[0]), values(&args[1]), values(&args[2]));
        let want = stepped(&a, &b, &c, (m, k, n), 16);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&values(&emulated[2])), bits(&want), "{what}");
        assert_eq!(bits(&values(&lockstep[2])), bits(&want), "{what}");
    }
}

/// MXFP8 products (`mxfp8_dot_case_of`) on sm_100a's block-scaled
/// `tcgen05.mma` (`kind::mxf8f6f4.block_scale`): the scales every thread
/// packed into tensor memory, read by the instruction in the emulation
/// target's runtime as the lockstep emulator reads them; both bit for bit
/// the product of the scaled operands stepped by 32. ptxas assembles the
/// PTX for sm_100a.
#[test]
fn mxfp8_products_on_block_scaled_tcgen05() {
    let target = Target::Nvptx(Sm::Sm100a);
    // `(M, K, N)`: four groups of 32 `k` in one byte each of a column;
    // two, the cell's other bytes unused; eight over two sets of columns,
    // two warpgroups, B in two instructions of 128 columns.
    for (seed, dims, warps) in [
        (1, (128, 128, 128), 4),
        (2, (128, 64, 128), 4),
        (3, (128, 256, 256), 8),
    ] {
        let case = mxfp8_dot_case_of(seed, dims, warps);
        let what = format!("{dims:?} on {warps} warps");
        let lowering = LowerOptions::warps(warps).with_tensor_cores(target.tensor_cores());
        let program = lower(&case.func, &lowering).unwrap();
        let options = CodegenOptions::default();
        let module = emulated::lowered_module(&case.func, target, &lowering, &options)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            module
                .llvm_ir_opt
                .contains("kind::mxf8f6f4.block_scale [$0], $1, $2, $3, [$4], [$5], p"),
            "{what}"
        );
        let kernel = emulated::image(&module).unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut emulated = case.args.clone();
        emulated::launch(&kernel, [1, 1, 1], warps, &mut emulated)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut lockstep = case.args.clone();
        tile_thread::emulate::run(&program, [1, 1, 1], &mut lockstep).unwrap();
        let [a, b, c] = &case.values;
        let want = stepped(a, b, c, case.dims, 32);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let out = |args: &[Arg]| values(args.last().expect("the output"));
        assert_eq!(bits(&out(&emulated)), bits(&want), "{what}");
        assert_eq!(bits(&out(&lockstep)), bits(&want), "{what}");
        let ptx = emit(&program, target, &options).unwrap().assembly;
        emulated::require(tools::Tool::Ptxas);
        let usage = tools::ptxas_resource_usage(&ptx, Sm::Sm100a).unwrap();
        assert!(usage.contains("0 bytes spill stores"), "{what}: {usage}");
    }
}

/// Pipelined operands copied by the TMA on sm_100a's module: the kernel
/// reads tensor maps passed by value, thread 0 issues the boxes onto the
/// stages' mbarriers and the products complete on another; bit for bit
/// the product stepped by 16 and the lockstep emulator's result.
#[test]
fn tma_matmuls_on_tcgen05() {
    let target = Target::Nvptx(Sm::Sm100a);
    let (dtype, (bm, bn, bk), warps, stages) = (DType::BF16, (128, 128, 64), 4, 3);
    let func = samples::matmul(bm, bn, bk, dtype).unwrap();
    let lowering = LowerOptions::warps(warps)
        .with_tensor_cores(target.tensor_cores())
        .with_stages(stages)
        .with_tma(true);
    let program = lower(&func, &lowering).unwrap();
    let module =
        emulated::lowered_module(&func, target, &lowering, &CodegenOptions::default()).unwrap();
    assert!(module.llvm_ir_opt.contains("cp.async.bulk.tensor.2d"));
    let kernel = emulated::image(&module).unwrap();
    let (m, k, n) = (2 * bm + 24, 3 * bk - 8, bn + 40);
    let args = vec![
        tensor_of(81, &[m, k], dtype),
        tensor_of(82, &[k, n], dtype),
        zeros(&[m, n]),
    ];
    let grid = [blocks(m, bm), blocks(n, bn), 1];
    let maps = program.tma_maps();
    let mut emulated = args.clone();
    emulated::launch_with_maps(&kernel, (grid, warps), &mut emulated, &|_, b| b, &maps).unwrap();
    let mut lockstep = args.clone();
    tile_thread::emulate::run(&program, grid, &mut lockstep).unwrap();
    let (a, b, c) = (values(&args[0]), values(&args[1]), values(&args[2]));
    let want = stepped(&a, &b, &c, (m, k, n), 16);
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&values(&emulated[2])), bits(&want));
    assert_eq!(bits(&values(&lockstep[2])), bits(&want));
}

/// The PTX of a 128×128×64 f16 matmul: `tcgen05.mma` and `tcgen05.ld`, no
/// `wgmma` or `mma.sync`, tensor memory allocated and freed once; ptxas
/// assembles it for sm_100a and sm_103a without spilling.
#[test]
fn tcgen05_ptx_assembles() {
    let func = samples::matmul(128, 128, 64, DType::F16).unwrap();
    for sm in [Sm::Sm100a, Sm::Sm103a] {
        let target = Target::Nvptx(sm);
        let lowering = LowerOptions::warps(4)
            .with_tensor_cores(target.tensor_cores())
            .with_stages(3);
        let program = lower(&func, &lowering).unwrap();
        let ptx = emit(&program, target, &CodegenOptions::default())
            .unwrap()
            .assembly;
        for want in [
            "tcgen05.mma.cta_group::1.kind::f16",
            "tcgen05.ld.sync.aligned.32x32b",
            "tcgen05.commit",
        ] {
            assert!(ptx.contains(want), "{sm}: {want}");
        }
        assert_eq!(ptx.matches("tcgen05.alloc.").count(), 1, "{sm}");
        assert_eq!(ptx.matches("tcgen05.dealloc.").count(), 1, "{sm}");
        assert!(!ptx.contains("wgmma") && !ptx.contains("mma.sync"), "{sm}");
        emulated::require(tools::Tool::Ptxas);
        let usage = tools::ptxas_resource_usage(&ptx, sm).unwrap();
        assert!(usage.contains("0 bytes spill stores"), "{sm}: {usage}");
    }
}

/// The module without its `tcgen05.dealloc`: the emulation target stops
/// the block, whose tensor memory is still allocated at its end.
#[test]
fn tensor_memory_never_freed_fails() {
    let target = Target::Nvptx(Sm::Sm100a);
    let func = samples::matmul(128, 64, 64, DType::F16).unwrap();
    let module = emulated::module(&func, target, 4, &CodegenOptions::default()).unwrap();
    let mut broken = module.clone();
    broken.llvm_ir_opt = module
        .llvm_ir_opt
        .lines()
        .filter(|line| !line.contains("tcgen05.dealloc"))
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(broken.llvm_ir_opt, module.llvm_ir_opt);
    let kernel = emulated::image(&broken).unwrap();
    let mut args = vec![
        tensor_of(41, &[128, 64], DType::F16),
        tensor_of(42, &[64, 64], DType::F16),
        zeros(&[128, 64]),
    ];
    let error = emulated::launch(&kernel, [1, 1, 1], 4, &mut args).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("64 columns of tensor memory are still allocated"),
        "{error}"
    );
}

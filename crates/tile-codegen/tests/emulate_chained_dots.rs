//! Chained products (attention's `p = cast(q·kᵀ)` into `p·v`) on
//! `mma.sync`, on MFMA and on `wgmma`: the warps (waves) along M only, the
//! first MFMA product transposed, and the second takes its `a` fragments
//! from the registers the first left, with no staging through shared
//! memory; the results are the interpreter's on the lockstep
//! emulator and every emulation target (small integers, so every order of
//! the sums is exact).

mod emulated;

use tile_codegen::gpu::emit;
use tile_codegen::tools::{self, Tool};
use tile_codegen::{CodegenOptions, Gfx, Sm, Target};
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{verify, Function};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};
use tile_thread::program::LdMatrix;
use tile_thread::{Program, Reg, ThreadOpKind};

/// `o = cast(q · k, f16) · v` for `q: [m, d]`, `k: [d, n]`, `v: [n, e]`
/// (`SHAPE`: both products on MFMA's 32×32 blocks; `WGMMA_SHAPE`: on
/// `wgmma`'s 64×64); with `scale`, `p` is `q·k` times a scalar first (an
/// elementwise op between the products).
fn kernel(scale: bool, [m, d, n, e]: [usize; 4]) -> Function {
    let (scaled, p) = match scale {
        true => (
            format!(
                "  %two = full 2.0 : tile<{m}x{n}xf32>\n  %s2 = mul %s, %two : tile<{m}x{n}xf32>\n"
            ),
            "%s2",
        ),
        false => (String::new(), "%s"),
    };
    let text = format!(
        r#"kernel @chained(%q: tensor<f16, 2>, %k: tensor<f16, 2>, %v: tensor<f16, 2>, %o: tensor<f32, 2>) {{
  %zero = constant 0 : i32
  %vq = partition_view %q [{m}, {d}] : view<f16, [{m}, {d}]>
  %qt = load %vq[%zero, %zero] : tile<{m}x{d}xf16>
  %vk = partition_view %k [{d}, {n}] : view<f16, [{d}, {n}]>
  %kt = load %vk[%zero, %zero] : tile<{d}x{n}xf16>
  %z1 = full 0.0 : tile<{m}x{n}xf32>
  %s = dot tensor %qt, %kt, %z1 : tile<{m}x{n}xf32>
{scaled}  %p = cast {p} to f16 : tile<{m}x{n}xf16>
  %vv = partition_view %v [{n}, {e}] : view<f16, [{n}, {e}]>
  %vt = load %vv[%zero, %zero] : tile<{n}x{e}xf16>
  %z2 = full 0.0 : tile<{m}x{e}xf32>
  %ot = dot tensor %p, %vt, %z2 : tile<{m}x{e}xf32>
  %vo = partition_view %o [{m}, {e}] : view<f32, [{m}, {e}]>
  store %ot, %vo[%zero, %zero]
}}"#
    );
    let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

/// The products' shapes `[m, d, n, e]` on `mma.sync` and MFMA.
const SHAPE: [usize; 4] = [64, 16, 32, 32];

/// The products' shapes on `wgmma`: 64×64 blocks, `K` 16 and 64.
const WGMMA_SHAPE: [usize; 4] = [64, 16, 64, 64];

/// Small integers: every product and sum is exact in f32 and every `p` in
/// f16.
fn args([m, d, n, e]: [usize; 4]) -> Vec<Arg> {
    vec![
        emulated::small_f16s(&[m, d], 1),
        emulated::small_f16s(&[d, n], 2),
        emulated::small_f16s(&[n, e], 3),
        Arg::Tensor(HostTensor::from_vec(&[m, e], vec![0f32; m * e]).unwrap()),
    ]
}

/// `ldmatrix` without `.trans`: the `a` fragments read from shared memory.
fn a_fragment_loads(program: &Program) -> usize {
    let a_fragments = |kind: &ThreadOpKind| {
        matches!(
            kind,
            ThreadOpKind::LdMatrix {
                shape: LdMatrix { trans: false, .. },
                ..
            }
        )
    };
    program
        .ops
        .iter()
        .filter(|(_, op)| a_fragments(&op.kind))
        .count()
}

/// Shared-memory stores of values a `cast` computed: `p`'s staging.
fn casts_staged(program: &Program) -> usize {
    let cast = |r: Reg| {
        program
            .ops
            .iter()
            .any(|(_, op)| matches!(op.kind, ThreadOpKind::Cast { .. }) && op.results.contains(&r))
    };
    program
        .ops
        .iter()
        .filter(|(_, op)| match (&op.kind, op.operands.as_slice()) {
            // `[index, values.., mask]`, one value or a vector.
            (ThreadOpKind::StoreShared { .. }, [_, values @ .., _]) => {
                values.iter().any(|&v| cast(v))
            }
            _ => false,
        })
        .count()
}

#[test]
fn a_chained_products_second_operand_stays_in_registers() {
    for scale in [false, true] {
        let func = kernel(scale, SHAPE);
        let mut want = args(SHAPE);
        interp::run(&func, [1, 1, 1], &mut want).unwrap();
        // `mma.sync`, and MFMA (whose first product is computed transposed;
        // on gfx950 the second is fed the `k` the first's registers hold,
        // in pairs of CDNA 3 half-steps).
        for target in [
            Target::Nvptx(Sm::Sm80),
            Target::Amdgpu(Gfx::Gfx942),
            Target::Amdgpu(Gfx::Gfx950),
        ] {
            let options = LowerOptions::warps(4).with_tensor_cores(target.tensor_cores());
            let program = lower(&func, &options).unwrap();
            assert_eq!(casts_staged(&program), 0, "{target}:\n{program}");
            if target == Target::Nvptx(Sm::Sm80) {
                // The first product's `q` (one 16×16 block row a warp, one
                // k-step); none for `p`.
                assert_eq!(a_fragment_loads(&program), 1, "{program}");
            }
            if target == Target::Amdgpu(Gfx::Gfx950) {
                // One step of 16 for `q·kᵀ`, two for `p·v`, all on CDNA 4's
                // form.
                let text = program.to_string();
                assert_eq!(text.matches("mma.mfma32x32x16.f16 ").count(), 3);
                assert!(!text.contains("mma.mfma32x32x8"));
            }
            let mut got = args(SHAPE);
            emulate::run(&program, [1, 1, 1], &mut got).unwrap();
            assert_eq!(
                emulated::bytes(&got, 3),
                emulated::bytes(&want, 3),
                "{target}"
            );
        }
        emulated::agrees(&func, || args(SHAPE), 3, [1, 1, 1]);
    }
}

/// On `wgmma` the second product takes `p` from the registers the first
/// product's accumulators left (`wgmma … {a0, a1, a2, a3}, desc-b`), four
/// `k`-steps of them, with no staging: the lockstep emulator and the sm_90a
/// emulation target agree with the interpreter, and `ptxas` assembles it.
#[test]
fn a_chained_wgmma_takes_its_a_from_registers() {
    let target = Target::Nvptx(Sm::Sm90a);
    for scale in [false, true] {
        let func = kernel(scale, WGMMA_SHAPE);
        let mut want = args(WGMMA_SHAPE);
        interp::run(&func, [1, 1, 1], &mut want).unwrap();
        let options = LowerOptions::warps(4).with_tensor_cores(target.tensor_cores());
        let program = lower(&func, &options).unwrap();
        let count = |want: fn(&ThreadOpKind) -> bool| {
            program.ops.iter().filter(|(_, op)| want(&op.kind)).count()
        };
        assert_eq!(casts_staged(&program), 0, "{program}");
        assert_eq!(
            count(|k| matches!(k, ThreadOpKind::WgmmaRegisterA { .. })),
            4
        );
        assert_eq!(count(|k| matches!(k, ThreadOpKind::Wgmma { .. })), 1);
        let text = program.to_string();
        assert_eq!(tile_thread::parse_program(&text).unwrap().to_string(), text);
        let mut got = args(WGMMA_SHAPE);
        emulate::run(&program, [1, 1, 1], &mut got).unwrap();
        assert_eq!(emulated::bytes(&got, 3), emulated::bytes(&want, 3));
        let mut got = args(WGMMA_SHAPE);
        emulated::run(&func, target, 4, [1, 1, 1], &mut got).unwrap();
        assert_eq!(emulated::bytes(&got, 3), emulated::bytes(&want, 3));
        emulated::require(Tool::Ptxas);
        let ptx = emit(&program, target, &CodegenOptions::default())
            .unwrap()
            .assembly;
        assert_eq!(ptx.matches("}, {%r").count(), 4, "{ptx}");
        let usage = tools::ptxas_resource_usage(&ptx, Sm::Sm90a).unwrap();
        assert!(usage.contains("0 bytes spill stores"), "{usage}");
    }
}

/// An attention block as public kernels write it: `q`, `k` and `v` read
/// through per-head views of `[1, S, 1, D]` and reshaped, `k` transposed
/// for `q·kᵀ`, the rows' maximum subtracted, and `p·v` accumulated onto
/// the rows' `-max` broadcast over the wider output. The reshapes, the
/// transpose and the broadcast keep their registers: nothing but the tensor
/// cores reads shared memory (on `mma.sync` its `ldmatrix`, on `wgmma` its
/// descriptors); the lockstep emulator and every emulation target, each on
/// its tensor cores, equal the interpreter (small integers, no `exp`).
#[test]
fn an_attention_block_reads_shared_memory_only_in_its_products() {
    let text = r#"kernel @attention_block(%q: tensor<f16, 4>, %k: tensor<f16, 4>, %v: tensor<f16, 4>, %o: tensor<f32, 2>) {
  %z = constant 0 : i32
  %vq = partition_view %q [1, 64, 1, 32] : view<f16, [1, 64, 1, 32]>
  %q4 = load %vq[%z, %z, %z, %z] : tile<1x64x1x32xf16>
  %qt = reshape %q4 to [64, 32] : tile<64x32xf16>
  %vk = partition_view %k [1, 64, 1, 32] : view<f16, [1, 64, 1, 32]>
  %k4 = load %vk[%z, %z, %z, %z] : tile<1x64x1x32xf16>
  %kt = reshape %k4 to [64, 32] : tile<64x32xf16>
  %ktt = permute %kt [1, 0] : tile<32x64xf16>
  %z1 = full 0.0 : tile<64x64xf32>
  %s = dot tensor %qt, %ktt, %z1 : tile<64x64xf32>
  %m = reduce max %s axis 1 keepdim : tile<64x1xf32>
  %mb = broadcast %m to [64, 64] : tile<64x64xf32>
  %d = sub %s, %mb : tile<64x64xf32>
  %p = cast %d to f16 : tile<64x64xf16>
  %vv = partition_view %v [1, 64, 1, 128] : view<f16, [1, 64, 1, 128]>
  %v4 = load %vv[%z, %z, %z, %z] : tile<1x64x1x128xf16>
  %vt = reshape %v4 to [64, 128] : tile<64x128xf16>
  %w = neg %m : tile<64x1xf32>
  %c = broadcast %w to [64, 128] : tile<64x128xf32>
  %ot = dot tensor %p, %vt, %c : tile<64x128xf32>
  %vo = partition_view %o [64, 128] : view<f32, [64, 128]>
  store %ot, %vo[%z, %z]
}"#;
    let func = parse_function(text).unwrap_or_else(|e| panic!("{e}"));
    let args = || {
        vec![
            emulated::small_f16s(&[1, 64, 1, 32], 1),
            emulated::small_f16s(&[1, 64, 1, 32], 2),
            emulated::small_f16s(&[1, 64, 1, 128], 3),
            Arg::Tensor(HostTensor::from_vec(&[64, 128], vec![0f32; 64 * 128]).unwrap()),
        ]
    };
    let mut want = args();
    interp::run(&func, [1, 1, 1], &mut want).unwrap();
    for target in [Target::Nvptx(Sm::Sm80), Target::Nvptx(Sm::Sm90a)] {
        let options = LowerOptions::warps(4).with_tensor_cores(target.tensor_cores());
        let program = lower(&func, &options).unwrap();
        let shared_loads = program
            .ops
            .iter()
            .filter(|(_, op)| matches!(op.kind, ThreadOpKind::LoadShared { .. }))
            .count();
        assert_eq!(shared_loads, 0, "{target}:\n{program}");
        let mut got = args();
        emulate::run(&program, [1, 1, 1], &mut got).unwrap();
        assert_eq!(
            emulated::bytes(&got, 3),
            emulated::bytes(&want, 3),
            "{target}"
        );
    }
    for target in emulated::TARGETS
        .into_iter()
        .chain([Target::Nvptx(Sm::Sm90a)])
    {
        let mut got = args();
        emulated::run(&func, target, 4, [1, 1, 1], &mut got).unwrap();
        assert_eq!(
            emulated::bytes(&got, 3),
            emulated::bytes(&want, 3),
            "{target}"
        );
    }
}
/// On gfx950 a chained product runs on CDNA 4's form of its block size,
/// fed the `k` of two CDNA 3 half-steps from the first product's registers
/// (16×16×32 after a transposed 16×16×16, 32×32×16 after a 32×32×16), with
/// the scaled `p` staged nowhere: the lockstep emulator and the gfx950
/// emulation target agree with the interpreter.
#[test]
fn a_chained_product_on_cdna4_takes_paired_k_from_registers() {
    for (shape, second) in [
        ([32, 16, 32, 32], "mfma16x16x32.f16"),
        ([64, 32, 64, 64], "mfma32x32x16.f16"),
    ] {
        let func = kernel(true, shape);
        let mut want = args(shape);
        interp::run(&func, [1, 1, 1], &mut want).unwrap();
        let target = Target::Amdgpu(Gfx::Gfx950);
        let options = LowerOptions::warps(4).with_tensor_cores(target.tensor_cores());
        let program = lower(&func, &options).unwrap();
        assert_eq!(casts_staged(&program), 0, "{shape:?}:\n{program}");
        let text = program.to_string();
        let last = text.lines().rfind(|l| l.contains(" = mma.")).unwrap();
        assert!(last.contains(second), "{shape:?}: {last}");
        let mut got = args(shape);
        emulate::run(&program, [1, 1, 1], &mut got).unwrap();
        assert_eq!(
            emulated::bytes(&got, 3),
            emulated::bytes(&want, 3),
            "{shape:?}"
        );
        let mut emulated_run = args(shape);
        emulated::run(&func, target, 4, [1, 1, 1], &mut emulated_run).unwrap();
        assert_eq!(
            emulated::bytes(&emulated_run, 3),
            emulated::bytes(&want, 3),
            "{shape:?} on the emulation target"
        );
    }
}

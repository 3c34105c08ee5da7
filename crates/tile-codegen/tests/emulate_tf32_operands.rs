//! `tf32` dots on sm_90a's `wgmma.m64nNk8.f32.tf32.tf32` and sm_100a's
//! `tcgen05.mma.kind::tf32`. Both instructions read an `f32` operand's top
//! 19 bits and drop the rest, where `round_tf32` rounds to nearest with
//! ties away: the lowering rounds each staged operand first (in registers
//! when it is stored from them, in shared memory when it was copied). The
//! inputs make the difference show: one operand holds small integers, the
//! other small integers times `1 + 2⁻¹¹`, whose TF32 rounding and
//! truncation differ in every nonzero element, and every sum of their
//! products is exact in `f32` (multiples of 2⁻¹⁰ below 2¹¹), so the
//! emulators, which truncate as the hardware does, equal the interpreter
//! only if the rounding happened.

mod emulated;

use tile_codegen::tools::Tool;
use tile_codegen::{CodegenOptions, Sm, Target};
use tile_hw::wgmma::Major;
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{verify, Function, UnaryOp};
use tile_testgen::products::{stepped, tf32_block_dot_case};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};
use tile_thread::{Program, ThreadOpKind};

/// How the kernel reads its second operand.
#[derive(Clone, Copy, Debug, PartialEq)]
enum B {
    /// Blocks of `n` keys of `k: [blocks · n, d]`, transposed: `b` is
    /// K-major.
    Keys,
    /// Blocks of `d` rows of `k: [blocks · d, n]` as they are: `b` is
    /// MN-major.
    Rows,
}

impl B {
    /// The shape of `k` and of its tiles.
    fn shapes(self, [_, d, n]: [usize; 3], blocks: usize) -> ([usize; 2], [usize; 2]) {
        match self {
            B::Keys => ([blocks * n, d], [n, d]),
            B::Rows => ([blocks * d, n], [d, n]),
        }
    }
}

/// `o = Σ_j dot_tf32(q, b_j)` over `blocks` blocks of `k` read as `b`
/// says, `q: [m, d]`, `o: [m, n]`; the blocks read by `load_masked`
/// (which the TMA copies) where `masked`.
fn keys(shape @ [m, d, n]: [usize; 3], (b, blocks): (B, usize), masked: bool) -> Function {
    let (load, padding) = match masked {
        true => ("load_masked", " pad(zero)"),
        false => ("load", ""),
    };
    let [r, c] = b.shapes(shape, blocks).1;
    let operand = match b {
        B::Keys => format!("    %ktt = permute %kt [1, 0] : tile<{d}x{n}xf32>\n"),
        B::Rows => "".into(),
    };
    let named = if b == B::Keys { "%ktt" } else { "%kt" };
    let text = format!(
        r#"kernel @keys(%q: tensor<f32, 2>, %k: tensor<f32, 2>, %o: tensor<f32, 2>) {{
  %zero = constant 0 : i32
  %one = constant 1 : i32
  %blocks = constant {blocks} : i32
  %vq = partition_view %q [{m}, {d}] : view<f32, [{m}, {d}]>
  %qt = load %vq[%zero, %zero] : tile<{m}x{d}xf32>
  %vk = partition_view %k [{r}, {c}] : view<f32, [{r}, {c}]>
  %init = full 0.0 : tile<{m}x{n}xf32>
  %acc = for %j = %zero to %blocks step %one iter(%c = %init) : tile<{m}x{n}xf32> {{
    %kt = {load} %vk[%j, %zero]{padding} : tile<{r}x{c}xf32>
{operand}    %r = dot tf32 %qt, {named}, %c : tile<{m}x{n}xf32>
    yield %r
  }}
  %vo = partition_view %o [{m}, {n}] : view<f32, [{m}, {n}]>
  store %acc, %vo[%zero, %zero]
}}"#
    );
    let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}{shape:?}"));
    verify::verify(&func).unwrap();
    func
}

/// `q`, `k` and a zero `o`; the operand `tails` (0 for `q`, 1 for `k`)
/// holds the integers times `1 + 2⁻¹¹` (the module docs).
fn args(shape @ [m, _, n]: [usize; 3], (b, blocks): (B, usize), tails: usize) -> Vec<Arg> {
    let tensor = |shape: [usize; 2], seed: usize, scale: f32| {
        let data = (0..shape[0] * shape[1])
            .map(|i| (((i * 7 + seed) % 5) as f32 - 2.0) * scale)
            .collect();
        Arg::Tensor(HostTensor::from_vec(&shape, data).unwrap())
    };
    let tail = 1.0 + 2f32.powi(-11);
    let scale = |which: usize| if which == tails { tail } else { 1.0 };
    vec![
        tensor([m, shape[1]], 1, scale(0)),
        tensor(b.shapes(shape, blocks).0, 3, scale(1)),
        tensor([m, n], 0, 0.0),
    ]
}

fn count(program: &Program, want: impl Fn(&ThreadOpKind) -> bool) -> usize {
    program.ops.iter().filter(|(_, op)| want(&op.kind)).count()
}

/// Lowers the kernel with `lowering` for `target`, checks that its products
/// are `products` TF32 instructions of `N` = `wide` and that it rounds, and
/// runs it on the lockstep emulator and the emulation target against the
/// interpreter, with the tails on each operand in turn.
fn check(
    target: Target,
    (shape, b, masked): ([usize; 3], B, bool),
    lowering: &LowerOptions,
) -> Program {
    let blocks = (b, 3);
    let func = keys(shape, blocks, masked);
    let program = lower(&func, lowering).unwrap();
    let text = program.to_string();
    assert_eq!(tile_thread::parse_program(&text).unwrap().to_string(), text);
    // `q`, staged from registers, is rounded there; the copied keys in
    // shared memory.
    let in_registers = count(&program, |k| {
        matches!(k, ThreadOpKind::Unary(UnaryOp::RoundTf32))
    });
    let in_shared = count(&program, |k| {
        matches!(k, ThreadOpKind::RoundSharedTf32 { .. })
    });
    assert!(
        in_registers > 0 && in_shared > 0,
        "{target} {shape:?}:\n{program}"
    );
    let module = emulated::lowered_module(&func, target, lowering, &CodegenOptions::default())
        .unwrap_or_else(|e| panic!("{target} {shape:?}: {e}"));
    let image = emulated::image(&module).unwrap();
    let warps = program.num_warps;
    for tails in [0, 1] {
        let context = format!("{target} {shape:?} {warps} warps, tails on operand {tails}");
        let mut want = args(shape, blocks, tails);
        interp::run(&func, [1, 1, 1], &mut want).unwrap();
        let mut lockstep = args(shape, blocks, tails);
        emulate::run(&program, [1, 1, 1], &mut lockstep).unwrap();
        assert_eq!(
            emulated::bytes(&lockstep, 2),
            emulated::bytes(&want, 2),
            "lockstep, {context}"
        );
        let mut got = args(shape, blocks, tails);
        let maps = program.tma_maps();
        emulated::launch_with_maps(&image, ([1, 1, 1], warps), &mut got, &|_, b| b, &maps)
            .unwrap_or_else(|e| panic!("{context}: {e}"));
        assert_eq!(
            emulated::bytes(&got, 2),
            emulated::bytes(&want, 2),
            "emulation target, {context}"
        );
    }
    program
}

/// `tf32` products with the keys, a transposed B, copied as stored (with
/// and without a pipeline) and read K-major through A's swizzle: rows of
/// 32, 16 or 8 `k` (128, 64 or 32 bytes) for `K` of 128, 64 or 32.
#[test]
fn tf32_products_round_their_staged_operands_on_wgmma_and_tcgen05() {
    emulated::require(Tool::Ptxas);
    // The dot's `[m, d, n]`, the warps, and the `N` of sm_90a's instructions
    // (the widest of 256, 128 and 64 dividing `n` that the warpgroups can
    // share, else `n`).
    let cases = [
        ([64, 64, 64], 4, 64),
        ([128, 32, 128], 8, 128),
        ([128, 128, 64], 4, 64),
        ([64, 16, 32], 4, 32),
    ];
    for (shape @ [m, d, n], warps, wide) in cases {
        for stages in [1, 3] {
            let context = format!("{shape:?} {warps} warps {stages} stages");
            let sm90a = Target::Nvptx(Sm::Sm90a);
            let lowering = LowerOptions::warps(warps)
                .with_tensor_cores(sm90a.tensor_cores())
                .with_stages(stages);
            let program = check(sm90a, (shape, B::Keys, false), &lowering);
            let wgmmas = count(&program, |k| {
                matches!(k, ThreadOpKind::Wgmma { kind, .. }
                    if kind.ptx_type() == "tf32" && kind.b_major == Major::K && kind.k() == 8)
            });
            let mma_sync = count(&program, |k| matches!(k, ThreadOpKind::Mma { .. }));
            let per_k_tile = (m / 64) * (n / wide) * (d / 8) / (warps as usize / 4);
            assert_eq!((wgmmas, mma_sync), (per_k_tile, 0), "{context}:\n{program}");
            let instruction = format!("m64n{wide}k8.f32.tf32.tf32");
            emulated::assembles(&program, sm90a, &instruction, &context);
            if m % 128 != 0 {
                continue;
            }
            let sm100a = Target::Nvptx(Sm::Sm100a);
            let lowering = lowering.with_tensor_cores(sm100a.tensor_cores());
            let program = check(sm100a, (shape, B::Keys, false), &lowering);
            let tcgen05 = count(&program, |k| {
                matches!(k, ThreadOpKind::Tcgen05Mma { kind, .. }
                    if kind.k() == 8 && kind.b_major == Major::K && kind.n == n.min(256))
            });
            assert_eq!(tcgen05, (m / 128) * (d / 8), "{context}:\n{program}");
            let tcgen05_tf32 = "tcgen05.mma.cta_group::1.kind::tf32";
            emulated::assembles(&program, sm100a, tcgen05_tf32, &context);
        }
    }
}

/// With `tma`, the keys arrive as the TMA's boxes (rows of 32 `f32`, 128
/// bytes) and are rounded after their mbarrier completes.
#[test]
fn tf32_products_round_what_the_tma_copies() {
    for (shape, warps) in [([64, 64, 64], 4), ([128, 32, 128], 8)] {
        for sm in [Sm::Sm90a, Sm::Sm100a] {
            let target = Target::Nvptx(sm);
            if sm == Sm::Sm100a && shape[0] % 128 != 0 {
                continue;
            }
            let lowering = LowerOptions::warps(warps)
                .with_tensor_cores(target.tensor_cores())
                .with_stages(3)
                .with_tma(true);
            let program = check(target, (shape, B::Keys, true), &lowering);
            let boxes = count(&program, |k| matches!(k, ThreadOpKind::TmaLoad { .. }));
            let copies = count(&program, |k| matches!(k, ThreadOpKind::CopyAsync { .. }));
            assert!(boxes > 0 && copies == 0, "{target} {shape:?}:\n{program}");
        }
    }
}

/// A `b` read as it is stored, `[K, N]`: MN-major. `tcgen05.mma` takes it
/// (`kind::tf32` has an MN-major form), in blocks of 32 `n` (one 128-byte
/// atom) an instruction, copied by `cp.async` or the TMA and rounded in
/// shared memory; `wgmma`, whose TF32 form is K-major only, leaves the dot
/// to `mma.sync`.
#[test]
fn tf32_products_read_an_mn_major_b_on_tcgen05_only() {
    emulated::require(Tool::Ptxas);
    let sm100a = Target::Nvptx(Sm::Sm100a);
    for (shape @ [m, d, n], warps) in [([128, 32, 64], 4), ([128, 64, 128], 8), ([128, 16, 64], 4)]
    {
        for (stages, tma) in [(1, false), (3, false), (3, true)] {
            let context = format!("{shape:?} {warps} warps {stages} stages tma {tma}");
            let lowering = LowerOptions::warps(warps)
                .with_tensor_cores(sm100a.tensor_cores())
                .with_stages(stages)
                .with_tma(tma);
            let program = check(sm100a, (shape, B::Rows, tma), &lowering);
            let tcgen05 = count(&program, |k| {
                matches!(k, ThreadOpKind::Tcgen05Mma { kind, .. }
                    if kind.k() == 8 && kind.b_major == Major::Mn && kind.n == 32)
            });
            assert_eq!(
                tcgen05,
                (m / 128) * (n / 32) * (d / 8),
                "{context}:\n{program}"
            );
            if !tma {
                let tcgen05_tf32 = "tcgen05.mma.cta_group::1.kind::tf32";
                emulated::assembles(&program, sm100a, tcgen05_tf32, &context);
            }
        }
        let sm90a = Target::Nvptx(Sm::Sm90a);
        let lowering = LowerOptions::warps(warps)
            .with_tensor_cores(sm90a.tensor_cores())
            .with_stages(3);
        let program = lower(&keys(shape, (B::Rows, 3), false), &lowering).unwrap();
        let wgmmas = count(&program, |k| matches!(k, ThreadOpKind::Wgmma { .. }));
        let mma_sync = count(&program, |k| matches!(k, ThreadOpKind::Mma { .. }));
        assert!(wgmmas == 0 && mma_sync > 0, "{shape:?}:\n{program}");
    }
}

/// Random `tf32` dots (`tf32_block_dot_case`: f32 operands with all their
/// fraction bits, `b` stored `[K, N]`) on sm_100a's `tcgen05.mma`: the
/// lockstep emulator and the emulation target, which truncate the operands
/// as the instruction does, equal bit for bit the product of the operands
/// rounded to TF32 summed in the instruction's steps of 8 `k`.
#[test]
fn random_tf32_dots_on_tcgen05_are_the_rounded_operands_steps() {
    let target = Target::Nvptx(Sm::Sm100a);
    for seed in 0..12 {
        let case = tf32_block_dot_case(seed);
        let what = format!("seed {seed}: {:?} on {} warps", case.dims, case.warps);
        let lowering = LowerOptions::warps(case.warps).with_tensor_cores(target.tensor_cores());
        let program = lower(&case.func, &lowering).unwrap();
        let (m, k, n) = case.dims;
        let tcgen05 = count(
            &program,
            |op| matches!(op, ThreadOpKind::Tcgen05Mma { kind, .. } if kind.k() == 8),
        );
        assert_eq!(tcgen05, (m / 128) * (n / 32) * (k / 8), "{what}");
        let [a, b, c] = &case.values;
        let want = stepped(a, b, c, case.dims, 8);
        let mut lockstep = case.args.clone();
        emulate::run(&program, [1, 1, 1], &mut lockstep).unwrap();
        let mut emulated = case.args.clone();
        emulated::run(&case.func, target, case.warps, [1, 1, 1], &mut emulated)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        for (path, args) in [("lockstep", &lockstep), ("emulation target", &emulated)] {
            let Some(Arg::Tensor(out)) = args.last() else {
                panic!("{what}: no output");
            };
            let got: Vec<u32> = out
                .to_scalars()
                .iter()
                .map(|s| (s.to_f64() as f32).to_bits())
                .collect();
            let bits: Vec<u32> = want.iter().map(|v| v.to_bits()).collect();
            assert_eq!(got, bits, "{what}: the {path}");
        }
    }
}

/// Two `tf32` products reading one block of keys a loop iteration (`o =
/// Σ q·kᵀ`, `p = Σ (q + q)·kᵀ`): the staged block is rounded before
/// either reads it, and neither rewrite races the other's product, on
/// `wgmma` and `tcgen05.mma`, with and without a pipeline.
#[test]
fn two_tf32_products_share_their_staged_keys() {
    let ([m, d, n], blocks) = ([128, 32, 64], 3);
    let text = format!(
        r#"kernel @two(%q: tensor<f32, 2>, %k: tensor<f32, 2>, %o: tensor<f32, 2>, %p: tensor<f32, 2>) {{
  %zero = constant 0 : i32
  %one = constant 1 : i32
  %blocks = constant {blocks} : i32
  %vq = partition_view %q [{m}, {d}] : view<f32, [{m}, {d}]>
  %qt = load %vq[%zero, %zero] : tile<{m}x{d}xf32>
  %q2 = add %qt, %qt : tile<{m}x{d}xf32>
  %vk = partition_view %k [{n}, {d}] : view<f32, [{n}, {d}]>
  %init = full 0.0 : tile<{m}x{n}xf32>
  %o1, %o2 = for %j = %zero to %blocks step %one iter(%c = %init, %e = %init) : tile<{m}x{n}xf32>, tile<{m}x{n}xf32> {{
    %kt = load %vk[%j, %zero] : tile<{n}x{d}xf32>
    %ktt = permute %kt [1, 0] : tile<{d}x{n}xf32>
    %r = dot tf32 %qt, %ktt, %c : tile<{m}x{n}xf32>
    %s = dot tf32 %q2, %ktt, %e : tile<{m}x{n}xf32>
    yield %r, %s
  }}
  %vo = partition_view %o [{m}, {n}] : view<f32, [{m}, {n}]>
  store %o1, %vo[%zero, %zero]
  %vp = partition_view %p [{m}, {n}] : view<f32, [{m}, {n}]>
  store %o2, %vp[%zero, %zero]
}}"#
    );
    let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    let mut args = args([m, d, n], (B::Keys, blocks), 1);
    args.push(args[2].clone());
    let mut want = args.clone();
    interp::run(&func, [1, 1, 1], &mut want).unwrap();
    for (sm, products) in [(Sm::Sm90a, "wgmma"), (Sm::Sm100a, "tcgen05")] {
        for stages in [1, 3] {
            let context = format!("{sm:?}, {stages} stages");
            let target = Target::Nvptx(sm);
            let lowering = LowerOptions::warps(4)
                .with_tensor_cores(target.tensor_cores())
                .with_stages(stages);
            let program = lower(&func, &lowering).unwrap();
            let issued = count(&program, |k| match k {
                ThreadOpKind::Wgmma { .. } => products == "wgmma",
                ThreadOpKind::Tcgen05Mma { .. } => products == "tcgen05",
                _ => false,
            });
            assert!(issued > 0, "{context}:\n{program}");
            let mut lockstep = args.clone();
            emulate::run(&program, [1, 1, 1], &mut lockstep).unwrap();
            assert_eq!(
                emulated::bytes(&lockstep, 2),
                emulated::bytes(&want, 2),
                "lockstep, {context}"
            );
            let mut got = args.clone();
            emulated::run_staged(&func, target, (4, stages), [1, 1, 1], &mut got)
                .unwrap_or_else(|e| panic!("{context}: {e}"));
            assert_eq!(
                emulated::bytes(&got, 2),
                emulated::bytes(&want, 2),
                "emulation target, {context}"
            );
        }
    }
}

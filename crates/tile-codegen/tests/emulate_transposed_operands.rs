//! A `dot` whose `b` is a loaded tile transposed (attention's `q·kᵀ`, the
//! keys read as the `[N, D]` rows they are stored in): the tile is copied
//! with `cp.async` as it is, ahead of its loop when pipelined, and the
//! tensor cores read it K-major — `mma.sync` by `ldmatrix` without
//! `.trans`, `wgmma` with `imm-trans-b = 0` — instead of loading it into
//! registers and storing it transposed element by element. The lockstep
//! emulator and the emulation targets equal the interpreter (small
//! integers, every order of the sums exact), and `ptxas` assembles it.

mod emulated;

use tile_codegen::gpu::emit;
use tile_codegen::tools::{self, Tool};
use tile_codegen::{CodegenOptions, Sm, Target};
use tile_hw::wgmma::Major;
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{verify, DType, Function};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};
use tile_thread::program::LdMatrix;
use tile_thread::{Program, ThreadOpKind};

/// The kernels: `k: [blocks · n, d]` read a block of `n` keys an iteration.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kernel {
    /// `o = Σ_j q · k_jᵀ`, `o: [m, n]`.
    Keys,
    /// `o = Σ_j cast(q · k_jᵀ, f16) · k_j`, `o: [m, d]`: each block of keys
    /// read by two products, transposed by the first and as it is by the
    /// second (attention's dQ kernel reads its keys so).
    Twice,
    /// `o = Σ_j q · (k_j + k_j)ᵀ`: the transposed tile is computed, so it
    /// is stored from registers.
    Doubled,
    /// [`Kernel::Keys`] with `k` read by `load_masked` with zero padding,
    /// which the TMA can copy.
    Masked,
    /// `o = Σ_j q · k_j` with `k: [blocks · d, n]` read as it is stored:
    /// an MN-major `b`.
    Rows,
}

impl Kernel {
    /// The shape of `o` for `q: [m, d]` and blocks of `n` keys.
    fn out(self, [m, d, n]: [usize; 3]) -> [usize; 2] {
        match self {
            Kernel::Keys | Kernel::Doubled | Kernel::Masked | Kernel::Rows => [m, n],
            Kernel::Twice => [m, d],
        }
    }

    /// The kernel on `q` and `k` of `dtype`.
    fn function(self, dtype: DType, [m, d, n]: [usize; 3], blocks: usize) -> Function {
        let [_, e] = self.out([m, d, n]);
        let body = match self {
            Kernel::Keys | Kernel::Masked => format!(
                "    %r = dot tensor %qt, %ktt, %c : tile<{m}x{n}xf32>\n"
            ),
            Kernel::Doubled => format!(
                "    %k2 = add %kt, %kt : tile<{n}x{d}xf16>\n    %kdt = permute %k2 [1, 0] : tile<{d}x{n}xf16>\n    %r = dot tensor %qt, %kdt, %c : tile<{m}x{n}xf32>\n"
            ),
            Kernel::Rows => format!(
                "    %r = dot tensor %qt, %kt, %c : tile<{m}x{n}xf32>\n"
            ),
            Kernel::Twice => format!(
                "    %z = full 0.0 : tile<{m}x{n}xf32>\n    %s = dot tensor %qt, %ktt, %z : tile<{m}x{n}xf32>\n    %p = cast %s to f16 : tile<{m}x{n}xf16>\n    %r = dot tensor %p, %kt, %c : tile<{m}x{d}xf32>\n"
            ),
        };
        let (load, padding) = match self {
            Kernel::Masked => ("load_masked", " pad(zero)"),
            _ => ("load", ""),
        };
        // The rows of `k` each iteration reads, and the transpose the
        // kernels of keys take.
        let ([r, c], transposed) = match self {
            Kernel::Rows => ([d, n], String::new()),
            _ => (
                [n, d],
                format!("    %ktt = permute %kt [1, 0] : tile<{d}x{n}xf16>\n"),
            ),
        };
        let text = format!(
            r#"kernel @keys(%q: tensor<f16, 2>, %k: tensor<f16, 2>, %o: tensor<f32, 2>) {{
  %zero = constant 0 : i32
  %one = constant 1 : i32
  %blocks = constant {blocks} : i32
  %vq = partition_view %q [{m}, {d}] : view<f16, [{m}, {d}]>
  %qt = load %vq[%zero, %zero] : tile<{m}x{d}xf16>
  %vk = partition_view %k [{r}, {c}] : view<f16, [{r}, {c}]>
  %init = full 0.0 : tile<{m}x{e}xf32>
  %acc = for %j = %zero to %blocks step %one iter(%c = %init) : tile<{m}x{e}xf32> {{
    %kt = {load} %vk[%j, %zero]{padding} : tile<{r}x{c}xf16>
{transposed}{body}    yield %r
  }}
  %vo = partition_view %o [{m}, {e}] : view<f32, [{m}, {e}]>
  store %acc, %vo[%zero, %zero]
}}"#
        )
        .replace("f16", &dtype.to_string());
        // f32 operands take TF32 products.
        let text = match dtype {
            DType::F32 => text.replace("dot tensor", "dot tf32"),
            _ => text,
        };
        let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        verify::verify(&func).unwrap();
        func
    }

    /// `q` and `k` of `dtype` (small integers) and a zero `o`.
    fn args(self, dtype: DType, shape: [usize; 3], blocks: usize) -> Vec<Arg> {
        let [m, d, n] = shape;
        let [rows, cols] = self.out(shape);
        vec![
            emulated::small_ints(dtype, &[m, d], 1),
            match self {
                Kernel::Rows => emulated::small_ints(dtype, &[blocks * d, n], 3),
                _ => emulated::small_ints(dtype, &[blocks * n, d], 3),
            },
            Arg::Tensor(HostTensor::from_vec(&[rows, cols], vec![0f32; rows * cols]).unwrap()),
        ]
    }
}

fn count(program: &Program, want: impl Fn(&ThreadOpKind) -> bool) -> usize {
    program.ops.iter().filter(|(_, op)| want(&op.kind)).count()
}

/// Lowers the keys kernel for `target` with `warps` and `stages`, checks
/// how `k` is copied and read, and runs it on the lockstep emulator and the
/// emulation target against the interpreter.
fn check(target: Target, shape: [usize; 3], (warps, stages): (u32, u32)) -> Program {
    check_kernel(Kernel::Keys, target, shape, (warps, stages))
}

/// [`check`] for `kernel`.
fn check_kernel(
    kernel: Kernel,
    target: Target,
    shape: [usize; 3],
    (warps, stages): (u32, u32),
) -> Program {
    check_kernel_of(kernel, DType::F16, target, shape, (warps, stages))
}

/// [`check_kernel`] on operands of `dtype`.
fn check_kernel_of(
    kernel: Kernel,
    dtype: DType,
    target: Target,
    shape: [usize; 3],
    (warps, stages): (u32, u32),
) -> Program {
    let blocks = 3;
    let func = kernel.function(dtype, shape, blocks);
    let args = || kernel.args(dtype, shape, blocks);
    let mut want = args();
    interp::run(&func, [1, 1, 1], &mut want).unwrap();
    let options = LowerOptions::warps(warps)
        .with_tensor_cores(target.tensor_cores())
        .with_stages(stages);
    let program = lower(&func, &options).unwrap();
    let context = format!("{target} {shape:?} {warps} warps {stages} stages");
    // `k` (parameter 1) is copied by `cp.async`, not staged from registers,
    // unless the kernel computes the tile.
    let k_copies = count(&program, |k| {
        matches!(k, ThreadOpKind::CopyAsync { param: 1, .. })
    });
    assert_eq!(
        k_copies > 0,
        kernel != Kernel::Doubled,
        "{context}:\n{program}"
    );
    let text = program.to_string();
    assert_eq!(
        tile_thread::parse_program(&text).unwrap().to_string(),
        text,
        "{context}"
    );
    let mut got = args();
    emulate::run(&program, [1, 1, 1], &mut got).unwrap();
    assert_eq!(
        emulated::bytes(&got, 2),
        emulated::bytes(&want, 2),
        "{context}"
    );
    let mut got = args();
    emulated::run_staged(&func, target, (warps, stages), [1, 1, 1], &mut got).unwrap();
    assert_eq!(
        emulated::bytes(&got, 2),
        emulated::bytes(&want, 2),
        "{context}"
    );
    program
}

#[test]
fn a_transposed_b_on_mma_sync_is_copied_as_stored_and_read_without_trans() {
    // Pairs of block columns (`ldmatrix.x4`), and three (an `x2` for the
    // last); copied where the dot is, and ahead by a pipeline.
    for shape in [[64, 64, 64], [64, 32, 24], [32, 128, 32]] {
        for stages in [1, 3] {
            let program = check(Target::Nvptx(Sm::Sm80), shape, (4, stages));
            let transposed_reads = count(&program, |k| {
                matches!(
                    k,
                    ThreadOpKind::LdMatrix {
                        shape: LdMatrix { trans: true, .. },
                        ..
                    }
                )
            });
            assert_eq!(transposed_reads, 0, "{shape:?}:\n{program}");
        }
    }
}

/// An FP8 (sm_89) or TF32 (sm_80) `b` transposed is copied as stored and
/// read K-major by `ldmatrix`, as `a` is (a lane's register is 4 FP8 or 1
/// TF32 consecutive `k` of its column), not element by element.
#[test]
fn fp8_and_tf32_transposed_bs_on_mma_sync_are_read_by_ldmatrix() {
    let cases = [
        (DType::F8E4M3, Sm::Sm89, [64, 64, 64]),
        (DType::F8E5M2, Sm::Sm89, [64, 32, 24]),
        (DType::F32, Sm::Sm80, [64, 32, 64]),
        (DType::F32, Sm::Sm80, [64, 16, 24]),
    ];
    for (dtype, sm, shape) in cases {
        for stages in [1, 3] {
            let target = Target::Nvptx(sm);
            let program = check_kernel_of(Kernel::Keys, dtype, target, shape, (4, stages));
            let element_reads = count(&program, |k| {
                matches!(k, ThreadOpKind::LoadShared { width: 1, .. })
            });
            assert_eq!(element_reads, 0, "{dtype} {shape:?}:\n{program}");
        }
    }
}

#[test]
fn a_transposed_b_on_wgmma_is_read_k_major() {
    emulated::require(Tool::Ptxas);
    let target = Target::Nvptx(Sm::Sm90a);
    // One and two blocks of 64 `k`, one and two warpgroups, `N` of 64 and
    // 128.
    for (shape, warps) in [([64, 64, 64], 4), ([64, 128, 128], 4), ([128, 64, 128], 8)] {
        for stages in [1, 3] {
            let program = check(target, shape, (warps, stages));
            let k_major = count(
                &program,
                |k| matches!(k, ThreadOpKind::Wgmma { kind, .. } if kind.b_major == Major::K),
            );
            let all = count(&program, |k| matches!(k, ThreadOpKind::Wgmma { .. }));
            assert!(all > 0 && k_major == all, "{shape:?}:\n{program}");
            let ptx = emit(&program, target, &CodegenOptions::default())
                .unwrap()
                .assembly;
            assert!(ptx.contains("p, 1, 1, 0, 0;"), "{ptx}");
            // A K-major B's rows reach past one atom: an `N` of 128 is one
            // instruction wide (the warpgroups split M).
            let wide = if shape[2] == 128 { 128 } else { 64 };
            assert!(ptx.contains(&format!("m64n{wide}k16")), "{shape:?}: {ptx}");
            let usage = tools::ptxas_resource_usage(&ptx, Sm::Sm90a).unwrap();
            assert!(usage.contains("0 bytes spill stores"), "{usage}");
        }
    }
}

/// A block of keys read by two products, transposed and as it is, is
/// copied once an iteration by a pipelined loop, as a block read by one
/// product is, and both read that stage: on `mma.sync` and on `wgmma`.
#[test]
fn a_tile_read_by_two_products_is_copied_once() {
    let shape = [64, 64, 64];
    for target in [Target::Nvptx(Sm::Sm80), Target::Nvptx(Sm::Sm90a)] {
        let k_copies = |program: &Program| {
            count(program, |k| {
                matches!(k, ThreadOpKind::CopyAsync { param: 1, .. })
            })
        };
        let once = check_kernel(Kernel::Keys, target, shape, (4, 3));
        let twice = check_kernel(Kernel::Twice, target, shape, (4, 3));
        assert_eq!(k_copies(&twice), k_copies(&once), "{target}:\n{twice}");
        // Without a pipeline each product copies it where it is.
        check_kernel(Kernel::Twice, target, shape, (4, 1));
    }
}

/// A product of fewer than 64 columns whose `b` is read K-major (attention's
/// `q·kᵀ` over 32 keys, its backward's `k·qᵀ` over 32 queries) runs on
/// `wgmma` with its own `N`, not on `mma.sync`: from a copied tile, from
/// registers stored transposed, and as the A of a chained product.
#[test]
fn narrow_products_run_on_wgmma_with_their_own_n() {
    emulated::require(Tool::Ptxas);
    let target = Target::Nvptx(Sm::Sm90a);
    let cases = [
        (Kernel::Keys, [64, 64, 32], 4),
        (Kernel::Keys, [128, 128, 16], 8),
        (Kernel::Doubled, [64, 64, 32], 4),
        (Kernel::Twice, [64, 64, 32], 4),
    ];
    for (kernel, shape, warps) in cases {
        for stages in [1, 3] {
            let program = check_kernel(kernel, target, shape, (warps, stages));
            let n = shape[2];
            let narrow = count(&program, |k| match k {
                ThreadOpKind::Wgmma { kind, .. } | ThreadOpKind::WgmmaRegisterA { kind, .. } => {
                    kind.n == n && kind.b_major == Major::K
                }
                _ => false,
            });
            let mma_sync = count(&program, |k| matches!(k, ThreadOpKind::Mma { .. }));
            let context = format!("{kernel:?} {shape:?} {stages} stages");
            assert!(narrow > 0 && mma_sync == 0, "{context}:\n{program}");
            let ptx = emit(&program, target, &CodegenOptions::default())
                .unwrap()
                .assembly;
            assert!(ptx.contains(&format!("m64n{n}k16")), "{context}: {ptx}");
            let usage = tools::ptxas_resource_usage(&ptx, Sm::Sm90a).unwrap();
            assert!(usage.contains("0 bytes spill stores"), "{context}: {usage}");
        }
    }
}

/// With `tma`, the pipeline's copies of a block of keys read transposed
/// are the TMA's boxes of the tile as stored (a K-major B's blocks are an
/// A's), of 16-bit or FP8 elements: no `cp.async`; the lockstep emulator
/// and the emulation target, which model the boxes and the mbarriers,
/// equal the interpreter.
#[test]
fn the_tma_copies_a_transposed_b() {
    for target in [Sm::Sm90a, Sm::Sm120a] {
        tma_copies_a_transposed_b(Target::Nvptx(target));
    }
}

/// [`the_tma_copies_a_transposed_b`] on `target`.
fn tma_copies_a_transposed_b(target: Target) {
    let (kernel, blocks, stages) = (Kernel::Masked, 3, 3);
    let cases = [
        (DType::F16, [64, 64, 64], 4),
        (DType::F16, [64, 128, 32], 4),
        (DType::F16, [128, 64, 64], 8),
        // FP8 rows of 128 `k` are 128 bytes: one box each.
        (DType::F8E4M3, [64, 128, 64], 4),
        (DType::F8E5M2, [128, 256, 32], 8),
    ];
    for (dtype, shape, warps) in cases {
        let context = format!("{target} {dtype} {shape:?}");
        let func = kernel.function(dtype, shape, blocks);
        let args = || kernel.args(dtype, shape, blocks);
        let mut want = args();
        interp::run(&func, [1, 1, 1], &mut want).unwrap();
        let lowering = LowerOptions::warps(warps)
            .with_tensor_cores(target.tensor_cores())
            .with_stages(stages)
            .with_tma(true);
        let program = lower(&func, &lowering).unwrap();
        let boxes = count(&program, |k| matches!(k, ThreadOpKind::TmaLoad { .. }));
        let copies = count(&program, |k| matches!(k, ThreadOpKind::CopyAsync { .. }));
        assert!(boxes > 0 && copies == 0, "{context}:\n{program}");
        assert_eq!(program.tma_maps(), [(1, shape[2] as u16)], "{context}");
        let mut lockstep = args();
        emulate::run(&program, [1, 1, 1], &mut lockstep).unwrap();
        assert_eq!(
            emulated::bytes(&lockstep, 2),
            emulated::bytes(&want, 2),
            "{context}"
        );
        let module =
            emulated::lowered_module(&func, target, &lowering, &CodegenOptions::default()).unwrap();
        let image = emulated::image(&module).unwrap();
        let mut got = args();
        let maps = program.tma_maps();
        emulated::launch_with_maps(&image, ([1, 1, 1], warps), &mut got, &|_, b| b, &maps)
            .unwrap_or_else(|e| panic!("{context}: {e}"));
        assert_eq!(
            emulated::bytes(&got, 2),
            emulated::bytes(&want, 2),
            "{context}"
        );
    }
}

/// FP8 operands (`e4m3`, `e5m2`) on sm_90a's `wgmma.m64nNk32` and sm_100a's
/// `tcgen05.mma.kind::f8f6f4`, both reading them K-major: the keys, a B
/// transposed, copied as stored and read through A's swizzle (rows of
/// 128, 64 or 32 bytes for `K` of 128, 64, 32), with and without a
/// pipeline; lockstep emulator and emulation target equal the interpreter,
/// and `ptxas` assembles the instructions without spills.
#[test]
fn fp8_products_run_k_major_on_wgmma_and_tcgen05() {
    emulated::require(Tool::Ptxas);
    // The dot's `[m, d, n]`, the warps, and the `N` of sm_90a's instructions:
    // the widest of 256, 128 and 64 that divides `n` and whose blocks the
    // warpgroups share (a K-major B's rows reach any width), else `n`.
    let cases = [
        (DType::F8E4M3, [64, 128, 64], 4, 64),
        (DType::F8E5M2, [64, 64, 64], 4, 64),
        (DType::F8E4M3, [128, 32, 128], 8, 128),
        (DType::F8E4M3, [64, 64, 128], 8, 64),
        (DType::F8E5M2, [128, 128, 64], 4, 64),
        (DType::F8E4M3, [64, 64, 32], 4, 32),
    ];
    for (dtype, shape, warps, wide) in cases {
        for stages in [1, 3] {
            let context = format!("{dtype} {shape:?} {stages} stages");
            let sm90a = Target::Nvptx(Sm::Sm90a);
            let program = check_kernel_of(Kernel::Keys, dtype, sm90a, shape, (warps, stages));
            let wgmmas = count(&program, |k| {
                matches!(k, ThreadOpKind::Wgmma { kind, .. }
                    if kind.dtype == dtype && kind.b_major == Major::K && kind.k() == 32)
            });
            let mma_sync = count(&program, |k| matches!(k, ThreadOpKind::Mma { .. }));
            // One instruction per 32 `k` and 64×`wide` block of D, the
            // blocks shared among the warpgroups.
            let [m, d, n] = shape;
            let per_k_tile = (m / 64) * (n / wide) * (d / 32) / (warps as usize / 4);
            assert_eq!((wgmmas, mma_sync), (per_k_tile, 0), "{context}:\n{program}");
            let ptx_type = if dtype == DType::F8E4M3 {
                "e4m3"
            } else {
                "e5m2"
            };
            let instruction = format!("m64n{wide}k32.f32.{ptx_type}.{ptx_type}");
            emulated::assembles(&program, sm90a, &instruction, &context);
            if m % 128 != 0 {
                continue;
            }
            let kind = "tcgen05.mma.cta_group::1.kind::f8f6f4";
            let tcgen05 = k_major_tcgen05(dtype, shape, (warps, stages), kind, &context);
            assert_eq!(tcgen05, (m / 128) * (d / 32), "{context}");
        }
    }
}

/// The keys kernel on `dtype` on sm_100a, checked ([`check_kernel_of`])
/// and assembled with `instruction` in its PTX: its `tcgen05.mma`s that
/// read B K-major, one thread issuing them all with `N` as wide as divides
/// `n` (at most 256).
fn k_major_tcgen05(
    dtype: DType,
    shape @ [_, _, n]: [usize; 3],
    (warps, stages): (u32, u32),
    instruction: &str,
    context: &str,
) -> usize {
    let sm100a = Target::Nvptx(Sm::Sm100a);
    let program = check_kernel_of(Kernel::Keys, dtype, sm100a, shape, (warps, stages));
    emulated::assembles(&program, sm100a, instruction, context);
    count(&program, |k| {
        matches!(k, ThreadOpKind::Tcgen05Mma { kind, .. }
            if kind.dtype == dtype && kind.b_major == Major::K && kind.n == n.min(256))
    })
}

/// 16-bit operands whose `K` is 32 or 16 (PyTorch's `[N, K]` weights at
/// a `BLOCK_K` of 32): a transposed `b` is copied as stored and read
/// K-major in A's rows, 64 or 32 bytes under the 64- or 32-byte swizzle,
/// by `wgmma` and by `tcgen05.mma`, instead of being loaded into registers
/// and stored transposed.
#[test]
fn narrow_k_transposed_bs_run_k_major_in_as_rows() {
    emulated::require(Tool::Ptxas);
    // The dot's `[m, d, n]`, the warps, and the `N` of sm_90a's instructions.
    let cases = [
        (DType::F16, [64, 32, 64], 4, 64),
        (DType::BF16, [64, 16, 128], 4, 128),
        (DType::F16, [128, 32, 128], 8, 128),
        (DType::BF16, [128, 32, 64], 4, 64),
    ];
    for (dtype, shape @ [m, d, n], warps, wide) in cases {
        for stages in [1, 3] {
            let context = format!("{dtype} {shape:?} {stages} stages");
            let sm90a = Target::Nvptx(Sm::Sm90a);
            let program = check_kernel_of(Kernel::Keys, dtype, sm90a, shape, (warps, stages));
            let swizzle = if d == 32 { ".sw64" } else { ".sw32" };
            let wgmmas = count(&program, |k| {
                matches!(k, ThreadOpKind::Wgmma { kind, .. }
                    if kind.dtype == dtype && kind.b_major == Major::K && kind.n == wide)
            });
            let per_k_tile = (m / 64) * (n / wide) * (d / 16) / (warps as usize / 4);
            assert_eq!(wgmmas, per_k_tile, "{context}:\n{program}");
            assert!(
                program.to_string().contains(swizzle),
                "{context}:\n{program}"
            );
            let instruction = format!("m64n{wide}k16.f32.{dtype}.{dtype}");
            emulated::assembles(&program, sm90a, &instruction, &context);
            if m % 128 != 0 {
                continue;
            }
            let kind = "tcgen05.mma.cta_group::1.kind::f16";
            let tcgen05 = k_major_tcgen05(dtype, shape, (warps, stages), kind, &context);
            assert_eq!(tcgen05, (m / 128) * (d / 16), "{context}");
        }
    }
}

/// FP8 operands with `b` read as stored (`[K, N]`, MN-major): sm_100a's
/// `tcgen05.mma.kind::f8f6f4` reads E4M3 and E5M2 MN-major, in blocks of
/// 128 `n` (one 128-byte atom, an instruction `N` of 128); sm_90a's FP8
/// `wgmma`, K-major only, leaves the dot to `mma.sync`.
#[test]
fn fp8_products_read_an_mn_major_b_on_tcgen05_only() {
    emulated::require(Tool::Ptxas);
    let sm100a = Target::Nvptx(Sm::Sm100a);
    for (dtype, shape @ [m, d, n], warps) in [
        (DType::F8E4M3, [128, 64, 128], 4),
        (DType::F8E5M2, [128, 128, 256], 8),
    ] {
        for stages in [1, 3] {
            let context = format!("{dtype} {shape:?} {stages} stages");
            let program = check_kernel_of(Kernel::Rows, dtype, sm100a, shape, (warps, stages));
            let tcgen05 = count(&program, |k| {
                matches!(k, ThreadOpKind::Tcgen05Mma { kind, .. }
                    if kind.dtype == dtype && kind.b_major == Major::Mn && kind.n == 128)
            });
            assert_eq!(
                tcgen05,
                (m / 128) * (n / 128) * (d / 32),
                "{context}:\n{program}"
            );
            emulated::assembles(
                &program,
                sm100a,
                "tcgen05.mma.cta_group::1.kind::f8f6f4",
                &context,
            );
        }
        let sm90a = Target::Nvptx(Sm::Sm90a);
        let program = check_kernel_of(Kernel::Rows, dtype, sm90a, shape, (warps, 3));
        let wgmmas = count(&program, |k| matches!(k, ThreadOpKind::Wgmma { .. }));
        let mma_sync = count(&program, |k| matches!(k, ThreadOpKind::Mma { .. }));
        assert!(wgmmas == 0 && mma_sync > 0, "{dtype} {shape:?}:\n{program}");
    }
}

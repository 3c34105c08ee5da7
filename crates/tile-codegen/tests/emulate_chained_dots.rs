//! Chained products (attention's `p = cast(q·kᵀ)` into `p·v`) on
//! `mma.sync` and on MFMA: both run with warps (waves) along M only, the
//! first MFMA product transposed, and the second takes its `a` fragments
//! from the registers the first left, with no staging through shared
//! memory; the results are the interpreter's on the lockstep
//! emulator and every emulation target (small integers, so every order of
//! the sums is exact).

mod emulated;

use tile_codegen::{Gfx, Sm, Target};
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{verify, Function};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};
use tile_thread::program::LdMatrix;
use tile_thread::{Program, Reg, ThreadOpKind};

/// `o = cast(q · k, f16) · v` for `q: [64, 16]`, `k: [16, 32]`, `v: [32,
/// 32]` (both products on MFMA's 32×32 blocks); with `scale`, `p` is `q·k`
/// times a scalar first (an elementwise op between the products).
fn kernel(scale: bool) -> Function {
    let (scaled, p) = match scale {
        true => (
            "  %two = full 2.0 : tile<64x32xf32>\n  %s2 = mul %s, %two : tile<64x32xf32>\n",
            "%s2",
        ),
        false => ("", "%s"),
    };
    let text = format!(
        r#"kernel @chained(%q: tensor<f16, 2>, %k: tensor<f16, 2>, %v: tensor<f16, 2>, %o: tensor<f32, 2>) {{
  %zero = constant 0 : i32
  %vq = partition_view %q [64, 16] : view<f16, [64, 16]>
  %qt = load %vq[%zero, %zero] : tile<64x16xf16>
  %vk = partition_view %k [16, 32] : view<f16, [16, 32]>
  %kt = load %vk[%zero, %zero] : tile<16x32xf16>
  %z1 = full 0.0 : tile<64x32xf32>
  %s = dot tensor %qt, %kt, %z1 : tile<64x32xf32>
{scaled}  %p = cast {p} to f16 : tile<64x32xf16>
  %vv = partition_view %v [32, 32] : view<f16, [32, 32]>
  %vt = load %vv[%zero, %zero] : tile<32x32xf16>
  %z2 = full 0.0 : tile<64x32xf32>
  %ot = dot tensor %p, %vt, %z2 : tile<64x32xf32>
  %vo = partition_view %o [64, 32] : view<f32, [64, 32]>
  store %ot, %vo[%zero, %zero]
}}"#
    );
    let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

/// Small integers: every product and sum is exact in f32 and every `p` in f16.
fn args() -> Vec<Arg> {
    vec![
        emulated::small_f16s(&[64, 16], 1),
        emulated::small_f16s(&[16, 32], 2),
        emulated::small_f16s(&[32, 32], 3),
        Arg::Tensor(HostTensor::from_vec(&[64, 32], vec![0f32; 64 * 32]).unwrap()),
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
            (ThreadOpKind::StoreShared { .. }, [_, value, _]) => cast(*value),
            _ => false,
        })
        .count()
}

#[test]
fn a_chained_products_second_operand_stays_in_registers() {
    for scale in [false, true] {
        let func = kernel(scale);
        let mut want = args();
        interp::run(&func, [1, 1, 1], &mut want).unwrap();
        // `mma.sync`, and MFMA (whose first product is computed transposed).
        for target in [Target::Nvptx(Sm::Sm80), Target::Amdgpu(Gfx::Gfx942)] {
            let options = LowerOptions::warps(4).with_tensor_cores(target.tensor_cores());
            let program = lower(&func, &options).unwrap();
            assert_eq!(casts_staged(&program), 0, "{target}:\n{program}");
            if target == Target::Nvptx(Sm::Sm80) {
                // The first product's `q` (one 16×16 block row a warp, one
                // k-step); none for `p`.
                assert_eq!(a_fragment_loads(&program), 1, "{program}");
            }
            let mut got = args();
            emulate::run(&program, [1, 1, 1], &mut got).unwrap();
            assert_eq!(
                emulated::bytes(&got, 3),
                emulated::bytes(&want, 3),
                "{target}"
            );
        }
        emulated::agrees(&func, args, 3, [1, 1, 1]);
    }
}

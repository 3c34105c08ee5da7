//! Random `dot`s of precision `tensor` (tile-testgen's `dot_case`) on
//! sm_80's and gfx1100's tensor cores, through the lockstep emulator and
//! through the emulation target (the NVPTX module with its `mma.sync`
//! intrinsics, the AMDGPU one with its WMMA): both
//! bit for bit the product summed in the instruction's steps
//! (`products::stepped`, from plain row-major matrices) and within the
//! `tensor` bound of the interpreter's in-order chain.

mod emulated;

use tile_codegen::{Gfx, Sm, Target};
use tile_ir::interp::{self, Arg};
use tile_testgen::products::{dot_case, stepped, within_tensor_bound};
use tile_thread::lower::{lower, LowerOptions};
use tile_thread::ThreadOpKind;

/// The number of random dots.
const CASES: u64 = 24;

fn values(arg: &Arg) -> Vec<f32> {
    match arg {
        Arg::Tensor(t) => t.to_scalars().iter().map(|s| s.to_f64() as f32).collect(),
        Arg::Scalar(s) => vec![s.to_f64() as f32],
    }
}

/// `got` is `want` bit for bit (any NaN equal to any NaN).
fn same(got: &[f32], want: &[f32]) -> bool {
    got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(g, w)| g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()))
}

#[test]
fn random_tensor_dots_on_mma_sync() {
    random_tensor_dots(Target::Nvptx(Sm::Sm80), 8, CASES as usize * 2 / 3);
}

/// The same on gfx1100's WMMA, whose blocks are 16 wide: the dots whose
/// `N` is an odd multiple of 8 stay FMA chains there.
#[test]
fn random_tensor_dots_on_wmma() {
    random_tensor_dots(Target::Amdgpu(Gfx::Gfx1100), 16, CASES as usize / 3);
}

/// Every [`dot_case`] on `target`, whose tensor cores take blocks
/// `block_n` wide; at least `least` of them must use them.
fn random_tensor_dots(target: Target, block_n: usize, least: usize) {
    let cores = target.tensor_cores();
    let mut on_tensor_cores = 0;
    for seed in 0..CASES {
        let case = dot_case(seed);
        let what = format!("seed {seed}: {:?} on {} warps", case.dims, case.warps);
        let [a, b, c] = &case.values;
        let want = stepped(a, b, c, case.dims, 16);
        let mut reference = case.args.clone();
        interp::run(&case.func, [1, 1, 1], &mut reference).unwrap();
        let lowering = LowerOptions::warps(case.warps).with_tensor_cores(cores);
        let program = lower(&case.func, &lowering).unwrap();
        let (m, k, n) = case.dims;
        let blocks = (m / 16) * (n / block_n);
        let mmas = program
            .ops
            .iter()
            .filter(|(_, op)| matches!(op.kind, ThreadOpKind::Mma { .. }))
            .count();
        // Every block once per k-step, shared by the warps when they can
        // split the blocks evenly: the factors of two of the block counts
        // must cover the warp count.
        let twos = (m / 16).trailing_zeros() + (n / block_n).trailing_zeros();
        let expected = if n % block_n == 0 && twos >= case.warps.trailing_zeros() {
            blocks * (k / 16) / case.warps as usize
        } else {
            0
        };
        assert_eq!(mmas, expected, "{what}");
        on_tensor_cores += usize::from(mmas > 0);
        let mut lockstep = case.args.clone();
        tile_thread::emulate::run(&program, [1, 1, 1], &mut lockstep).unwrap();
        let mut emulated = case.args.clone();
        emulated::run(&case.func, target, case.warps, [1, 1, 1], &mut emulated)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        for (path, args) in [("lockstep", &lockstep), ("emulation target", &emulated)] {
            let got = values(&args[3]);
            if mmas > 0 {
                assert!(
                    same(&got, &want),
                    "{what}: the {path} differs from the steps"
                );
            }
            within_tensor_bound(&got, &values(&reference[3]), a, b, c, case.dims)
                .unwrap_or_else(|e| panic!("{what}, {path}: {e}"));
        }
    }
    assert!(
        on_tensor_cores >= least,
        "only {on_tensor_cores} of {CASES} dots ran on the tensor cores of {target}"
    );
}

/// The matmul sample on operands whose rows are padded to whole 16-byte
/// chunks: the NVPTX module copies them with `cp.async` (the edge chunks
/// partly, zero-filled), bit for bit the stepped product.
#[test]
fn padded_operands_are_copied_asynchronously() {
    use tile_ir::{samples, DType};
    use tile_testgen::inputs::{blocks, padded_rows, zeros};
    for dtype in [DType::F16, DType::BF16] {
        let func = samples::matmul(64, 32, 32, dtype).unwrap();
        let (m, k, n) = (100, 75, 45);
        let args = vec![
            padded_rows(31, m, k, 80, dtype),
            padded_rows(32, k, n, 48, dtype),
            zeros(&[m, n]),
        ];
        let grid = [blocks(m, 64), blocks(n, 32), 1];
        let mut emulated = args.clone();
        emulated::run(&func, Target::Nvptx(Sm::Sm80), 4, grid, &mut emulated)
            .unwrap_or_else(|e| panic!("{dtype}: {e}"));
        let (a, b, c) = (values(&args[0]), values(&args[1]), values(&args[2]));
        let got = values(&emulated[2]);
        assert!(same(&got, &stepped(&a, &b, &c, (m, k, n), 16)), "{dtype}");
    }
}

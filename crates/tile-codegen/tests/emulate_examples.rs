//! Every sample kernel, as the GPU targets receive it, run on the CPU
//! through the emulation target: bit for bit the interpreter's results, for
//! NVIDIA (sm_80, sm_90, sm_100a) and AMD in wave64 (gfx942, gfx950) and
//! wave32 (gfx1100); `dot`s on tensor cores (`mma.sync` on sm_80 and later,
//! MFMA on gfx942, CDNA 4's on gfx950, WMMA on gfx1100) bit for bit the instruction's steps and within their
//! bound of the interpreter; copies through layout views whose offsets are
//! consecutive, read and written as vectors where aligned and as scalars
//! where not.

mod emulated;

use tile_codegen::{Gfx, Sm, Target};
use tile_ir::interp::{self, Arg};
use tile_ir::{samples, DType, Function};
use tile_testgen::inputs::{blocks, bytes, tensor, tensor_of, zeros};
use tile_testgen::products::{stepped, within_tensor_bound};
use tile_thread::TensorCores;

const TARGETS: [Target; 6] = [
    Target::Nvptx(Sm::Sm80),
    Target::Nvptx(Sm::Sm90),
    Target::Nvptx(Sm::Sm100a),
    Target::Amdgpu(Gfx::Gfx942),
    Target::Amdgpu(Gfx::Gfx950),
    Target::Amdgpu(Gfx::Gfx1100),
];

/// Runs `func` on every target and checks each against the interpreter.
fn agrees(func: &Function, num_warps: u32, grid: [u32; 3], args: Vec<Arg>) {
    let mut expected = args.clone();
    interp::run(func, grid, &mut expected).unwrap_or_else(|e| panic!("interpreter: {e}"));
    for target in TARGETS {
        let mut actual = args.clone();
        emulated::run(func, target, num_warps, grid, &mut actual)
            .unwrap_or_else(|e| panic!("{} on {target}: {e}", func.name));
        assert!(
            bytes(&actual) == bytes(&expected),
            "{} on {target} differs from the interpreter",
            func.name
        );
    }
}

#[test]
fn vector_add() {
    let func = samples::vector_add(256).unwrap();
    let n = 1000;
    agrees(
        &func,
        4,
        [blocks(n, 256), 1, 1],
        vec![tensor(1, &[n]), tensor(2, &[n]), zeros(&[n])],
    );
}

#[test]
fn softmax() {
    let (rows, cols) = (37, 200);
    let func = samples::softmax(4, 256).unwrap();
    agrees(
        &func,
        4,
        [blocks(rows, 4), 1, 1],
        vec![tensor(3, &[rows, cols]), zeros(&[rows, cols])],
    );
}

#[test]
fn layernorm() {
    let (rows, cols) = (9, 300);
    let func = samples::layernorm(2, 384).unwrap();
    let args = vec![
        tensor(4, &[rows, cols]),
        tensor(5, &[cols]),
        tensor(6, &[cols]),
        zeros(&[rows, cols]),
        Arg::Scalar(tile_ir::Scalar::F32(1e-5)),
    ];
    agrees(&func, 4, [blocks(rows, 2), 1, 1], args);
}

#[test]
fn matmul_in_every_dtype() {
    let (m, n, k) = (40, 36, 50);
    for dtype in [DType::F32, DType::F16, DType::BF16] {
        let func = samples::matmul(32, 32, 16, dtype).unwrap();
        let args = vec![
            tensor_of(7, &[m, k], dtype),
            tensor_of(8, &[k, n], dtype),
            tensor_of(9, &[m, n], DType::F32),
        ];
        let grid = [blocks(m, 32), blocks(n, 32), 1];
        if dtype == DType::F32 {
            agrees(&func, 4, grid, args);
            continue;
        }
        // f16 and bf16 dots are `tensor`: bit for bit the interpreter on the
        // targets without tensor cores, the instruction's steps on the others
        // (16 `k` each: on gfx942 the 4 warps are 2 waves, which share the
        // tile's 16×16 MFMA blocks, not its one 32×32 block).
        let mut expected = args.clone();
        interp::run(&func, grid, &mut expected).unwrap();
        let (a, b) = (values(&args[0]), values(&args[1]));
        let c = vec![0.0; m * n];
        for target in TARGETS {
            let mut actual = args.clone();
            emulated::run(&func, target, 4, grid, &mut actual)
                .unwrap_or_else(|e| panic!("{dtype} on {target}: {e}"));
            let got = values(&actual[2]);
            if target.tensor_cores() == TensorCores::None {
                assert!(bytes(&actual) == bytes(&expected), "{dtype} on {target}");
                continue;
            }
            assert_eq!(
                got,
                stepped(&a, &b, &c, (m, k, n), 16),
                "{dtype} on {target}"
            );
            within_tensor_bound(&got, &values(&expected[2]), &a, &b, &c, (m, k, n))
                .unwrap_or_else(|e| panic!("{dtype} on {target}: {e}"));
        }
    }
}

/// A tensor argument's elements as `f32`.
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
fn transpose() {
    let (rows, cols) = (70, 45);
    let func = samples::transpose(32, 32).unwrap();
    agrees(
        &func,
        4,
        [blocks(rows, 32), blocks(cols, 32), 1],
        vec![tensor(10, &[rows, cols]), zeros(&[cols, rows])],
    );
}

/// `out` (`8 × 64`) from the window of `x` (`8 × cols`, row-major) that
/// starts at column `start`, through layout views.
fn lview_window(cols: usize, start: usize) -> Function {
    use tile_testgen::inputs::{f32_tensor, layout};
    let mut b = tile_ir::builder::Builder::new("window");
    let (x, out) = (f32_tensor(&mut b, "x", 1), f32_tensor(&mut b, "out", 1));
    let vx = b
        .layout_view(x, &layout(&format!("(8,{cols}):({cols},1)")))
        .unwrap();
    let vx = b.lview_slice(vx, &[(0, 8), (start, start + 64)]).unwrap();
    let t = b.lview_load(vx).unwrap();
    let vo = b.layout_view(out, &layout("(8,64):(64,1)")).unwrap();
    b.lview_store(t, vo).unwrap();
    b.finish().unwrap()
}

#[test]
fn layout_view_copies_with_vectors_and_without() {
    // Rows of 68 from column 0: vectors of 4 on both sides; from column 1
    // the base is misaligned and x is read by the scalar branch; rows of 66
    // are read in pairs, rows of 65 by scalars.
    for (cols, start) in [(68, 0), (68, 1), (66, 0), (65, 0)] {
        let func = lview_window(cols, start);
        for warps in [1, 2] {
            agrees(
                &func,
                warps,
                [1, 1, 1],
                vec![tensor(11, &[8 * cols]), zeros(&[8 * 64])],
            );
        }
    }
}

#[test]
fn math_functions_of_the_exact_library() {
    use tile_ir::UnaryOp;
    let n = 300;
    for op in [
        UnaryOp::Exp,
        UnaryOp::Log,
        UnaryOp::Sin,
        UnaryOp::Tanh,
        UnaryOp::Erf,
        UnaryOp::Erfc,
        UnaryOp::Atan,
        UnaryOp::Asinh,
        UnaryOp::Cbrt,
    ] {
        let func = samples::unary(op, DType::F32, 128).unwrap();
        agrees(
            &func,
            2,
            [blocks(n, 128), 1, 1],
            vec![tensor(11, &[n]), zeros(&[n])],
        );
    }
}

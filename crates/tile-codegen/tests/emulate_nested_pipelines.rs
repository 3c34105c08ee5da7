//! A software-pipelined `dot` `K` loop inside the control flow that real
//! kernels put around it: a loop over output tiles (`for`, `while`, with
//! the `K` loop behind an `if`), a persistent loop over all tiles, two `K`
//! loops in sequence, a `K` loop after a reduction that used shared
//! memory, and a `K` loop that carries nothing. Each runs the loop's
//! prologue again after the last stages were read, so the lowering must
//! order those reads first (a barrier); the verifier checks that it did
//! (`tile_thread::program::verify`), and here the lockstep emulator and
//! the emulation targets run them against the interpreter, bit for bit:
//! sm_80 and sm_90 on `mma.sync`, sm_90a on `wgmma` (with `cp.async`, and
//! with the TMA asked for: inside another loop its stages are copied with
//! `cp.async`, a loop at the top keeps the TMA), gfx942 on MFMA, gfx1100
//! on WMMA. The operands are small integers, so every order of summation
//! gives the same `f32`.

mod emulated;

use tile_codegen::{CodegenOptions, Gfx, Sm, Target};
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{DType, Function, Scalar};
use tile_testgen::inputs::bytes;
use tile_thread::lower::{lower, LowerOptions};

/// What surrounds the `K` loop.
#[derive(Clone, Copy, Debug)]
enum Shape {
    ForTiles,
    WhileTiles,
    GuardedTiles,
    Persistent,
    TwoLoops,
    AfterReduction,
    /// A `K` loop that carries nothing and stores each slab's product.
    Uncarried,
}

const SHAPES: [Shape; 7] = [
    Shape::ForTiles,
    Shape::WhileTiles,
    Shape::GuardedTiles,
    Shape::Persistent,
    Shape::TwoLoops,
    Shape::AfterReduction,
    Shape::Uncarried,
];

/// `%{out} = for k { acc = dot(a[row, k], b[k, col], acc) }` from `init`.
fn k_loop(out: &str, (row, col): (&str, &str), init: &str, [bm, bn, bk]: [usize; 3]) -> String {
    format!(
        "%{out} = for %{out}_k = %zero to %kt step %one iter(%{out}_acc = {init}) : tile<{bm}x{bn}xf32> {{
  %{out}_a = load_masked %va[{row}, %{out}_k] pad(zero) : tile<{bm}x{bk}xf16>
  %{out}_b = load_masked %vb[%{out}_k, {col}] pad(zero) : tile<{bk}x{bn}xf16>
  %{out}_d = dot tensor %{out}_a, %{out}_b, %{out}_acc : tile<{bm}x{bn}xf32>
  yield %{out}_d
}}
"
    )
}

/// The kernel of `shape` over blocks `[BM, BN, BK]`: program `p` computes
/// the row of output tiles `p` (the persistent kernel: the tiles `t ≡ p`
/// modulo the grid, row-major).
fn kernel(shape: Shape, block: [usize; 3]) -> Function {
    let [bm, bn, bk] = block;
    let store = |r: &str, col: &str| format!("store_masked %{r}, %vc[%row, {col}]\n");
    let body = match shape {
        Shape::ForTiles => format!(
            "for %n = %zero to %nt step %one {{\n{}{}yield\n}}\n",
            k_loop("r", ("%row", "%n"), "%zeros", block),
            store("r", "%n")
        ),
        Shape::WhileTiles => format!(
            "%w = while iter(%i = %zero) : i32 {{
  %more = cmp lt %i, %nt : bool
  yield %more
}} do(%n) {{
{}{}%next = add %n, %one : i32
yield %next
}}
",
            k_loop("r", ("%row", "%n"), "%zeros", block),
            store("r", "%n")
        ),
        Shape::GuardedTiles => format!(
            "for %n = %zero to %nt step %one {{
%any = cmp gt %kt, %zero : bool
%g = if %any : tile<{bm}x{bn}xf32> {{
{}yield %r
}} else {{
yield %zeros
}}
{}yield
}}
",
            k_loop("r", ("%row", "%n"), "%zeros", block),
            store("g", "%n")
        ),
        Shape::Persistent => format!(
            "%programs = num_programs 0 : i32
%mt = dim %c axis 0 : i32
%ml = add %mt, %bm1 : i32
%mtiles = div %ml, %bmc : i32
%tiles = mul %mtiles, %nt : i32
for %t = %pid to %tiles step %programs {{
%tr = div %t, %nt : i32
%tc = rem %t, %nt : i32
{}store_masked %r, %vc[%tr, %tc]
yield
}}
",
            k_loop("r", ("%tr", "%tc"), "%zeros", block)
        ),
        Shape::TwoLoops => format!(
            "{}{}{}",
            k_loop("r1", ("%row", "%zero"), "%zeros", block),
            k_loop("r2", ("%row", "%zero"), "%r1", block),
            store("r2", "%zero")
        ),
        Shape::AfterReduction => format!(
            "%vx = partition_view %x [{bm}, {bn}] : view<f32, [{bm}, {bn}]>
%tx = load_masked %vx[%row, %zero] pad(zero) : tile<{bm}x{bn}xf32>
%sums = reduce sum %tx axis 0 keepdim : tile<1x{bn}xf32>
%start = broadcast %sums to [{bm}, {bn}] : tile<{bm}x{bn}xf32>
{}{}",
            k_loop("r", ("%row", "%zero"), "%start", block),
            store("r", "%zero")
        ),
        Shape::Uncarried => format!(
            "for %k = %zero to %kt step %one {{
%ta = load_masked %va[%row, %k] pad(zero) : tile<{bm}x{bk}xf16>
%tb = load_masked %vb[%k, %zero] pad(zero) : tile<{bk}x{bn}xf16>
%d = dot tensor %ta, %tb, %zeros : tile<{bm}x{bn}xf32>
store_masked %d, %vc[%row, %k]
yield
}}
"
        ),
    };
    let text = format!(
        "kernel @nested(%a: tensor<f16, 2>, %b: tensor<f16, 2>, %c: tensor<f32, 2>, %x: tensor<f32, 2>) {{
%pid = program_id 0 : i32
%row = program_id 0 : i32
%va = partition_view %a [{bm}, {bk}] : view<f16, [{bm}, {bk}]>
%vb = partition_view %b [{bk}, {bn}] : view<f16, [{bk}, {bn}]>
%vc = partition_view %c [{bm}, {bn}] : view<f32, [{bm}, {bn}]>
%zero = constant 0 : i32
%one = constant 1 : i32
%bm1 = constant {} : i32
%bmc = constant {bm} : i32
%ka = dim %a axis 1 : i32
%bk1 = constant {} : i32
%bkc = constant {bk} : i32
%kl = add %ka, %bk1 : i32
%kt = div %kl, %bkc : i32
%nb = dim %b axis 1 : i32
%bn1 = constant {} : i32
%bnc = constant {bn} : i32
%nl = add %nb, %bn1 : i32
%nt = div %nl, %bnc : i32
%zeros = full 0.0 : tile<{bm}x{bn}xf32>
{body}}}
",
        bm - 1,
        bk - 1,
        bn - 1
    );
    parse_function(&text).unwrap_or_else(|e| panic!("{shape:?}: {e}\n{text}"))
}

/// An `m × n` tensor of `dtype` holding small integers from `seed`.
fn integers(seed: usize, [m, n]: [usize; 2], dtype: DType) -> Arg {
    let scalars: Vec<Scalar> = (0..m * n)
        .map(|i| {
            let v = ((i * 7 + seed * 13) % 7) as f64 - 3.0;
            tile_ir::eval::round_f64(v, dtype).unwrap()
        })
        .collect();
    Arg::Tensor(HostTensor::from_scalars(dtype, &[m, n], &scalars).unwrap())
}

/// The arguments of a problem `M × N × K` whose edges are partial tiles
/// (3 tiles along `N` and along `K`).
fn arguments(block: [usize; 3], grid: usize) -> Vec<Arg> {
    let [bm, bn, bk] = block;
    let (m, n, k) = (grid * bm - 3, 2 * bn + 8, 2 * bk + 8);
    vec![
        integers(1, [m, k], DType::F16),
        integers(2, [k, n], DType::F16),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[m, n])),
        integers(3, [grid * bm, bn], DType::F32),
    ]
}

/// One configuration: a target, its lowering and blocks.
struct Config {
    target: Target,
    warps: u32,
    stages: u32,
    tma: bool,
    block: [usize; 3],
}

fn configs() -> Vec<Config> {
    let config = |target, warps, stages, tma, block| Config {
        target,
        warps,
        stages,
        tma,
        block,
    };
    vec![
        config(Target::Nvptx(Sm::Sm80), 4, 2, false, [64, 64, 32]),
        config(Target::Nvptx(Sm::Sm80), 4, 3, false, [32, 32, 16]),
        config(Target::Nvptx(Sm::Sm90), 4, 3, false, [64, 64, 32]),
        config(Target::Nvptx(Sm::Sm90a), 4, 3, false, [64, 64, 64]),
        config(Target::Nvptx(Sm::Sm90a), 4, 2, true, [64, 64, 64]),
        config(Target::Amdgpu(Gfx::Gfx942), 4, 1, false, [32, 32, 16]),
        config(Target::Amdgpu(Gfx::Gfx1100), 2, 1, false, [32, 32, 16]),
    ]
}

#[test]
fn nested_pipelines_agree_with_the_interpreter_on_every_target() {
    let grid = 2;
    for c in configs() {
        for shape in SHAPES {
            let what = format!(
                "{shape:?} on {} ({} warps, {} stages{})",
                c.target,
                c.warps,
                c.stages,
                if c.tma { ", TMA" } else { "" }
            );
            let func = kernel(shape, c.block);
            let args = arguments(c.block, grid);
            let mut expected = args.clone();
            interp::run(&func, [grid as u32, 1, 1], &mut expected)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let lowering = LowerOptions::warps(c.warps)
                .with_tensor_cores(c.target.tensor_cores())
                .with_stages(c.stages)
                .with_tma(c.tma);
            let program = lower(&func, &lowering).unwrap_or_else(|e| panic!("{what}: {e}"));
            if c.stages > 1 {
                let text = program.to_string();
                let pipelined = text.contains("cp.async.wait") || text.contains("mbarrier.wait");
                assert!(pipelined, "{what}: no pipeline");
                // The TMA copies the stages of a `K` loop at the top only.
                let top = matches!(
                    shape,
                    Shape::TwoLoops | Shape::AfterReduction | Shape::Uncarried
                );
                assert_eq!(text.contains("tma.load"), c.tma && top, "{what}");
            }
            let mut lockstep = args.clone();
            tile_thread::emulate::run(&program, [grid as u32, 1, 1], &mut lockstep)
                .unwrap_or_else(|e| panic!("{what}, lockstep: {e}"));
            assert_eq!(bytes(&lockstep), bytes(&expected), "{what}, lockstep");
            let module =
                emulated::lowered_module(&func, c.target, &lowering, &CodegenOptions::default())
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
            let kernel = emulated::image(&module).unwrap_or_else(|e| panic!("{what}: {e}"));
            let mut actual = args.clone();
            let maps = program.tma_maps();
            let geometry = ([grid as u32, 1, 1], c.warps);
            emulated::launch_with_maps(&kernel, geometry, &mut actual, &|_, b| b, &maps)
                .unwrap_or_else(|e| panic!("{what}, emulated: {e}"));
            assert_eq!(bytes(&actual), bytes(&expected), "{what}, emulated");
        }
    }
}

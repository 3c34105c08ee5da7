//! Layout views through the lowering and the lockstep emulator, equal bit
//! for bit to the interpreter: the tiled transpose through views alone, every
//! view-deriving op, masked accesses past the element space, and the bounds
//! check of an unmasked one; edge tiles (masked views) through every op they
//! take, and the bounds check of an unmasked access to a partial one;
//! swizzled views (vectors where the swizzle keeps runs); and the
//! thread-level program of the transpose.

use tile_testgen::inputs::{f32_tensor, iota, layout, zeros};

use tile_ir::builder::Builder;
use tile_ir::interp::{self, Arg};
use tile_ir::layout::{IntTuple, Layout};
use tile_ir::{DType, Function, Padding, Scalar, Type};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

fn bits(args: &[Arg]) -> Vec<Vec<u8>> {
    args.iter()
        .map(|a| match a {
            Arg::Tensor(t) => t.data().to_vec(),
            Arg::Tensors(ts) => ts.iter().flat_map(|t| t.data().to_vec()).collect(),
            Arg::Scalar(s) => s.to_bits().to_le_bytes().to_vec(),
        })
        .collect()
}

/// Interpreter and emulator (for each warp count) agree on every byte.
fn check(func: &Function, grid: [u32; 3], args: Vec<Arg>) {
    let mut expected = args.clone();
    interp::run(func, grid, &mut expected).unwrap_or_else(|e| panic!("interpreter: {e}"));
    for warps in [1, 2, 4] {
        let program = lower(func, &LowerOptions::warps(warps)).unwrap_or_else(|e| panic!("{e}"));
        tile_thread::program::verify(&program).unwrap();
        let mut actual = args.clone();
        emulate::run(&program, grid, &mut actual).unwrap_or_else(|e| panic!("{warps} warps: {e}"));
        assert_eq!(
            bits(&actual),
            bits(&expected),
            "{} with {warps} warps",
            func.name
        );
    }
}

/// The transpose of docs/ir.md: an 8x12 `x` tile by tile into the same
/// tile of the transposed view of a 12x8 `out`.
fn transpose_views() -> Function {
    let mut b = Builder::new("transpose_views");
    let (x, out) = (f32_tensor(&mut b, "x", 2), f32_tensor(&mut b, "out", 2));
    let (pm, pn) = (b.program_id(0).unwrap(), b.program_id(1).unwrap());
    let vx = b.layout_view(x, &layout("(8,12):(12,1)")).unwrap();
    let vo = b.layout_view(out, &layout("(12,8):(8,1)")).unwrap();
    let vt = b.lview_transpose(vo, &[1, 0]).unwrap();
    let tx = b.lview_tile(vx, &[4, 3], &[pm, pn]).unwrap();
    let to = b.lview_tile(vt, &[4, 3], &[pm, pn]).unwrap();
    let t = b.lview_load(tx).unwrap();
    b.lview_store(t, to).unwrap();
    b.finish().unwrap()
}

#[test]
fn the_tiled_transpose_through_views_matches_the_interpreter() {
    check(
        &transpose_views(),
        [2, 4, 1],
        vec![iota(&[8, 12]), zeros(&[12, 8])],
    );
}

#[test]
fn every_view_deriving_op_matches_the_interpreter() {
    // One kernel per op: the derived view is loaded and stored row-major
    // into a flat output.
    type Derive = Box<dyn Fn(&mut Builder, tile_ir::Value) -> tile_ir::Value>;
    let cases: Vec<(&str, Derive)> = vec![
        (
            "split",
            Box::new(|b, v| {
                let i = b.program_id(0).unwrap();
                b.lview_split(v, 0, 4, i).unwrap()
            }),
        ),
        (
            "slice",
            Box::new(|b, v| b.lview_slice(v, &[(1, 7), (2, 10)]).unwrap()),
        ),
        (
            "vectorize",
            Box::new(|b, v| b.lview_vectorize(v, &[2, 3]).unwrap()),
        ),
        (
            "reshape",
            Box::new(|b, v| b.lview_reshape(v, &[4, 24]).unwrap()),
        ),
        ("coalesce", Box::new(|b, v| b.lview_coalesce(v).unwrap())),
        (
            "compose",
            Box::new(|b, v| b.lview_compose(v, &layout("(4,6):(2,16)")).unwrap()),
        ),
        (
            "distribute",
            Box::new(|b, v| {
                let t = b.program_id(0).unwrap();
                let t = b.cast(t, DType::I64).unwrap();
                b.lview_distribute(v, &layout("(2,3):(3,1)"), t).unwrap()
            }),
        ),
    ];
    for (name, derive) in cases {
        // Launched with 1 and 4 programs; each program stores to a slab of
        // its own (blocks that store one element would race).
        for programs in [1usize, 4] {
            let mut b = Builder::new(name);
            let (x, out) = (f32_tensor(&mut b, "x", 2), f32_tensor(&mut b, "out", 1));
            let vx = b.layout_view(x, &layout("(8,12):(12,1)")).unwrap();
            let view = derive(&mut b, vx);
            let t = b.lview_load(view).unwrap();
            let dims: Vec<usize> = match b.ty(t) {
                Type::Tile(tile) => tile.shape.dims().to_vec(),
                other => panic!("{name}: loaded {other}"),
            };
            let mut slabs: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
            slabs[0] *= programs as i64;
            let row_major = Layout::row_major(IntTuple::flat(&slabs)).unwrap();
            let vo = b.layout_view(out, &row_major).unwrap();
            let pid = b.program_id(0).unwrap();
            let zero = b.constant(Scalar::I32(0)).unwrap();
            let mut at = vec![zero; dims.len()];
            at[0] = pid;
            let mine = b.lview_tile(vo, &dims, &at).unwrap();
            b.lview_store(t, mine).unwrap();
            let func = b.finish().unwrap_or_else(|e| panic!("{name}: {e}"));
            let len = programs * dims.iter().product::<usize>();
            check(
                &func,
                [programs as u32, 1, 1],
                vec![iota(&[8, 12]), zeros(&[len])],
            );
        }
    }
}

#[test]
fn masked_accesses_pad_and_skip_past_the_element_space() {
    // A 16-element view of a 10-element tensor: six elements pad on load
    // and are skipped on store.
    let mut b = Builder::new("masked");
    let (x, out) = (f32_tensor(&mut b, "x", 1), f32_tensor(&mut b, "out", 1));
    let vx = b.layout_view(x, &layout("(4,4):(4,1)")).unwrap();
    let t = b.lview_load_masked(vx, Padding::NegInf).unwrap();
    let vo = b.layout_view(out, &layout("(4,4):(1,4)")).unwrap();
    b.lview_store_masked(t, vo).unwrap();
    let func = b.finish().unwrap();
    check(&func, [1, 1, 1], vec![iota(&[10]), zeros(&[12])]);
}

#[test]
fn an_unmasked_access_past_the_element_space_is_a_reported_bounds_check() {
    let mut b = Builder::new("unchecked");
    let (x, out) = (f32_tensor(&mut b, "x", 1), f32_tensor(&mut b, "out", 1));
    let vx = b.layout_view(x, &layout("16:1")).unwrap();
    let t = b.lview_load(vx).unwrap();
    let vo = b.layout_view(out, &layout("16:1")).unwrap();
    b.lview_store(t, vo).unwrap();
    let func = b.finish().unwrap();
    let mut args = vec![iota(&[10]), zeros(&[16])];
    assert!(interp::run(&func, [1, 1, 1], &mut args.clone()).is_err());
    let program = lower(&func, &LowerOptions::warps(1)).unwrap();
    let err = emulate::run(&program, [1, 1, 1], &mut args)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("bounds check") && err.contains("lview_load"),
        "{err}"
    );
    assert_eq!(
        bits(&args)[1],
        bits(&[zeros(&[16])])[0],
        "the output was not touched"
    );
}

#[test]
fn edge_tiles_match_the_interpreter() {
    for case in tile_testgen::edges::all_copies() {
        if case.name == "wide" || case.name == "sw223" {
            let vectors = ["ld.global.v4", "st.global.v4"];
            assert_eq!(widths(&case.func), vectors, "{}: vectors of 4", case.name);
        }
        check(&case.func, case.grid, case.args);
    }
}

#[test]
fn an_unmasked_access_to_a_partial_edge_tile_is_a_reported_bounds_check() {
    let whole = tile_testgen::edges::edge_unmasked(1, 1);
    check(&whole.func, whole.grid, whole.args);
    for (i, j) in [(0, 2), (2, 0), (3, 1)] {
        let case = tile_testgen::edges::edge_unmasked(i, j);
        let mut args = case.args.clone();
        assert!(interp::run(&case.func, case.grid, &mut args.clone()).is_err());
        let program = lower(&case.func, &LowerOptions::warps(1)).unwrap();
        let err = emulate::run(&program, case.grid, &mut args)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("bounds check") && err.contains("lview_load"),
            "tile ({i}, {j}): {err}"
        );
        assert_eq!(
            bits(&args)[1],
            bits(&case.args)[1],
            "the output was not touched"
        );
    }
}

#[test]
fn a_store_through_a_non_injective_layout_is_refused() {
    let mut b = Builder::new("aliasing");
    let out = f32_tensor(&mut b, "out", 1);
    let t = b.full(Scalar::F32(1.0), &[4, 2]).unwrap();
    let vo = b.layout_view(out, &layout("(4,2):(1,0)")).unwrap();
    b.lview_store(t, vo).unwrap();
    let func = b.finish().unwrap();
    let err = lower(&func, &LowerOptions::warps(1))
        .unwrap_err()
        .to_string();
    assert!(err.contains("sends two elements to one offset"), "{err}");
}

#[test]
fn the_thread_level_program_of_the_transpose() {
    let program = lower(&transpose_views(), &LowerOptions::warps(1)).unwrap();
    insta::assert_snapshot!(program.to_string());
}

/// `out` (`rows × 64`, row-major) from the window of `x` (`rows × cols`,
/// row-major) that starts at column `start` (through `slice`).
fn window(rows: usize, cols: usize, start: usize) -> Function {
    let mut b = Builder::new("window");
    let (x, out) = (f32_tensor(&mut b, "x", 1), f32_tensor(&mut b, "out", 1));
    let vx = b
        .layout_view(x, &layout(&format!("({rows},{cols}):({cols},1)")))
        .unwrap();
    let vx = b
        .lview_slice(vx, &[(0, rows), (start, start + 64)])
        .unwrap();
    let t = b.lview_load(vx).unwrap();
    let vo = b
        .layout_view(out, &layout(&format!("({rows},64):(64,1)")))
        .unwrap();
    b.lview_store(t, vo).unwrap();
    b.finish().unwrap()
}

/// The widths of the program's global accesses, as `ld.global.v<w>` and
/// `st.global.v<w>` in its text.
fn widths(func: &Function) -> Vec<String> {
    let text = lower(func, &LowerOptions::warps(1)).unwrap().to_string();
    let mut found: Vec<String> = text
        .split_whitespace()
        .filter(|w| w.starts_with("ld.global.v") || w.starts_with("st.global.v"))
        .map(str::to_string)
        .collect();
    found.sort();
    found.dedup();
    found
}

#[test]
fn consecutive_offsets_are_vector_accesses_behind_an_alignment_test() {
    // Rows of 68 elements: both sides are vectors of 4 (element by element
    // where the alignment test fails).
    let aligned = window(8, 68, 0);
    let both = ["ld.global.v4", "st.global.v4"];
    assert_eq!(widths(&aligned), both);
    check(&aligned, [1, 1, 1], vec![iota(&[8 * 68]), zeros(&[8 * 64])]);
    // From column 1 the view's base is not a multiple of 4: the same code,
    // whose runtime test sends x's accesses element by element.
    let shifted = window(8, 68, 1);
    assert_eq!(widths(&shifted), both);
    check(&shifted, [1, 1, 1], vec![iota(&[8 * 68]), zeros(&[8 * 64])]);
    // Rows of 66: a vector of 4 would straddle row starts that are not
    // multiples of 4, so x is read by pairs; rows of 65 by scalars alone.
    let pairs = window(8, 66, 0);
    assert_eq!(widths(&pairs), ["ld.global.v2", "st.global.v4"]);
    check(&pairs, [1, 1, 1], vec![iota(&[8 * 66]), zeros(&[8 * 64])]);
    let odd = window(8, 65, 0);
    assert_eq!(widths(&odd), ["ld.global.v1", "st.global.v4"]);
    check(&odd, [1, 1, 1], vec![iota(&[8 * 65]), zeros(&[8 * 64])]);
    // A column of a row-major view: its offsets are not consecutive.
    let mut b = Builder::new("column");
    let (x, out) = (f32_tensor(&mut b, "x", 1), f32_tensor(&mut b, "out", 1));
    let vx = b.layout_view(x, &layout("(64,4):(1,64)")).unwrap();
    let t = b.lview_load(vx).unwrap();
    let vo = b.layout_view(out, &layout("(64,4):(4,1)")).unwrap();
    b.lview_store(t, vo).unwrap();
    let func = b.finish().unwrap();
    assert_eq!(widths(&func), ["ld.global.v1", "st.global.v4"]);
    check(&func, [1, 1, 1], vec![iota(&[256]), zeros(&[256])]);
}

//! Layout views on the host back end, equal byte for byte to the
//! interpreter: the tiled transpose through views alone, every
//! view-deriving op (with program ids and with negative indices, which the
//! view arithmetic divides Euclidean-wise), masked accesses past the element
//! space; an unmasked access past it fails and touches nothing, and a store
//! through a non-injective layout is refused. Edge tiles (masked views)
//! through every op they take, and the fault of an unmasked access to a
//! partial one; swizzled views.

mod common;

use common::{bytes, f32_tensor, host_agrees, iota, layout, run_host, zeros, HostRun};

use tile_codegen::host::HostError;
use tile_ir::builder::Builder;
use tile_ir::interp::{self, Arg};
use tile_ir::layout::{IntTuple, Layout};
use tile_ir::{DType, Padding, Scalar, Type};
use tile_runtime::cpu::{HostFault, RunError};

#[test]
fn the_tiled_transpose_through_views_matches_the_interpreter() {
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
    let func = b.finish().unwrap();
    host_agrees(&func, [2, 4, 1], vec![iota(&[8, 12]), zeros(&[12, 8])]);
}

/// A derived view of an 8x12 `x` from the program id or the scalar `i`.
type Derive = Box<dyn Fn(&mut Builder, tile_ir::Value, tile_ir::Value) -> tile_ir::Value>;

/// Kernels loading a view derived by `derive` (masked, padding with -inf)
/// and storing it row-major into a flat output, each program to a block of
/// its own (programs run in parallel on the CPU device: a shared block
/// would be a race), on every program id up to 3 and for `i` in -5 … 5.
fn check_derived(name: &str, derive: Derive) {
    let mut b = Builder::new(name);
    let (x, out) = (f32_tensor(&mut b, "x", 2), f32_tensor(&mut b, "out", 1));
    let i = b.param("i", Type::Scalar(DType::I64));
    let vx = b.layout_view(x, &layout("(8,12):(12,1)")).unwrap();
    let view = derive(&mut b, vx, i);
    let t = b.lview_load_masked(view, Padding::NegInf).unwrap();
    let dims: Vec<i64> = match b.ty(t) {
        Type::Tile(tile) => tile.shape.dims().iter().map(|&d| d as i64).collect(),
        other => panic!("{name}: loaded {other}"),
    };
    let row_major = Layout::row_major(IntTuple::flat(&dims)).unwrap();
    let vo = b.layout_view(out, &row_major).unwrap();
    // Block `pid` of the output: tile (pid, 0, ..) of the whole extents.
    let p = b.program_id(0).unwrap();
    let zero = b.constant(Scalar::I32(0)).unwrap();
    let mut block = vec![zero; dims.len()];
    block[0] = p;
    let whole: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
    let vo = b.lview_tile(vo, &whole, &block).unwrap();
    b.lview_store_masked(t, vo).unwrap();
    let func = b.finish().unwrap_or_else(|e| panic!("{name}: {e}"));
    for pid in [0u32, 3] {
        for i in [-5i64, -1, 0, 2, 5] {
            let args = vec![
                iota(&[8, 12]),
                zeros(&[4 * 96]),
                Arg::Scalar(Scalar::I64(i)),
            ];
            host_agrees(&func, [pid + 1, 1, 1], args);
        }
    }
}

#[test]
fn every_view_deriving_op_matches_the_interpreter() {
    let cases: Vec<(&str, Derive)> = vec![
        (
            "tile",
            Box::new(|b, v, i| {
                let p = b.program_id(0).unwrap();
                let p = b.cast(p, DType::I64).unwrap();
                b.lview_tile(v, &[4, 3], &[i, p]).unwrap()
            }),
        ),
        (
            "split",
            Box::new(|b, v, _| {
                let p = b.program_id(0).unwrap();
                b.lview_split(v, 0, 4, p).unwrap()
            }),
        ),
        (
            "split_indexed",
            Box::new(|b, v, i| b.lview_split(v, 1, 3, i).unwrap()),
        ),
        (
            "slice",
            Box::new(|b, v, _| b.lview_slice(v, &[(1, 7), (2, 10)]).unwrap()),
        ),
        (
            "vectorize",
            Box::new(|b, v, _| b.lview_vectorize(v, &[2, 3]).unwrap()),
        ),
        (
            "transpose",
            Box::new(|b, v, _| b.lview_transpose(v, &[1, 0]).unwrap()),
        ),
        (
            "reshape",
            Box::new(|b, v, _| b.lview_reshape(v, &[4, 24]).unwrap()),
        ),
        ("coalesce", Box::new(|b, v, _| b.lview_coalesce(v).unwrap())),
        (
            "compose",
            Box::new(|b, v, _| b.lview_compose(v, &layout("(4,6):(2,16)")).unwrap()),
        ),
        (
            "distribute",
            Box::new(|b, v, _| {
                let t = b.program_id(0).unwrap();
                let t = b.cast(t, DType::I64).unwrap();
                b.lview_distribute(v, &layout("(2,3):(3,1)"), t).unwrap()
            }),
        ),
        (
            "distribute_indexed",
            Box::new(|b, v, i| b.lview_distribute(v, &layout("(2,3):(3,1)"), i).unwrap()),
        ),
    ];
    for (name, derive) in cases {
        check_derived(name, derive);
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
    host_agrees(&func, [1, 1, 1], vec![iota(&[10]), zeros(&[12])]);
}

#[test]
fn an_unmasked_access_past_the_element_space_fails_and_touches_nothing() {
    let mut b = Builder::new("unchecked");
    let (x, out) = (f32_tensor(&mut b, "x", 1), f32_tensor(&mut b, "out", 1));
    let vx = b.layout_view(x, &layout("16:1")).unwrap();
    let t = b.lview_load(vx).unwrap();
    let vo = b.layout_view(out, &layout("16:1")).unwrap();
    b.lview_store(t, vo).unwrap();
    let func = b.finish().unwrap();
    let args = vec![iota(&[10]), zeros(&[16])];
    assert!(interp::run(&func, [1, 1, 1], &mut args.clone()).is_err());
    let mut actual = args.clone();
    let err = run_host(&func, [1, 1, 1], &mut actual).unwrap_err();
    assert!(
        matches!(&err, HostRun::Run(RunError::Op { op, fault: HostFault::LViewOutside { base: 0 }, .. }) if op.contains("lview_load")),
        "{err}"
    );
    assert!(bytes(&actual) == bytes(&args), "the output was touched");
}

#[test]
fn edge_tiles_match_the_interpreter() {
    for case in tile_testgen::edges::all_copies() {
        host_agrees(&case.func, case.grid, case.args);
    }
}

#[test]
fn an_unmasked_access_to_a_partial_edge_tile_fails_naming_the_mode() {
    let whole = tile_testgen::edges::edge_unmasked(1, 1);
    host_agrees(&whole.func, whole.grid, whole.args);
    for (i, j, mode, extent) in [(0, 2, 1, 1), (2, 2, 0, 2), (3, 0, 0, 0)] {
        let case = tile_testgen::edges::edge_unmasked(i, j);
        assert!(interp::run(&case.func, case.grid, &mut case.args.clone()).is_err());
        let mut actual = case.args.clone();
        let err = run_host(&case.func, case.grid, &mut actual).unwrap_err();
        assert!(
            matches!(&err, HostRun::Run(RunError::Op { op, fault: HostFault::LViewPastEdge { mode: m, extent: e }, .. }) if op.contains("lview_load") && *m == mode && *e == extent),
            "tile ({i}, {j}): {err}"
        );
        assert!(
            err.to_string().contains(&format!("the layout view is an edge tile of {extent} element(s) along mode {mode}, not the whole tile an unmasked access needs (use the masked form)")),
            "{err}"
        );
        assert!(
            bytes(&actual) == bytes(&case.args),
            "the output was touched"
        );
    }
}

#[test]
fn an_unmasked_swizzled_access_checks_every_offset_first() {
    // Sw<1,3,-1> sends offset 8 of a 16-element tensor to 24; Sw<1,0,1>
    // keeps every offset inside.
    for (swizzle, inside) in [("Sw<1,3,-1>", false), ("Sw<1,0,1>", true)] {
        let mut b = Builder::new("swizzled");
        let (x, out) = (f32_tensor(&mut b, "x", 1), f32_tensor(&mut b, "out", 1));
        let vx = b.layout_view(x, &layout("16:1")).unwrap();
        let vs = b.lview_swizzle(vx, swizzle.parse().unwrap()).unwrap();
        let t = b.lview_load(vs).unwrap();
        let vo = b.layout_view(out, &layout("16:1")).unwrap();
        b.lview_store(t, vo).unwrap();
        let func = b.finish().unwrap();
        let args = vec![iota(&[16]), zeros(&[16])];
        if inside {
            host_agrees(&func, [1, 1, 1], args);
            continue;
        }
        assert!(interp::run(&func, [1, 1, 1], &mut args.clone()).is_err());
        let mut actual = args.clone();
        let err = run_host(&func, [1, 1, 1], &mut actual).unwrap_err();
        assert!(
            matches!(
                &err,
                HostRun::Run(RunError::Op {
                    fault: HostFault::LViewOutside { base: 0 },
                    ..
                })
            ),
            "{err}"
        );
        assert!(bytes(&actual) == bytes(&args), "the output was touched");
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
    let err = run_host(&func, [1, 1, 1], &mut [zeros(&[8])]).unwrap_err();
    assert!(
        matches!(&err, HostRun::Compile(HostError::Unsupported { what }) if what.contains("sends two elements to one offset")),
        "{err}"
    );
}

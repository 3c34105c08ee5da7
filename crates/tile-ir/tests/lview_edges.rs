//! Edge tiles of layout views (Mojo's masked `tile`): a tile extent that
//! does not divide its mode gives a masked view whose runtime extents stop
//! at the mode's end. Checked in the interpreter against dense references:
//! copies through every view op a masked view takes, the padding of a
//! masked load, the error of an unmasked access to a partial tile, the
//! verifier's rules and the text form.

mod lview_support;
use lview_support::*;

use tile_ir::builder::Builder;
use tile_ir::interp::{self, Arg, Fault, InterpError};
use tile_ir::layout::Layout;
use tile_ir::{DType, Function, Padding, Scalar, TensorType, Type, Value};

/// The viewed tensors: 10 rows of 7, row-major. Tiles of 4×3 leave edge
/// tiles of 2 rows and of 1 column, and the element past a row's end is
/// the next row's first: inside the tensor, so only the extents keep it out.
const ROWS: usize = 10;
const COLS: usize = 7;
const TILE: [usize; 2] = [4, 3];
/// The grid of 4×3 tiles covering the tensor.
const GRID: [u32; 2] = [3, 3];

fn layout(text: &str) -> Layout {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e:?}"))
}

fn tensor_param(b: &mut Builder, name: &str) -> Value {
    b.param(name, Type::Tensor(TensorType::new(DType::F32, 2)))
}

/// How a test derives the view it accesses from the edge tile: the same
/// function on the source's and the destination's tile.
type Derive = fn(&mut Builder, Value) -> Value;

/// Which elements of the 10×7 tensor a copy moves: `(row, column)` to
/// whether it is copied.
type Keep = fn(usize, usize) -> bool;

/// A kernel that takes tile `(pid0, pid1)` of both `x` and `out` (10×7,
/// row-major), derives a view from each with `derive`, and copies one to
/// the other with a masked load and a masked store.
fn edge_copy(derive: Derive) -> Function {
    let mut b = Builder::new("edge_copy");
    let (x, out) = (tensor_param(&mut b, "x"), tensor_param(&mut b, "out"));
    let (p0, p1) = (b.program_id(0).unwrap(), b.program_id(1).unwrap());
    let whole = layout("(10,7):(7,1)");
    let vx = b.layout_view(x, &whole).unwrap();
    let vo = b.layout_view(out, &whole).unwrap();
    let tx = b.lview_tile(vx, &TILE, &[p0, p1]).unwrap();
    let to = b.lview_tile(vo, &TILE, &[p0, p1]).unwrap();
    let (dx, dout) = (derive(&mut b, tx), derive(&mut b, to));
    let t = b.lview_load_masked(dx, Padding::Zero).unwrap();
    b.lview_store_masked(t, dout).unwrap();
    b.finish().unwrap()
}

/// Runs `func` over the tile grid, with `z` programs along axis 2, on `x`
/// holding 1, 2, 3, ... and a zero `out`; returns `out`.
fn run_copy(func: &Function, z: u32) -> Vec<f32> {
    let mut args = vec![source(), zeros(&[ROWS, COLS])];
    interp::run(func, [GRID[0], GRID[1], z], &mut args).unwrap_or_else(|e| panic!("{e}"));
    values(&args, 1)
}

fn source() -> Arg {
    tensor(&[ROWS, COLS], (1..=ROWS * COLS).map(|i| i as f32).collect())
}

fn expected(keep: impl Fn(usize, usize) -> bool) -> Vec<f32> {
    (0..ROWS * COLS)
        .map(|i| {
            if keep(i / COLS, i % COLS) {
                (i + 1) as f32
            } else {
                0.0
            }
        })
        .collect()
}

#[test]
fn an_edge_tile_copies_exactly_the_elements_of_the_tensor() {
    let func = edge_copy(|_, v| v);
    let text = func.to_string();
    assert!(
        text.contains("lview_tile %2 [4, 3] [%0, %1] : lview<f32, (4,3):(7,1), masked>"),
        "{text}"
    );
    assert_eq!(run_copy(&func, 1), expected(|_, _| true));
}

#[test]
fn every_op_a_masked_view_takes_keeps_its_extents() {
    let cases: Vec<(&str, Derive, u32, Keep)> = vec![
        (
            "transpose",
            |b, v| b.lview_transpose(v, &[1, 0]).unwrap(),
            1,
            |_, _| true,
        ),
        (
            "tile of the edge tile",
            |b, v| {
                let (zero, i) = (
                    b.constant(Scalar::I32(0)).unwrap(),
                    b.program_id(2).unwrap(),
                );
                b.lview_tile(v, &[2, 3], &[i, zero]).unwrap()
            },
            2,
            |_, _| true,
        ),
        (
            "split",
            |b, v| {
                let i = b.program_id(2).unwrap();
                b.lview_split(v, 0, 2, i).unwrap()
            },
            2,
            |_, _| true,
        ),
        (
            "distribute",
            |b, v| {
                let tid = b.program_id(2).unwrap();
                b.lview_distribute(v, &layout("(2,3):(3,1)"), tid).unwrap()
            },
            6,
            |_, _| true,
        ),
        (
            "slice",
            |b, v| b.lview_slice(v, &[(1, 4), (1, 3)]).unwrap(),
            1,
            |r, c| r % 4 != 0 && c % 3 != 0,
        ),
    ];
    for (name, derive, programs, keep) in cases {
        let func = edge_copy(derive);
        assert_eq!(run_copy(&func, programs), expected(keep), "{name}");
    }
}

#[test]
fn a_masked_load_pads_the_elements_past_the_edge() {
    // Each 4×3 tile, padded with -1 past the tensor's edge, stored whole
    // into the same tile of a 12×9 output.
    let mut b = Builder::new("edge_pad");
    let (x, out) = (tensor_param(&mut b, "x"), tensor_param(&mut b, "out"));
    let (p0, p1) = (b.program_id(0).unwrap(), b.program_id(1).unwrap());
    let vx = b.layout_view(x, &layout("(10,7):(7,1)")).unwrap();
    let vo = b.layout_view(out, &layout("(12,9):(9,1)")).unwrap();
    let tx = b.lview_tile(vx, &TILE, &[p0, p1]).unwrap();
    let to = b.lview_tile(vo, &TILE, &[p0, p1]).unwrap();
    let t = b
        .lview_load_masked(tx, Padding::Value(Scalar::F32(-1.0)))
        .unwrap();
    b.lview_store(t, to).unwrap();
    let func = b.finish().unwrap();
    let mut args = vec![source(), zeros(&[12, 9])];
    interp::run(&func, [3, 3, 1], &mut args).unwrap();
    let want: Vec<f32> = (0..12 * 9)
        .map(|i| {
            let (r, c) = (i / 9, i % 9);
            if r < ROWS && c < COLS {
                (r * COLS + c + 1) as f32
            } else {
                -1.0
            }
        })
        .collect();
    assert_eq!(values(&args, 1), want);
}

/// `x`'s tile `(i, j)` of 4×3 loaded unmasked and stored densely.
fn unmasked(i: i64, j: i64) -> Result<Vec<Arg>, InterpError> {
    let src = format!(
        "kernel @k(%x: tensor<f32, 2>, %out: tensor<f32, 2>) {{
  %i = constant {i} : i64
  %j = constant {j} : i64
  %v = layout_view %x <(10,7):(7,1)> : lview<f32, (10,7):(7,1)>
  %t = lview_tile %v [4, 3] [%i, %j] : lview<f32, (4,3):(7,1), masked>
  %a = lview_load %t : tile<4x3xf32>
  %w = layout_view %out <(4,3):(3,1)> : lview<f32, (4,3):(3,1)>
  lview_store %a, %w
}}"
    );
    run_text(&src, vec![source(), zeros(&[4, 3])])
}

#[test]
fn an_unmasked_access_needs_the_whole_tile() {
    // A whole tile of a masked view loads unmasked.
    let out = unmasked(1, 1).unwrap();
    let want: Vec<f32> = (0..12)
        .map(|k| ((4 + k / 3) * COLS + 3 + k % 3 + 1) as f32)
        .collect();
    assert_eq!(values(&out, 1), want);
    // Tile (0, 2) has one column; tile (2, 2) two rows and one column: the
    // error names the first mode it is short along.
    for (i, j, message) in [
        (0, 2, "element [0, 1] of the layout view (4,3):(7,1) is past the edge tile's extent 1 along mode 1 (use the masked form)"),
        (2, 2, "element [2, 0] of the layout view (4,3):(7,1) is past the edge tile's extent 2 along mode 0 (use the masked form)"),
        (3, 0, "element [0, 0] of the layout view (4,3):(7,1) is past the edge tile's extent 0 along mode 0 (use the masked form)"),
    ] {
        let err = unmasked(i, j).unwrap_err();
        assert!(
            matches!(&err, InterpError::Op { fault, .. } if matches!(**fault, Fault::LViewPastEdge { .. })),
            "{err:?}"
        );
        assert!(err.to_string().contains(message), "{err}");
    }
}

/// The verifier's message for `op` (a line using `%t`, the edge tile
/// `lview<f32, (4,3):(7,1), masked>`, and `%c0`).
fn refused(op: &str) -> String {
    let src = format!(
        "kernel @k(%x: tensor<f32, 2>) {{
  %c0 = constant 0 : i32
  %v = layout_view %x <(10,7):(7,1)> : lview<f32, (10,7):(7,1)>
  %t = lview_tile %v [4, 3] [%c0, %c0] : lview<f32, (4,3):(7,1), masked>
{op}
}}"
    );
    let func = tile_ir::text::parse_function(&src).unwrap_or_else(|e| panic!("{e}"));
    tile_ir::verify::verify(&func).unwrap_err().to_string()
}

#[test]
fn ops_that_regroup_modes_refuse_a_masked_view() {
    for (op, name) in [
        (
            "  %r = lview_vectorize %t [1, 3] : lview<f32, (4,1):(7,0)>",
            "lview_vectorize",
        ),
        (
            "  %r = lview_reshape %t [12] : lview<f32, 12:1>",
            "lview_reshape",
        ),
        (
            "  %r = lview_coalesce %t : lview<f32, (4,3):(7,1)>",
            "lview_coalesce",
        ),
        (
            "  %r = lview_compose %t <(2,2):(1,2)> : lview<f32, (2,2):(1,2)>",
            "lview_compose",
        ),
    ] {
        let err = refused(op);
        assert!(
            err.contains(name) && err.contains("a masked view (an edge tile, with a runtime extent per mode) does not take an op that regroups elements across modes: derive this view before the edge tile"),
            "{err}"
        );
    }
}

#[test]
fn an_edge_tile_needs_a_mode_of_one_stride() {
    let mut b = Builder::new("k");
    let x = b.param("x", Type::Tensor(TensorType::new(DType::F32, 1)));
    let zero = b.constant(Scalar::I32(0)).unwrap();
    // A hierarchical mode of two strides: 6 elements at 0, 1, 2, 10, 11, 12.
    let v = b.layout_view(x, &layout("((3,2)):((1,10))")).unwrap();
    let err = b.lview_tile(v, &[4], &[zero]).unwrap_err().to_string();
    assert!(
        err.contains("mode 0 of ((3,2)):((1,10)) is (3,2):(1,10), which the extent 4 does not divide: an edge tile needs a mode of one stride"),
        "{err}"
    );
    // Extents that divide stay unmasked, as before.
    let w = b.layout_view(x, &layout("(3,2):(1,10)")).unwrap();
    let t = b.lview_tile(w, &[3, 1], &[zero, zero]).unwrap();
    assert_eq!(b.ty(t).to_string(), "lview<f32, (3,1):(1,10)>");
}

//! Edge tiles of layout views (Mojo's masked `tile`) and swizzled views, as
//! kernels the tests of every stage run against the interpreter: copies of
//! a row-major tensor whose tile extents do not divide it, through every op
//! a masked view takes, a masked load's padding, unmasked accesses to whole
//! and partial edge tiles, and copies through swizzles.

use crate::inputs::{f32_tensor, layout};
use tile_ir::builder::Builder;
use tile_ir::interp::{Arg, HostTensor};
use tile_ir::{Function, Padding, Scalar, Value};

/// A kernel, its grid and its arguments.
pub struct EdgeCase {
    /// What the case derives from the edge tile.
    pub name: &'static str,
    /// The kernel.
    pub func: Function,
    /// Its grid.
    pub grid: [u32; 3],
    /// Its arguments: the source, then the zeroed output.
    pub args: Vec<Arg>,
}

/// How a case derives the accessed view from an edge tile: the same
/// function on the source's tile and the destination's.
type Derive = fn(&mut Builder, Value) -> Value;

/// A derivation of one side of a copy.
type Side<'a> = &'a dyn Fn(&mut Builder, Value) -> Value;

/// Tile `(pid0, pid1)` of extents `tile` of the `rows`×`cols` views (rows
/// `pitch` elements apart) of `x` and `out`, derived by `derive_x` and
/// `derive_out`, copied from one to the other by a masked load and a
/// masked store.
fn edge_copy(
    name: &str,
    [rows, cols, pitch]: [i64; 3],
    tile: [usize; 2],
    (derive_x, derive_out): (Side<'_>, Side<'_>),
) -> Function {
    let mut b = Builder::new(name);
    let (x, out) = (f32_tensor(&mut b, "x", 2), f32_tensor(&mut b, "out", 2));
    let (p0, p1) = (b.program_id(0).unwrap(), b.program_id(1).unwrap());
    let whole = layout(&format!("({rows},{cols}):({pitch},1)"));
    let vx = b.layout_view(x, &whole).unwrap();
    let vo = b.layout_view(out, &whole).unwrap();
    let tx = b.lview_tile(vx, &tile, &[p0, p1]).unwrap();
    let to = b.lview_tile(vo, &tile, &[p0, p1]).unwrap();
    let (dx, dout) = (derive_x(&mut b, tx), derive_out(&mut b, to));
    let t = b.lview_load_masked(dx, Padding::Zero).unwrap();
    b.lview_store_masked(t, dout).unwrap();
    b.finish().unwrap()
}

/// A `rows`×`cols` f32 tensor holding 1, 2, 3, ... row-major.
pub fn counting(rows: usize, cols: usize) -> Arg {
    let values = (1..=rows * cols).map(|i| i as f32).collect();
    Arg::Tensor(HostTensor::from_vec(&[rows, cols], values).unwrap())
}

fn zeros(rows: usize, cols: usize) -> Arg {
    Arg::Tensor(HostTensor::from_vec(&[rows, cols], vec![0.0f32; rows * cols]).unwrap())
}

/// The copies: a 10×7 tensor in 4×3 tiles (edge tiles of 2 rows and of 1
/// column, where the element past a row's end is the next row's first, so
/// only the extents keep it out), through the edge tile itself, its
/// transpose, a tile of it, `split`, `distribute` and `slice`; and 10×70
/// views of 10×72 tensors in 4×32 tiles, whose rows GPUs access as vectors
/// of 4 that the edge cuts in two (the padding columns stay zero).
pub fn edge_copies() -> Vec<EdgeCase> {
    let cases: [(&'static str, Derive, u32); 6] = [
        ("edge", |_, v| v, 1),
        (
            "transpose",
            |b, v| b.lview_transpose(v, &[1, 0]).unwrap(),
            1,
        ),
        (
            "tile",
            |b, v| {
                let zero = b.constant(Scalar::I32(0)).unwrap();
                let i = b.program_id(2).unwrap();
                b.lview_tile(v, &[2, 3], &[i, zero]).unwrap()
            },
            2,
        ),
        (
            "split",
            |b, v| {
                let i = b.program_id(2).unwrap();
                b.lview_split(v, 0, 2, i).unwrap()
            },
            2,
        ),
        (
            "distribute",
            |b, v| {
                let tid = b.program_id(2).unwrap();
                b.lview_distribute(v, &layout("(2,3):(3,1)"), tid).unwrap()
            },
            6,
        ),
        (
            "slice",
            |b, v| b.lview_slice(v, &[(1, 4), (1, 3)]).unwrap(),
            1,
        ),
    ];
    let mut out: Vec<EdgeCase> = cases
        .into_iter()
        .map(|(name, derive, z)| EdgeCase {
            name,
            func: edge_copy(name, [10, 7, 7], [4, 3], (&derive, &derive)),
            grid: [3, 3, z],
            args: vec![counting(10, 7), zeros(10, 7)],
        })
        .collect();
    out.push(EdgeCase {
        name: "wide",
        func: edge_copy("wide", [10, 70, 72], [4, 32], (&|_, v| v, &|_, v| v)),
        grid: [3, 3, 1],
        args: vec![counting(10, 72), zeros(10, 72)],
    });
    out
}

/// Each 4×3 tile of a 10×7 tensor loaded masked with the padding -1 and
/// stored whole into the same tile of a 12×9 output.
pub fn edge_pad() -> EdgeCase {
    let mut b = Builder::new("edge_pad");
    let (x, out) = (f32_tensor(&mut b, "x", 2), f32_tensor(&mut b, "out", 2));
    let (p0, p1) = (b.program_id(0).unwrap(), b.program_id(1).unwrap());
    let vx = b.layout_view(x, &layout("(10,7):(7,1)")).unwrap();
    let vo = b.layout_view(out, &layout("(12,9):(9,1)")).unwrap();
    let tx = b.lview_tile(vx, &[4, 3], &[p0, p1]).unwrap();
    let to = b.lview_tile(vo, &[4, 3], &[p0, p1]).unwrap();
    let t = b
        .lview_load_masked(tx, Padding::Value(Scalar::F32(-1.0)))
        .unwrap();
    b.lview_store(t, to).unwrap();
    EdgeCase {
        name: "pad",
        func: b.finish().unwrap(),
        grid: [3, 3, 1],
        args: vec![counting(10, 7), zeros(12, 9)],
    }
}

/// Tile `(i, j)` (scalar parameters) of 4×3 of a 10×7 tensor loaded
/// unmasked and stored to a dense 4×3 output: it fails unless the tile is
/// whole.
pub fn edge_unmasked(i: i32, j: i32) -> EdgeCase {
    let mut b = Builder::new("edge_unmasked");
    let (x, out) = (f32_tensor(&mut b, "x", 2), f32_tensor(&mut b, "out", 2));
    let ti = b.param("i", tile_ir::Type::Scalar(tile_ir::DType::I32));
    let tj = b.param("j", tile_ir::Type::Scalar(tile_ir::DType::I32));
    let vx = b.layout_view(x, &layout("(10,7):(7,1)")).unwrap();
    let vo = b.layout_view(out, &layout("(4,3):(3,1)")).unwrap();
    let tx = b.lview_tile(vx, &[4, 3], &[ti, tj]).unwrap();
    let t = b.lview_load(tx).unwrap();
    b.lview_store(t, vo).unwrap();
    EdgeCase {
        name: "unmasked",
        func: b.finish().unwrap(),
        grid: [1, 1, 1],
        args: vec![
            counting(10, 7),
            zeros(4, 3),
            Arg::Scalar(Scalar::I32(i)),
            Arg::Scalar(Scalar::I32(j)),
        ],
    }
}

/// Copies through swizzled views of a 16×16 row-major tensor, in 8×8 tiles
/// (and, for `edge`, 8×6 edge tiles of a 16×14 view): `x`'s tiles seen
/// through `Sw<2,0,3>` (a run of 1 is all it keeps), `Sw<2,2,3>` (runs of 4,
/// so GPUs access vectors) and `Sw<2,4,-3>` (a left shift, which sends some
/// offsets outside: the masked load pads them) stored to plain tiles of
/// `out`, and the swizzle on the stored side instead.
pub fn swizzled_copies() -> Vec<EdgeCase> {
    let swizzles = [
        ("sw203", "Sw<2,0,3>", false, 16),
        ("sw223", "Sw<2,2,3>", false, 16),
        ("sw24m3", "Sw<2,4,-3>", false, 16),
        ("stored", "Sw<2,2,3>", true, 16),
        ("edge", "Sw<1,1,2>", false, 14),
    ];
    swizzles
        .into_iter()
        .map(|(name, swizzle, stored, cols)| {
            let sw: tile_ir::layout::Swizzle = swizzle.parse().unwrap();
            let swizzled = move |b: &mut Builder, v: Value| b.lview_swizzle(v, sw).unwrap();
            let plain = |_: &mut Builder, v: Value| v;
            let derive: (Side<'_>, Side<'_>) = if stored {
                (&plain, &swizzled)
            } else {
                (&swizzled, &plain)
            };
            EdgeCase {
                name,
                func: edge_copy(name, [16, cols, 16], [8, 8], derive),
                grid: [2, 2, 1],
                args: vec![counting(16, 16), zeros(16, 16)],
            }
        })
        .collect()
}

/// Every copy of this module, the padded load and the swizzled copies: the
/// cases that each stage runs against the interpreter.
pub fn all_copies() -> Vec<EdgeCase> {
    let mut cases = edge_copies();
    cases.push(edge_pad());
    cases.extend(swizzled_copies());
    cases
}

//! Whole kernels written with layout views (built with the builder), agreeing
//! with the plain samples; and the passes' treatment of view ops.

mod lview_support;
use lview_support::*;
use tile_ir::builder::{BuildError, Builder};
use tile_ir::interp::run;
use tile_ir::layout::Layout;
use tile_ir::text::parse_function;
use tile_ir::{samples, verify, DType, Function, TensorType, Type};

fn f32_tensor(rank: usize) -> Type {
    Type::Tensor(TensorType::new(DType::F32, rank))
}

fn layout(text: &str) -> Layout {
    text.parse().unwrap()
}

/// `out = xᵀ` for an m×n `x`, one bm×bn tile per program, entirely with
/// layout views: the tile of `x` is stored into the same tile of the
/// transposed view of `out`, so no tile op moves data.
fn view_transpose(m: usize, n: usize, bm: usize, bn: usize) -> Result<Function, BuildError> {
    let mut b = Builder::new("view_transpose");
    let x = b.param("x", f32_tensor(2));
    let out = b.param("out", f32_tensor(2));
    let pid_m = b.program_id(0)?;
    let pid_n = b.program_id(1)?;
    let vx = b.layout_view(x, &layout(&format!("({m},{n}):({n},1)")))?;
    let vo = b.layout_view(out, &layout(&format!("({n},{m}):({m},1)")))?;
    let vo_t = b.lview_transpose(vo, &[1, 0])?;
    let tx = b.lview_tile(vx, &[bm, bn], &[pid_m, pid_n])?;
    let to = b.lview_tile(vo_t, &[bm, bn], &[pid_m, pid_n])?;
    let tile = b.lview_load(tx)?;
    b.lview_store(tile, to)?;
    b.finish()
}

/// The same with the data transposed in registers: load a bm×bn tile,
/// `permute` it and store it to the bn×bm tile of `out`.
fn view_transpose_permute(
    m: usize,
    n: usize,
    bm: usize,
    bn: usize,
) -> Result<Function, BuildError> {
    let mut b = Builder::new("view_transpose_permute");
    let x = b.param("x", f32_tensor(2));
    let out = b.param("out", f32_tensor(2));
    let pid_m = b.program_id(0)?;
    let pid_n = b.program_id(1)?;
    let vx = b.layout_view(x, &layout(&format!("({m},{n}):({n},1)")))?;
    let vo = b.layout_view(out, &layout(&format!("({n},{m}):({m},1)")))?;
    let tx = b.lview_tile(vx, &[bm, bn], &[pid_m, pid_n])?;
    let to = b.lview_tile(vo, &[bn, bm], &[pid_n, pid_m])?;
    let tile = b.lview_load(tx)?;
    let t = b.permute(tile, &[1, 0])?;
    b.lview_store(t, to)?;
    b.finish()
}

#[test]
fn tiled_transpose_through_views_agrees_with_the_sample() {
    for (m, n, bm, bn) in [(8, 12, 4, 3), (6, 6, 2, 6), (5, 7, 1, 7)] {
        let x: Vec<f32> = (0..m * n).map(|i| (i * 7 % 23) as f32 - 11.0).collect();
        let grid = [(m / bm) as u32, (n / bn) as u32, 1];
        let mut want = vec![tensor(&[m, n], x.clone()), zeros(&[n, m])];
        run(&samples::transpose(bm, bn).unwrap(), grid, &mut want).unwrap();
        for func in [
            view_transpose(m, n, bm, bn).unwrap(),
            view_transpose_permute(m, n, bm, bn).unwrap(),
        ] {
            verify::verify(&func).unwrap();
            let text = func.to_string();
            assert_eq!(parse_function(&text).unwrap().to_string(), text);
            let mut got = vec![tensor(&[m, n], x.clone()), zeros(&[n, m])];
            run(&func, grid, &mut got).unwrap();
            assert_eq!(
                values(&got, 1),
                values(&want, 1),
                "{m}x{n} by {bm}x{bn}\n{text}"
            );
        }
    }
}

/// Every layout-view op once, for the round trip.
const EVERY_LVIEW_OP: &str = "kernel @every(%t: tensor<f32, 2>, %i: i32) {
  %0 = layout_view %t <(8,8):(8,1)> : lview<f32, (8,8):(8,1)>
  %1 = lview_tile %0 [4, 2] [%i, %i] : lview<f32, (4,2):(8,1)>
  %2 = lview_split %0 axis 1 parts 4 [%i] : lview<f32, (8,2):(8,1)>
  %3 = lview_vectorize %0 [1, 4] : lview<f32, (8,2,1,4):(8,4,8,1)>
  %4 = lview_slice %0 [1:3, 0:8] : lview<f32, (2,8):(8,1)>
  %5 = lview_transpose %0 [1, 0] : lview<f32, (8,8):(1,8)>
  %6 = lview_reshape %0 [4, 16] : lview<f32, (4,16):(16,1)>
  %7 = lview_compose %0 <(4,2):(2,1)> : lview<f32, (4,2):(16,8)>
  %8 = lview_coalesce %5 : lview<f32, 64:1>
  %9 = lview_distribute %0 <(4,8):(8,1)> %i : lview<f32, (2,1):(32,0)>
  %10 = lview_load %1 : tile<4x2xf32>
  %11 = lview_load_masked %2 pad(neginf) : tile<8x2xf32>
  %12 = lview_load_masked %4 pad(-2.5) : tile<2x8xf32>
  lview_store %10, %1
  lview_store_masked %11, %2
}";

#[test]
fn print_parse_print_is_the_identity_over_every_lview_op() {
    let func = parse_function(EVERY_LVIEW_OP).unwrap();
    verify::verify(&func).unwrap();
    assert_eq!(func.to_string(), EVERY_LVIEW_OP);
    let again = parse_function(&func.to_string()).unwrap();
    assert_eq!(again.to_string(), EVERY_LVIEW_OP);
}

/// The kernel `src` after `cse` then `dce`, printed.
fn after_cse_dce(src: &str) -> String {
    let mut func = parse_function(src).unwrap();
    let mut pm = tile_ir::passes::PassManager::new();
    pm.add("cse").unwrap().add("dce").unwrap();
    pm.run(&mut func, |_, _| {}).unwrap();
    func.to_string()
}

#[test]
fn views_are_pure_loads_read_and_stores_stay() {
    let src = "kernel @k(%t: tensor<f32, 1>, %i: i32) {
  %0 = layout_view %t <(4,4):(4,1)> : lview<f32, (4,4):(4,1)>
  %1 = layout_view %t <(4,4):(4,1)> : lview<f32, (4,4):(4,1)>
  %2 = lview_tile %0 [2, 2] [%i, %i] : lview<f32, (2,2):(4,1)>
  %3 = lview_tile %1 [2, 2] [%i, %i] : lview<f32, (2,2):(4,1)>
  %4 = lview_transpose %0 [1, 0] : lview<f32, (4,4):(1,4)>
  %5 = lview_load %2 : tile<2x2xf32>
  %6 = lview_load %3 : tile<2x2xf32>
  %7 = lview_load %4 : tile<4x4xf32>
  %8 = add %5, %6 : tile<2x2xf32>
  lview_store %8, %3
  %9 = for %k = %i to %i step %i iter(%a = %i) : i32 {
    lview_store_masked %8, %2
    yield %a
  }
}";
    // The equal views merge; the unused transpose and load go; the two
    // loads stay apart (they read memory); both stores and the loop that
    // stores stay although nothing uses their results.
    let want = "kernel @k(%t: tensor<f32, 1>, %i: i32) {
  %0 = layout_view %t <(4,4):(4,1)> : lview<f32, (4,4):(4,1)>
  %1 = lview_tile %0 [2, 2] [%i, %i] : lview<f32, (2,2):(4,1)>
  %2 = lview_load %1 : tile<2x2xf32>
  %3 = lview_load %1 : tile<2x2xf32>
  %4 = add %2, %3 : tile<2x2xf32>
  lview_store %4, %1
  %5 = for %6 = %i to %i step %i iter(%7 = %i) : i32 {
    lview_store_masked %4, %1
    yield %7
  }
}";
    assert_eq!(after_cse_dce(src), want);
}

/// The syntax examples of the op table in `docs/ir.md`, which all apply to
/// the view `%v` of `(4,8):(8,1)`.
const DOCS_TABLE: &str = "kernel @docs(%t: tensor<f32, 1>, %i: i32, %j: i32, %tid: i32) {
  %v = layout_view %t <(4,8):(8,1)> : lview<f32, (4,8):(8,1)>
  %0 = lview_tile %v [2, 4] [%i, %j] : lview<f32, (2,4):(8,1)>
  %1 = lview_split %v axis 1 parts 2 [%i] : lview<f32, (4,4):(8,1)>
  %2 = lview_vectorize %v [1, 4] : lview<f32, (4,2,1,4):(8,4,8,1)>
  %3 = lview_slice %v [1:3, 0:8] : lview<f32, (2,8):(8,1)>
  %4 = lview_transpose %v [1, 0] : lview<f32, (8,4):(1,8)>
  %5 = lview_reshape %v [2, 16] : lview<f32, (2,16):(16,1)>
  %6 = lview_compose %v <(2,2):(2,1)> : lview<f32, (2,2):(16,8)>
  %7 = lview_coalesce %v : lview<f32, (4,8):(8,1)>
  %8 = lview_distribute %v <(2,4):(4,1)> %tid : lview<f32, (2,2):(16,4)>
  %9 = lview_load_masked %v pad(zero) : tile<4x8xf32>
  lview_store %9, %v
}";

#[test]
fn the_docs_op_table_verifies() {
    let func = parse_function(DOCS_TABLE).unwrap();
    verify::verify(&func).unwrap();
    // Values print by number; the lines are otherwise as written.
    let printed = func.to_string();
    let mut renamed = DOCS_TABLE.replace("%9", "%10");
    for k in (0..9).rev() {
        renamed = renamed.replace(&format!("%{k} "), &format!("%{} ", k + 1));
    }
    renamed = renamed.replace("%v", "%0");
    assert_eq!(printed, renamed);
}

#[test]
fn viewed_tensor_follows_derived_views_to_their_tensor() {
    use tile_ir::lview::viewed_tensor;
    let src = "kernel @k(%a: tensor<f32, 1>, %b: tensor<f32, 2>, %i: i32) {
  %0 = layout_view %b <(4,4):(4,1)> : lview<f32, (4,4):(4,1)>
  %1 = lview_transpose %0 [1, 0] : lview<f32, (4,4):(1,4)>
  %2 = lview_tile %1 [2, 2] [%i, %i] : lview<f32, (2,2):(1,4)>
  %3 = lview_load %2 : tile<2x2xf32>
  %4 = partition_view %a [4] : view<f32, [4]>
  lview_store %3, %2
}";
    let func = parse_function(src).unwrap();
    verify::verify(&func).unwrap();
    let param = |k: usize| func.params[k].value;
    let result = |k: usize| func.op(func.body.ops[k]).results[0];
    assert_eq!(viewed_tensor(&func, result(2)), Some(param(1)));
    assert_eq!(viewed_tensor(&func, result(0)), Some(param(1)));
    assert_eq!(viewed_tensor(&func, result(4)), Some(param(0)));
    assert_eq!(viewed_tensor(&func, result(3)), None);
    assert_eq!(viewed_tensor(&func, param(2)), None);
    let store = func.op(func.body.ops[5]);
    assert!(store.kind.writes_memory() && store.kind.has_side_effects());
    assert_eq!(viewed_tensor(&func, store.operands[1]), Some(param(1)));
}

/// A copy of an 8×8 tensor by a "block" of 2×4 threads walked by a loop: each
/// thread loads its `distribute`d fragment of the source and stores it to
/// the same fragment of the destination, doubled; together they cover every
/// element once.
#[test]
fn distributed_fragments_of_all_threads_cover_the_tensor() {
    let mut b = Builder::new("copy");
    let x = b.param("x", f32_tensor(1));
    let out = b.param("out", f32_tensor(1));
    let grid = layout("(8,8):(8,1)");
    let threads = layout("(2,4):(4,1)");
    let vx = b.layout_view(x, &grid).unwrap();
    let vo = b.layout_view(out, &grid).unwrap();
    let lo = b.constant(tile_ir::Scalar::I32(0)).unwrap();
    let hi = b.constant(tile_ir::Scalar::I32(8)).unwrap();
    let step = b.constant(tile_ir::Scalar::I32(1)).unwrap();
    b.for_loop(lo, hi, step, &[], |b, tid, _| {
        let fx = b.lview_distribute(vx, &threads, tid)?;
        let fo = b.lview_distribute(vo, &threads, tid)?;
        let t = b.lview_load(fx)?;
        let t2 = b.op1(tile_ir::OpKind::Binary(tile_ir::BinaryOp::Add), &[t, t])?;
        b.lview_store(t2, fo)?;
        Ok(vec![])
    })
    .unwrap();
    let func = b.finish().unwrap();
    let mut args = vec![iota(&[64]), zeros(&[64])];
    run(&func, [1, 1, 1], &mut args).unwrap();
    assert_eq!(
        values(&args, 1),
        (0..64).map(|i| 2.0 * i as f32).collect::<Vec<_>>()
    );
}

#[test]
fn the_builder_reports_the_layout_algebra_rule() {
    let mut b = Builder::new("bad");
    let x = b.param("x", f32_tensor(1));
    let v = b.layout_view(x, &layout("(3,5):(8,1)")).unwrap();
    assert_eq!(
        b.lview_reshape(v, &[5, 3]).map(drop).unwrap_err().to_string(),
        "lview_reshape(lview<f32, (3,5):(8,1)>): (3,5):(8,1) read in row-major order as [5, 3] is not one layout: composition: stride divisibility condition fails: (5,3):(1,8) ∘ (5,3):(3,1): stride 3 is neither a divisor nor a multiple of extent 5"
    );
}

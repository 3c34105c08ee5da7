//! Layout conversions: a register renaming, warp shuffles, shared memory,
//! each pinned by a snapshot of the thread-level program and checked bit for
//! bit against the interpreter in the emulator.

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{DType, Scalar};
use tile_thread::emulate;
use tile_thread::layout_assign::assign;
use tile_thread::lower::{lower, LowerOptions};
use tile_thread::program::{Program, ThreadOpKind};

/// An `f32` tensor of `shape` with distinct values.
fn tensor(shape: &[usize]) -> Arg {
    let n: usize = shape.iter().product();
    let v: Vec<Scalar> = (0..n).map(|i| Scalar::F32(i as f32 * 0.5 - 3.0)).collect();
    Arg::Tensor(HostTensor::from_scalars(DType::F32, shape, &v).unwrap())
}

/// Lowers `text` with `warps` warps, runs it in the emulator on `x` of
/// `shape` and asserts the output equals the interpreter's; returns the
/// program.
fn check(text: &str, shape: &[usize], warps: u32) -> Program {
    let func = parse_function(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let args = vec![tensor(shape), tensor(shape)];
    let mut expected = args.clone();
    interp::run(&func, [1, 1, 1], &mut expected).unwrap();
    let program = lower(&func, &LowerOptions::warps(warps)).unwrap();
    tile_thread::program::verify(&program).unwrap();
    let mut actual = args;
    emulate::run(&program, [1, 1, 1], &mut actual).unwrap();
    let bits = |a: &[Arg]| match &a[1] {
        Arg::Tensor(t) => t
            .to_scalars()
            .iter()
            .map(|s| s.to_bits())
            .collect::<Vec<_>>(),
        _ => unreachable!(),
    };
    assert_eq!(bits(&actual), bits(&expected), "{warps} warps\n{program}");
    program
}

/// How many ops of the program satisfy `f`.
fn count(program: &Program, f: impl Fn(&ThreadOpKind) -> bool) -> usize {
    program.ops.iter().filter(|(_, op)| f(&op.kind)).count()
}

/// A kernel that adds the row sums of an `[n, m]` tile of `x` (a slice
/// layout) to the `[n, 1]` column of `out` (a blocked layout), in the order
/// `first`, converting the other operand to the first's layout.
fn row_sums(n: usize, m: usize, sums_first: bool) -> String {
    let (a, b) = if sums_first {
        ("%s", "%c")
    } else {
        ("%c", "%s")
    };
    format!(
        "kernel @k(%x: tensor<f32, 2>, %out: tensor<f32, 2>) {{
  %zero = constant 0 : i32
  %vx = partition_view %x [{n}, {m}] : view<f32, [{n}, {m}]>
  %t = load_masked %vx[%zero, %zero] pad(zero) : tile<{n}x{m}xf32>
  %s = reduce sum %t axis 1 keepdim : tile<{n}x1xf32>
  %vo = partition_view %out [{n}, 1] : view<f32, [{n}, 1]>
  %c = load_masked %vo[%zero, %zero] pad(zero) : tile<{n}x1xf32>
  %r = add {a}, {b} : tile<{n}x1xf32>
  store_masked %r, %vo[%zero, %zero]
}}"
    )
}

/// The same kernel without the conversion: the row sums stored directly.
fn row_sums_only(n: usize, m: usize) -> String {
    format!(
        "kernel @k(%x: tensor<f32, 2>, %out: tensor<f32, 2>) {{
  %zero = constant 0 : i32
  %vx = partition_view %x [{n}, {m}] : view<f32, [{n}, {m}]>
  %t = load_masked %vx[%zero, %zero] pad(zero) : tile<{n}x{m}xf32>
  %s = reduce sum %t axis 1 keepdim : tile<{n}x1xf32>
  %vo = partition_view %out [{n}, 1] : view<f32, [{n}, 1]>
  store_masked %s, %vo[%zero, %zero]
}}"
    )
}

/// (shuffles, shared stores, barriers) of a program.
fn costs(p: &Program) -> (usize, usize, usize) {
    (
        count(p, |k| matches!(k, ThreadOpKind::Shuffle { .. })),
        count(p, |k| matches!(k, ThreadOpKind::StoreShared { .. })),
        count(p, |k| matches!(k, ThreadOpKind::Barrier)),
    )
}

/// Whether the layout plan gives the `[n, 1]` tiles `%s` and `%c` different
/// layouts (so that the `add` converts one of them).
fn layouts_differ(text: &str, warps: u32) -> bool {
    let func = parse_function(text).unwrap();
    let plan = assign(
        &func,
        warps,
        tile_thread::TensorCores::None,
        Default::default(),
    )
    .unwrap();
    let mut columns: Vec<_> = plan.values.values().filter(|l| l.shape[1] == 1).collect();
    columns.sort_by_key(|l| l.to_string());
    columns.dedup();
    columns.len() > 1
}

#[test]
fn a_conversion_inside_a_warp_uses_shuffles_not_shared_memory() {
    for (n, m) in [(8, 8), (2, 32)] {
        let text = row_sums(n, m, true);
        assert!(layouts_differ(&text, 1));
        let with = check(&text, &[n, m], 1);
        let without = check(&row_sums_only(n, m), &[n, m], 1);
        // One shuffle more (shared by the replicated copies; the row sums
        // take their own), no extra shared memory, and one barrier more: `out` is loaded, then stored, and
        // an element's copies are loaded by threads other than its owner,
        // which stores it (`lower/global_order.rs`).
        let (shuffles, stores, barriers) = costs(&without);
        assert_eq!(costs(&with), (shuffles + 1, stores, barriers + 1));
    }
    let program = check(&row_sums(8, 8, true), &[8, 8], 1);
    insta::assert_snapshot!(program.to_string());
}

#[test]
fn a_conversion_across_warps_goes_through_shared_memory() {
    let text = row_sums(8, 8, true);
    let with = check(&text, &[8, 8], 2);
    let without = check(&row_sums_only(8, 8), &[8, 8], 2);
    let (shuffles, stores, barriers) = costs(&with);
    assert_eq!(shuffles, costs(&without).0);
    assert!(stores > costs(&without).1 && barriers > costs(&without).2);
    insta::assert_snapshot!(with.to_string());
}

#[test]
fn a_conversion_that_keeps_elements_in_their_threads_renames_registers() {
    for sums_first in [true, false] {
        let text = row_sums(4, 4, sums_first);
        assert!(layouts_differ(&text, 1));
        let with = check(&text, &[4, 4], 1);
        let without = check(&row_sums_only(4, 4), &[4, 4], 1);
        // Only the barrier between the load of `out` and its store, and
        // that only where the sum is stored in the sums' layout, not in the
        // one `out` was loaded in (where each element is loaded and stored
        // by the same thread: `lower/global_order.rs`).
        let (shuffles, stores, barriers) = costs(&without);
        let ordered = usize::from(sums_first);
        assert_eq!(costs(&with), (shuffles, stores, barriers + ordered));
    }
    insta::assert_snapshot!(check(&row_sums(4, 4, true), &[4, 4], 1).to_string());
}

#[test]
fn conversions_agree_with_the_interpreter_for_several_shapes_and_warps() {
    for (n, m) in [(8, 8), (2, 32), (64, 8), (5, 7), (32, 2)] {
        for warps in [1, 2, 4] {
            for sums_first in [true, false] {
                check(&row_sums(n, m, sums_first), &[n, m], warps);
            }
        }
    }
}

/// Barriers inside `for` loops of the program.
fn barriers_in_loops(program: &Program) -> usize {
    fn walk(program: &Program, ops: &[tile_thread::program::OpId], in_loop: bool) -> usize {
        ops.iter()
            .map(|&id| {
                let op = &program.ops[id];
                let inner = in_loop || matches!(op.kind, ThreadOpKind::For);
                let own = usize::from(in_loop && matches!(op.kind, ThreadOpKind::Barrier));
                own + op
                    .regions
                    .iter()
                    .map(|r| walk(program, &r.ops, inner))
                    .sum::<usize>()
            })
            .sum()
    }
    walk(program, &program.body.ops, false)
}

/// A block of 64 rows gathered by a loaded index tile, 32 columns per
/// iteration (a mixture-of-experts matmul's tokens): the row indices and
/// the row mask, `[64, 1]` tiles made before the loop, are broadcast
/// against the columns in the loop, a conversion to the gather's layout.
/// After the default pipeline the conversions run once, before the loop,
/// and the loop holds no barrier; the result is the interpreter's.
#[test]
fn row_indices_made_before_a_loop_are_converted_before_it() {
    let text = "kernel @k(%a: tensor<f32, 2>, %r: tensor<i32, 1>, %o: tensor<f32, 2>) {
  %0 = constant 0 : i32
  %1 = constant 3 : i32
  %2 = constant 1 : i32
  %3 = constant 32 : i32
  %4 = partition_view %r [64] : view<i32, [64]>
  %5 = load %4[%0] : tile<64xi32>
  %6 = reshape %5 to [64, 1] : tile<64x1xi32>
  %7 = full 0.0 : tile<64x32xf32>
  %8 = for %9 = %0 to %1 step %2 iter(%10 = %7) : tile<64x32xf32> {
    %11 = iota : tile<1x32xi32>
    %12 = mul %9, %3 : i32
    %13 = broadcast %12 to [1, 32] : tile<1x32xi32>
    %14 = add %11, %13 : tile<1x32xi32>
    %15 = full 2 : tile<64x1xi32>
    %16 = div %6, %15 : tile<64x1xi32>
    %17 = full 40 : tile<64x1xi32>
    %18 = cmp lt %16, %17 : tile<64x1xbool>
    %19 = broadcast %18 to [64, 32] : tile<64x32xbool>
    %20 = broadcast %16 to [64, 32] : tile<64x32xi32>
    %21 = broadcast %14 to [64, 32] : tile<64x32xi32>
    %22 = full -1.0 : tile<64x32xf32>
    %23 = gather %a[%20, %21], %19, %22 : tile<64x32xf32>
    %24 = add %10, %23 : tile<64x32xf32>
    yield %24
  }
  %25 = partition_view %o [64, 32] : view<f32, [64, 32]>
  store %8, %25[%0, %0]
}";
    let mut func = parse_function(text).unwrap();
    tile_ir::passes::PassManager::default_pipeline()
        .run(&mut func, |_, _| {})
        .unwrap();
    let a: Vec<f32> = (0..48 * 96).map(|i| (i % 97) as f32 * 0.25).collect();
    let rows: Vec<i32> = (0..64).map(|i| (i * 37 + 5) % 96).collect();
    let args = vec![
        Arg::Tensor(HostTensor::from_vec(&[48, 96], a).unwrap()),
        Arg::Tensor(HostTensor::from_vec(&[64], rows).unwrap()),
        Arg::Tensor(HostTensor::from_vec(&[64, 32], vec![0.0f32; 64 * 32]).unwrap()),
    ];
    let mut expected = args.clone();
    interp::run(&func, [1, 1, 1], &mut expected).unwrap();
    let program = lower(&func, &LowerOptions::warps(4)).unwrap();
    tile_thread::program::verify(&program).unwrap();
    let mut actual = args;
    emulate::run(&program, [1, 1, 1], &mut actual).unwrap();
    assert_eq!(actual[2], expected[2]);
    assert!(count(&program, |k| matches!(k, ThreadOpKind::Barrier)) > 0);
    assert_eq!(barriers_in_loops(&program), 0, "{program}");
}

//! Each op family the lowering supports, in small kernels written in the tile
//! IR's text form, through the lowering and the emulator, equal bit for bit
//! to the interpreter (with partial edge tiles and several warp counts), with
//! `arg` reductions on NaNs, signed zeros and ties.

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{DType, Scalar};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

fn values(seed: u64, n: usize, dtype: DType) -> Vec<Scalar> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let x = ((s >> 40) as f64 / (1u64 << 24) as f64) * 4.0 - 2.0;
            tile_ir::eval::cast(
                Scalar::F64(if dtype.is_int() { x * 20.0 } else { x }),
                dtype,
            )
        })
        .collect()
}

fn tensor(seed: u64, shape: &[usize], dtype: DType) -> Arg {
    let v = values(seed, shape.iter().product(), dtype);
    Arg::Tensor(HostTensor::from_scalars(dtype, shape, &v).unwrap())
}

fn bits(args: &[Arg]) -> Vec<Vec<u64>> {
    args.iter()
        .map(|a| match a {
            Arg::Tensor(t) => t.to_scalars().iter().map(|s| s.to_bits()).collect(),
            Arg::Tensors(ts) => ts
                .iter()
                .flat_map(|t| t.to_scalars())
                .map(|s| s.to_bits())
                .collect(),
            Arg::Scalar(s) => vec![s.to_bits()],
        })
        .collect()
}

/// A kernel that loads a `[5, 6]` tile of `x` (grid axis 0 over rows), runs
/// `body` on it (`%t`), and stores its result `%r` through a
/// view of `out_tile` at index `[pid, 0]` (or `[pid]` for rank 1).
fn kernel(dtype: &str, body: &str, out_tile: &str, out_rank: usize) -> String {
    let index = if out_rank == 1 { "%pid" } else { "%pid, %zero" };
    format!(
        "kernel @k(%x: tensor<{dtype}, 2>, %out: tensor<{dtype}, {out_rank}>) {{
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %vx = partition_view %x [5, 6] : view<{dtype}, [5, 6]>
  %t = load_masked %vx[%pid, %zero] pad(zero) : tile<5x6x{dtype}>
{body}
  %vo = partition_view %out {out_tile} : view<{dtype}, {out_tile}>
  store_masked %r, %vo[{index}]
}}"
    )
}

/// Runs the kernel over 2 blocks on `x: [8, 6]` and an output of `out_shape`.
fn check(text: &str, dtype: DType, out_shape: &[usize]) {
    check_with(text, tensor(1, &[8, 6], dtype), dtype, out_shape);
}

/// As [`check`], with the given `x`.
fn check_with(text: &str, x: Arg, dtype: DType, out_shape: &[usize]) {
    check_on_warps(text, x, (dtype, out_shape), &[1, 2]);
}

/// As [`check_with`], on blocks of each of `warps`.
fn check_on_warps(text: &str, x: Arg, (dtype, out_shape): (DType, &[usize]), warps: &[u32]) {
    let func = parse_function(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let args = vec![x, tensor(2, out_shape, dtype)];
    let grid = [2, 1, 1];
    let mut expected = args.clone();
    interp::run(&func, grid, &mut expected).unwrap();
    for &num_warps in warps {
        let program = lower(&func, &LowerOptions::warps(num_warps)).unwrap();
        tile_thread::program::verify(&program).unwrap();
        let mut actual = args.clone();
        emulate::run(&program, grid, &mut actual).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(bits(&actual), bits(&expected), "{num_warps} warps\n{text}");
    }
}

fn check_op(line: &str, ty: &str, tile: &str, out_shape: &[usize]) {
    let body = format!("  %r = {line} : {ty}");
    let rank = out_shape.len();
    check(&kernel("f32", &body, tile, rank), DType::F32, out_shape);
}

#[test]
fn permute_flip_reshape() {
    check_op("permute %t [1, 0]", "tile<6x5xf32>", "[6, 5]", &[11, 5]);
    check_op("flip %t [0, 1]", "tile<5x6xf32>", "[5, 6]", &[9, 6]);
    check_op("flip %t [1]", "tile<5x6xf32>", "[5, 6]", &[9, 6]);
    check_op(
        "reshape %t to [3, 10]",
        "tile<3x10xf32>",
        "[3, 10]",
        &[5, 10],
    );
    check_op("reshape %t to [30]", "tile<30xf32>", "[30]", &[50]);
}

#[test]
fn slice_pad_cat() {
    check_op(
        "slice %t [0:5:2, 1:6:2]",
        "tile<3x3xf32>",
        "[3, 3]",
        &[5, 3],
    );
    check_op(
        "pad %t low [1, 0] high [0, 2] value 7.0",
        "tile<6x8xf32>",
        "[6, 8]",
        &[11, 8],
    );
    check_op("cat %t, %t axis 1", "tile<5x12xf32>", "[5, 12]", &[9, 12]);
    check_op(
        "cat %t, %t, %t axis 0",
        "tile<15x6xf32>",
        "[15, 6]",
        &[29, 6],
    );
}

#[test]
fn reductions_in_order() {
    for kind in ["sum", "prod", "max", "min"] {
        check_op(
            &format!("reduce {kind} %t axis 1 keepdim"),
            "tile<5x1xf32>",
            "[5, 1]",
            &[9, 1],
        );
        check_op(
            &format!("reduce {kind} %t axis 0"),
            "tile<6xf32>",
            "[6]",
            &[11],
        );
    }
}

#[test]
fn broadcast_and_expand_of_reductions() {
    let body = "  %s = reduce sum %t axis 0 keepdim : tile<1x6xf32>
  %r = broadcast %s to [5, 6] : tile<5x6xf32>";
    check(&kernel("f32", body, "[5, 6]", 2), DType::F32, &[9, 6]);
    let body = "  %s = reduce max %t axis 1 keepdim : tile<5x1xf32>
  %r = expand %s to [5, 6] : tile<5x6xf32>";
    check(&kernel("f32", body, "[5, 6]", 2), DType::F32, &[9, 6]);
    let body = "  %v = reshape %t to [30] : tile<30xf32>
  %s = reduce sum %v axis 0 : f32
  %r = broadcast %s to [5, 6] : tile<5x6xf32>";
    check(&kernel("f32", body, "[5, 6]", 2), DType::F32, &[9, 6]);
}

#[test]
fn scans() {
    check_op("scan cumsum %t axis 1", "tile<5x6xf32>", "[5, 6]", &[9, 6]);
    check_op("scan cumprod %t axis 0", "tile<5x6xf32>", "[5, 6]", &[9, 6]);
}

#[test]
fn integers_iota_and_select() {
    let body = "  %i = iota : tile<5x6xi32>
  %s = add %t, %i : tile<5x6xi32>
  %c = cmp gt %s, %t : tile<5x6xbool>
  %m = reduce sum %s axis 1 keepdim : tile<5x1xi32>
  %b = broadcast %m to [5, 6] : tile<5x6xi32>
  %r = select %c, %b, %s : tile<5x6xi32>";
    check(&kernel("i32", body, "[5, 6]", 2), DType::I32, &[9, 6]);
}

#[test]
fn dot_of_small_tiles() {
    let body = "  %p = permute %t [1, 0] : tile<6x5xf32>
  %c = full 0.5 : tile<5x5xf32>
  %r = dot ieee %t, %p, %c : tile<5x5xf32>";
    check(&kernel("f32", body, "[5, 5]", 2), DType::F32, &[9, 5]);
}

#[test]
fn if_and_loops_with_tiles() {
    let body = "  %one = constant 1 : i32
  %three = constant 3 : i32
  %acc = full 0.0 : tile<5x6xf32>
  %f = for %i = %zero to %three step %one iter(%a = %acc) : tile<5x6xf32> {
    %p = permute %t [1, 0] : tile<6x5xf32>
    %q = permute %p [1, 0] : tile<5x6xf32>
    %n = add %a, %q : tile<5x6xf32>
    yield %n
  }
  %c = cmp eq %pid, %zero : bool
  %r = if %c : tile<5x6xf32> {
    yield %f
  } else {
    %g = scan cumsum %f axis 1 : tile<5x6xf32>
    yield %g
  }";
    check(&kernel("f32", body, "[5, 6]", 2), DType::F32, &[9, 6]);
}

/// An `[8, 6]` [`awkward_of`].
fn awkward(seed: u64) -> Arg {
    awkward_of(seed, &[8, 6])
}

#[test]
fn arg_reductions_with_nans_zeros_and_ties() {
    for kind in ["argmax", "argmin"] {
        for (axis, keepdim, ty, tile, out) in [
            (1, " keepdim", "tile<5x1xi32>", "[5, 1]", &[9usize, 1][..]),
            (0, "", "tile<6xi32>", "[6]", &[11][..]),
        ] {
            let body = format!(
                "  %a = arg {kind} %t axis {axis}{keepdim} : {ty}
  %r = cast %a to f32 : {}",
                ty.replace("i32", "f32")
            );
            let text = kernel("f32", &body, tile, out.len());
            for seed in [1, 2, 3] {
                check_with(&text, awkward(seed), DType::F32, out);
            }
        }
    }
}

/// Arg reductions of whole rows and columns across many warps (FlagGems'
/// `argmax` of 4 × 4096, a column's over 8 warps of rows) run as trees in
/// registers, equal to the interpreter on NaNs, signed zeros and ties, in
/// shared memory of a few pairs per row, not the tile.
#[test]
fn arg_reductions_across_warps_stay_in_registers() {
    for (rows, cols, axis, warps) in [(4, 4096, 1, 8), (256, 32, 0, 8), (64, 64, 1, 4)] {
        for kind in ["argmax", "argmin"] {
            let (kept, out_tile, out_shape) = match axis {
                0 => (format!("1x{cols}"), format!("[1, {cols}]"), [1, cols]),
                _ => (format!("{rows}x1"), format!("[{rows}, 1]"), [rows, 1]),
            };
            let text = format!(
                "kernel @k(%x: tensor<f32, 2>, %out: tensor<i32, 2>) {{
  %zero = constant 0 : i32
  %vx = partition_view %x [{rows}, {cols}] : view<f32, [{rows}, {cols}]>
  %t = load_masked %vx[%zero, %zero] pad(zero) : tile<{rows}x{cols}xf32>
  %r = arg {kind} %t axis {axis} keepdim : tile<{kept}xi32>
  %vo = partition_view %out {out_tile} : view<i32, {out_tile}>
  store_masked %r, %vo[%zero, %zero]
}}"
            );
            let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            let program = lower(&func, &LowerOptions::warps(warps)).unwrap();
            tile_thread::program::verify(&program).unwrap();
            let bytes: usize = program
                .shared
                .iter()
                .map(|(_, a)| a.len * a.dtype.size_bytes())
                .sum();
            let pairs = out_shape.iter().product::<usize>() * warps as usize * 8;
            assert!(bytes <= pairs, "{rows}x{cols} {kind}: {bytes} bytes");
            // Rows and columns short of the tile: dead registers never win.
            let shape = [rows - 1, cols - 3];
            for seed in [1, 2] {
                let args = vec![
                    awkward_of(seed, &shape),
                    Arg::Tensor(
                        HostTensor::from_vec(&out_shape, vec![-1i32; out_shape.iter().product()])
                            .unwrap(),
                    ),
                ];
                let (mut want, mut got) = (args.clone(), args);
                interp::run(&func, [1, 1, 1], &mut want).unwrap();
                emulate::run(&program, [1, 1, 1], &mut got).unwrap();
                assert_eq!(
                    bits(&got),
                    bits(&want),
                    "{rows}x{cols} {kind} on {warps} warps"
                );
            }
        }
    }
}

#[test]
fn every_op_kind_lowers() {
    let body = "  %a = arg argmin %t axis 0 : tile<6xi32>
  %b = cast %a to f32 : tile<6xf32>
  %r = reshape %b to [1, 6] : tile<1x6xf32>";
    let func = parse_function(&kernel("f32", body, "[1, 6]", 2)).unwrap();
    assert!(lower(&func, &LowerOptions::default()).is_ok());
}

#[test]
fn slice_layouts_meet_blocked_ones_in_loops_ifs_and_elementwise_ops() {
    // A reduction (slice layout) carried by a loop whose initial value is a
    // `full` (blocked layout), combined with a broadcast scalar, and chosen
    // against a `full` in an `if`.
    let body = "  %one = constant 1 : i32
  %three = constant 3 : i32
  %init = full 0.0 : tile<5x1xf32>
  %f = for %i = %zero to %three step %one iter(%a = %init) : tile<5x1xf32> {
    %s = reduce sum %t axis 1 keepdim : tile<5x1xf32>
    %n = add %s, %a : tile<5x1xf32>
    yield %n
  }
  %two = constant 2.0 : f32
  %b2 = broadcast %two to [5, 1] : tile<5x1xf32>
  %m = mul %b2, %f : tile<5x1xf32>
  %c = cmp eq %pid, %zero : bool
  %g = if %c : tile<5x1xf32> {
    %w = full 1.0 : tile<5x1xf32>
    yield %w
  } else {
    yield %m
  }
  %r = broadcast %g to [5, 6] : tile<5x6xf32>";
    check(&kernel("f32", body, "[5, 6]", 2), DType::F32, &[9, 6]);
    let body = "  %mx = reduce max %t axis 0 keepdim : tile<1x6xf32>
  %mb = broadcast %mx to [5, 6] : tile<5x6xf32>
  %d = sub %t, %mb : tile<5x6xf32>
  %c = full 0.25 : tile<5x5xf32>
  %p = permute %d [1, 0] : tile<6x5xf32>
  %s = reduce sum %c axis 1 keepdim : tile<5x1xf32>
  %acc = broadcast %s to [5, 5] : tile<5x5xf32>
  %r = dot ieee %t, %p, %acc : tile<5x5xf32>";
    check(&kernel("f32", body, "[5, 5]", 2), DType::F32, &[9, 5]);
}

#[test]
fn reduce_then_broadcast_stays_in_registers() {
    let body = "  %s = reduce sum %t axis 1 keepdim : tile<5x1xf32>
  %b = broadcast %s to [5, 6] : tile<5x6xf32>
  %r = sub %t, %b : tile<5x6xf32>";
    let text = kernel("f32", body, "[5, 6]", 2);
    check(&text, DType::F32, &[9, 6]);
    let program = lower(&parse_function(&text).unwrap(), &LowerOptions::warps(1)).unwrap();
    // The sum runs as a chain through the lanes (6 columns held as 8), the
    // broadcast in registers: nothing staged.
    assert_eq!(program.shared.len(), 0, "{program}");
}

#[test]
fn unverified_input_is_an_error_naming_the_op() {
    let mut func = tile_ir::samples::softmax(2, 8).unwrap();
    let reduce = func
        .ops
        .iter()
        .find(|(_, op)| matches!(op.kind, tile_ir::OpKind::Reduce { .. }))
        .map(|(id, _)| id)
        .unwrap();
    if let tile_ir::OpKind::Reduce { axis, .. } = &mut func.ops[reduce].kind {
        *axis = 5;
    }
    let err = lower(&func, &LowerOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`%5 = reduce %4`: axis or result rank out of range"
    );
}

/// Reduces `[rows, cols]` tiles of an i32 `x: [xr, cols]` along `axis` with
/// keepdim, storing the result.
fn int_reduce(
    kind: &str,
    rows: usize,
    cols: usize,
    xr: usize,
    axis: usize,
) -> (String, Vec<usize>) {
    let out = if axis == 0 { [1, cols] } else { [rows, 1] };
    let text = format!(
        "kernel @k(%x: tensor<i32, 2>, %out: tensor<i32, 2>) {{
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %vx = partition_view %x [{rows}, {cols}] : view<i32, [{rows}, {cols}]>
  %t = load_masked %vx[%pid, %zero] pad(zero) : tile<{rows}x{cols}xi32>
  %r = reduce {kind} %t axis {axis} keepdim : tile<{}x{}xi32>
  %vo = partition_view %out [{}, {}] : view<i32, [{}, {}]>
  store_masked %r, %vo[%pid, %zero]
}}",
        out[0], out[1], out[0], out[1], out[0], out[1]
    );
    let blocks = xr.div_ceil(rows);
    (text, vec![blocks * out[0], out[1]])
}

#[test]
fn integer_reductions_use_shuffles_and_warps() {
    for kind in ["sum", "prod", "max", "min"] {
        // Lanes along the axis, then lanes and warps along it.
        for (rows, cols, xr, axis, warps) in
            [(5, 6, 8, 1, 1), (64, 2, 100, 0, 2), (64, 4, 70, 0, 4)]
        {
            let (text, out_shape) = int_reduce(kind, rows, cols, xr, axis);
            let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            let args = vec![
                tensor(7, &[xr, cols], DType::I32),
                tensor(8, &out_shape, DType::I32),
            ];
            let grid = [xr.div_ceil(rows) as u32, 1, 1];
            let mut expected = args.clone();
            interp::run(&func, grid, &mut expected).unwrap();
            let program = lower(&func, &LowerOptions::warps(warps)).unwrap();
            let listing = program.to_string();
            assert!(listing.contains("shfl.bfly"), "{listing}");
            assert_eq!(listing.contains("barrier"), axis == 0, "{listing}");
            let mut actual = args.clone();
            emulate::run(&program, grid, &mut actual).unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert_eq!(
                bits(&actual),
                bits(&expected),
                "{kind} {rows}x{cols}\n{text}"
            );
        }
    }
}

#[test]
fn float_max_and_min_run_as_trees_exactly() {
    for kind in ["max", "min"] {
        let body = format!("  %r = reduce {kind} %t axis 1 keepdim : tile<5x1xf32>");
        let text = kernel("f32", &body, "[5, 1]", 2);
        let program = lower(&parse_function(&text).unwrap(), &LowerOptions::warps(1)).unwrap();
        assert!(program.to_string().contains("shfl.bfly"));
        for seed in [1, 2, 3, 4] {
            check_with(&text, awkward(seed), DType::F32, &[9, 1]);
        }
    }
}

#[test]
fn a_row_broadcast_in_registers_and_staged_by_its_owners() {
    // `%w` is loaded in the 2-D tile's layout with the rows dropped (copies
    // in every row of threads); it is broadcast in registers, and also
    // flipped (staged in shared memory: only owners may write) and stored.
    let text = "kernel @k(%x: tensor<f32, 2>, %w: tensor<f32, 1>, %out: tensor<f32, 2>, %wout: tensor<f32, 1>) {
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %vx = partition_view %x [5, 6] : view<f32, [5, 6]>
  %vw = partition_view %w [6] : view<f32, [6]>
  %t = load_masked %vx[%pid, %zero] pad(zero) : tile<5x6xf32>
  %r = load_masked %vw[%zero] pad(zero) : tile<6xf32>
  %b = broadcast %r to [5, 6] : tile<5x6xf32>
  %s = mul %t, %b : tile<5x6xf32>
  %vo = partition_view %out [5, 6] : view<f32, [5, 6]>
  store_masked %s, %vo[%pid, %zero]
  %f = flip %r [0] : tile<6xf32>
  %vwo = partition_view %wout [6] : view<f32, [6]>
  store_masked %f, %vwo[%pid]
}";
    let func = parse_function(text).unwrap();
    let args = vec![
        tensor(1, &[8, 6], DType::F32),
        tensor(2, &[6], DType::F32),
        tensor(3, &[8, 6], DType::F32),
        tensor(4, &[12], DType::F32),
    ];
    let mut expected = args.clone();
    interp::run(&func, [2, 1, 1], &mut expected).unwrap();
    for warps in [1, 2] {
        let program = lower(&func, &LowerOptions::warps(warps)).unwrap();
        tile_thread::program::verify(&program).unwrap();
        // One staging: the flip; the broadcast kept its registers.
        assert_eq!(program.shared.len(), 1);
        let mut actual = args.clone();
        emulate::run(&program, [2, 1, 1], &mut actual).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(bits(&actual), bits(&expected));
    }
}

#[test]
fn order_free_reductions_without_keepdim_stay_where_the_rows_were() {
    for (dtype, kind) in [("i32", "sum"), ("i32", "max"), ("f32", "min")] {
        let text = format!(
            "kernel @k(%x: tensor<{dtype}, 2>, %out: tensor<{dtype}, 1>) {{
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %vx = partition_view %x [64, 4] : view<{dtype}, [64, 4]>
  %t = load_masked %vx[%zero, %pid] pad(zero) : tile<64x4x{dtype}>
  %r = reduce {kind} %t axis 0 : tile<4x{dtype}>
  %vo = partition_view %out [4] : view<{dtype}, [4]>
  store_masked %r, %vo[%pid]
}}"
        );
        let func = parse_function(&text).unwrap();
        let d = if dtype == "i32" {
            DType::I32
        } else {
            DType::F32
        };
        let args = vec![tensor(5, &[50, 10], d), tensor(6, &[10], d)];
        let mut expected = args.clone();
        interp::run(&func, [3, 1, 1], &mut expected).unwrap();
        for warps in [1, 2, 4] {
            let program = lower(&func, &LowerOptions::warps(warps)).unwrap();
            tile_thread::program::verify(&program).unwrap();
            assert!(program.to_string().contains("shfl.bfly"));
            let mut actual = args.clone();
            emulate::run(&program, [3, 1, 1], &mut actual).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                bits(&actual),
                bits(&expected),
                "{dtype} {kind} {warps} warps"
            );
        }
    }
}

/// `out[pid] = Σ i for i in 0..n step %s`, the step a parameter, or the
/// constant 1 with `constant_step`.
fn stepped_sum(constant_step: bool) -> tile_ir::Function {
    let text = "kernel @k(%out: tensor<i32, 1>, %n: i32, %s: i32) {
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %one = constant 1 : i32
  %sum = for %i = %zero to %n step %s iter(%acc = %zero) : i32 {
    %next = add %acc, %i : i32
    yield %next
  }
  %r = broadcast %sum to [1] : tile<1xi32>
  %vo = partition_view %out [1] : view<i32, [1]>
  store %r, %vo[%pid]
}";
    let text = if constant_step {
        text.replace("step %s", "step %one")
    } else {
        text.to_string()
    };
    parse_function(&text).unwrap()
}

#[test]
fn a_loop_step_that_is_not_positive_is_checked_before_the_loop() {
    let func = stepped_sum(false);
    let args = |step: i32| {
        vec![
            Arg::Tensor(HostTensor::from_vec(&[2], vec![0i32; 2]).unwrap()),
            Arg::Scalar(Scalar::I32(10)),
            Arg::Scalar(Scalar::I32(step)),
        ]
    };
    let program = lower(&func, &LowerOptions::warps(1)).unwrap();
    let text = program.to_string();
    assert_eq!(text.matches("check.step").count(), 1, "{text}");
    let mut expected = args(3);
    interp::run(&func, [2, 1, 1], &mut expected).unwrap();
    let mut actual = args(3);
    emulate::run(&program, [2, 1, 1], &mut actual).unwrap();
    assert_eq!(bits(&actual), bits(&expected));
    for step in [0, -2] {
        assert!(interp::run(&func, [2, 1, 1], &mut args(step)).is_err());
        let err = emulate::run(&program, [2, 1, 1], &mut args(step)).unwrap_err();
        assert_eq!(
            err.fault.to_string(),
            format!("loop step check failed in kernel `k`: `%3 = for %1, %n, %s, %1`: the step {step} of a loop is not positive")
        );
    }
    // A constant positive step needs no check.
    let text = lower(&stepped_sum(true), &LowerOptions::warps(1))
        .unwrap()
        .to_string();
    assert!(!text.contains("check.step"), "{text}");
}

/// Lanes longer than the fold's unrolled limit (17 elements): the fold is
/// a loop of 8 elements a turn and an unrolled tail, bit for bit the
/// interpreter's order for sums, products, scans and arg reductions (on
/// values with NaNs, signed zeros and ties), along either axis; a lane a
/// warp holds runs as a chain through its lanes instead.
#[test]
fn long_lanes_fold_in_a_loop_in_order() {
    for (rows, cols, warps) in [
        (3, 18, 1),
        (2, 100, 1),
        (100, 2, 1),
        (2, 300, 4),
        (300, 1, 4),
    ] {
        let view = format!("[{rows}, {cols}]");
        let text = |body: &str, out_tile: &str| {
            format!(
                "kernel @k(%x: tensor<f32, 2>, %out: tensor<f32, 2>) {{
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %vx = partition_view %x {view} : view<f32, {view}>
  %t = load_masked %vx[%pid, %zero] pad(zero) : tile<{rows}x{cols}xf32>
{body}
  %vo = partition_view %out {out_tile} : view<f32, {out_tile}>
  store_masked %r, %vo[%pid, %zero]
}}"
            )
        };
        let (x_rows, x_cols) = (2 * rows - 1, cols);
        for axis in [0, 1] {
            let kept = if axis == 0 {
                format!("1x{cols}")
            } else {
                format!("{rows}x1")
            };
            let out_tile = if axis == 0 {
                format!("[1, {cols}]")
            } else {
                format!("[{rows}, 1]")
            };
            let out_shape = if axis == 0 { [2, cols] } else { [x_rows, 1] };
            let mut bodies: Vec<String> = ["sum", "prod"]
                .iter()
                .map(|k| format!("  %r = reduce {k} %t axis {axis} keepdim : tile<{kept}xf32>"))
                .collect();
            for kind in ["argmax", "argmin"] {
                bodies.push(format!(
                    "  %a = arg {kind} %t axis {axis} keepdim : tile<{kept}xi32>
  %r = cast %a to f32 : tile<{kept}xf32>"
                ));
            }
            for body in bodies {
                let text = text(&body, &out_tile);
                let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
                let program = lower(&func, &LowerOptions::warps(warps)).unwrap();
                let loops = program
                    .ops
                    .iter()
                    .filter(|(_, op)| matches!(op.kind, tile_thread::ThreadOpKind::For))
                    .count();
                // The exact folds of staged lanes loop over long lanes;
                // rows a warp's lanes hold run as chains (`shfl.idx`), arg
                // reductions as trees in registers.
                let extent = if axis == 0 { rows } else { cols };
                let chained = program.to_string().contains("shfl.idx");
                let folded = extent > 17 && !body.contains("arg") && !chained;
                assert_eq!(loops > 0, folded, "{text}");
                // With warps along a lane (4 warps over rows or columns of
                // 300), the sums and products are staged and loop.
                if warps == 4 && extent == 300 && !body.contains("arg") {
                    assert!(folded, "{text}");
                }
                let x = if body.contains("arg") {
                    awkward_of(7, &[x_rows, x_cols])
                } else {
                    tensor(3, &[x_rows, x_cols], DType::F32)
                };
                check_on_warps(&text, x, (DType::F32, &out_shape), &[1, 2, warps]);
            }
        }
        // A scan keeps every partial sum in place.
        let scan = format!("  %r = scan cumsum %t axis 1 : tile<{rows}x{cols}xf32>");
        let x = tensor(4, &[x_rows, x_cols], DType::F32);
        check_with(&text(&scan, &view), x, DType::F32, &[x_rows, x_cols]);
    }
}

/// A tensor of `shape` drawn from a few values with NaNs, signed zeros
/// and ties.
fn awkward_of(seed: u64, shape: &[usize]) -> Arg {
    let pool = [0.0f32, -0.0, 1.0, f32::NAN, -1.0, 1.0, 0.0, -0.0, 2.0];
    let n = shape.iter().product();
    let v = values(seed, n, DType::U32)
        .into_iter()
        .map(|s| pool[(s.to_bits() % pool.len() as u64) as usize])
        .collect();
    Arg::Tensor(HostTensor::from_vec(shape, v).unwrap())
}

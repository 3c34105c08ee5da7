//! The host back end's vector paths, byte for byte against the
//! interpreter. Loads fused into their elementwise consumers: partial
//! partitions on both axes (copied with their padding after all), strided
//! and offset tensors read in the fused loop (the unit-stride version and
//! the other), dtypes other than f32, and a store between a load and its use
//! (which keeps the copy). Transposes in blocks of shuffles: every element
//! width, batches, and shapes the blocks do not divide. Row reductions in
//! registers, and NaNs left uncanonicalized only where no use sees them.

mod common;

use common::{host_agrees, tensor_of, values};
use tile_ir::interp::{Arg, HostTensor};
use tile_ir::{DType, Function};

fn parse(text: &str) -> Function {
    tile_ir::text::parse_function(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// An f32 `[rows, cols]` tensor stored column-major with a padded column
/// (stride `rows + 3`) after `offset` unused elements.
fn column_major(seed: u64, rows: usize, cols: usize, offset: usize) -> Arg {
    let ld = rows + 3;
    let data = values(seed, offset + ld * cols);
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    Arg::Tensor(
        HostTensor::with_strides(DType::F32, &[rows, cols], &[1, ld as isize], offset, bytes)
            .unwrap(),
    )
}

/// `(x · y + 1)` summed along each row of a `[4, 8]` tile (padded elements
/// add 1 each, so a missing padding shows), and `x · y` stored masked.
const ROW_SUMS: &str = "kernel @row_sums(%x: tensor<f32, 2>, %y: tensor<f32, 2>, %out: tensor<f32, 2>, %sums: tensor<f32, 1>) {
  %i = program_id 0 : i32
  %j = program_id 1 : i32
  %vx = partition_view %x [4, 8] : view<f32, [4, 8]>
  %vy = partition_view %y [4, 8] : view<f32, [4, 8]>
  %vo = partition_view %out [4, 8] : view<f32, [4, 8]>
  %a = load_masked %vx[%i, %j] pad(zero) : tile<4x8xf32>
  %b = load_masked %vy[%i, %j] pad(zero) : tile<4x8xf32>
  %p = mul %a, %b : tile<4x8xf32>
  store_masked %p, %vo[%i, %j]
  %one = full 1.0 : tile<4x8xf32>
  %q = add %p, %one : tile<4x8xf32>
  %r = reduce sum %q axis 1 : tile<4xf32>
  %cols = num_programs 1 : i32
  %k = mul %i, %cols : i32
  %k2 = add %k, %j : i32
  %vs = partition_view %sums [4] : view<f32, [4]>
  store_masked %r, %vs[%k2]
}";

#[test]
fn partial_partitions_and_strided_tensors() {
    let func = parse(ROW_SUMS);
    // Exact tiles, then partial ones on either and both axes.
    for (rows, cols) in [(8usize, 16usize), (10, 16), (8, 13), (10, 13), (3, 5)] {
        let grid = [rows.div_ceil(4) as u32, cols.div_ceil(8) as u32, 1];
        let sums = (grid[0] * grid[1]) as usize * 4;
        let contiguous = vec![
            tensor_of(1, &[rows, cols], DType::F32),
            tensor_of(2, &[rows, cols], DType::F32),
            tensor_of(3, &[rows, cols], DType::F32),
            tensor_of(4, &[sums], DType::F32),
        ];
        host_agrees(&func, grid, contiguous);
        // `x` column-major (a run-time stride along the fused loop's
        // innermost axis) and offset.
        let strided = vec![
            column_major(5, rows, cols, 7),
            tensor_of(6, &[rows, cols], DType::F32),
            tensor_of(7, &[rows, cols], DType::F32),
            tensor_of(8, &[sums], DType::F32),
        ];
        host_agrees(&func, grid, strided);
    }
}

#[test]
fn other_dtypes_and_ops() {
    // A cast and an `fma` of f16 and bf16 loads, a select on a comparison of
    // two i32 loads.
    let func = parse(
        "kernel @mixed(%h: tensor<f16, 1>, %g: tensor<bf16, 1>, %m: tensor<i32, 1>, %n: tensor<i32, 1>, %out: tensor<f32, 1>) {
  %p = program_id 0 : i32
  %vh = partition_view %h [16] : view<f16, [16]>
  %vg = partition_view %g [16] : view<bf16, [16]>
  %vm = partition_view %m [16] : view<i32, [16]>
  %vn = partition_view %n [16] : view<i32, [16]>
  %vo = partition_view %out [16] : view<f32, [16]>
  %a = load_masked %vh[%p] pad(nan) : tile<16xf16>
  %af = cast %a to f32 : tile<16xf32>
  %b = load_masked %vg[%p] pad(zero) : tile<16xbf16>
  %bf = cast %b to f32 : tile<16xf32>
  %c = load_masked %vm[%p] pad(zero) : tile<16xi32>
  %d = load_masked %vn[%p] pad(zero) : tile<16xi32>
  %lt = cmp lt %c, %d : tile<16xbool>
  %f = fma %af, %bf, %af : tile<16xf32>
  %s = select %lt, %f, %bf : tile<16xf32>
  store_masked %s, %vo[%p]
}",
    );
    for n in [16usize, 37] {
        let grid = [n.div_ceil(16) as u32, 1, 1];
        let args = vec![
            tensor_of(1, &[n], DType::F16),
            tensor_of(2, &[n], DType::BF16),
            tensor_of(3, &[n], DType::I32),
            tensor_of(4, &[n], DType::I32),
            tensor_of(5, &[n], DType::F32),
        ];
        host_agrees(&func, grid, args);
    }
}

#[test]
fn a_store_between_a_load_and_its_use() {
    // `%a` must hold `x` as loaded, not as overwritten by the store.
    let func = parse(
        "kernel @overwrite(%x: tensor<f32, 1>, %out: tensor<f32, 1>) {
  %p = program_id 0 : i32
  %vx = partition_view %x [8] : view<f32, [8]>
  %vo = partition_view %out [8] : view<f32, [8]>
  %a = load_masked %vx[%p] pad(zero) : tile<8xf32>
  %z = full 5.0 : tile<8xf32>
  store_masked %z, %vx[%p]
  %two = full 2.0 : tile<8xf32>
  %s = mul %a, %two : tile<8xf32>
  store_masked %s, %vo[%p]
}",
    );
    let args = vec![
        tensor_of(1, &[21], DType::F32),
        tensor_of(2, &[21], DType::F32),
    ];
    let after = host_agrees(&func, [3, 1, 1], args);
    let Arg::Tensor(out) = &after[1] else {
        panic!("out is a tensor")
    };
    let x = values(1, 21);
    for (k, chunk) in out.data().chunks_exact(4).enumerate() {
        let got = f32::from_le_bytes(chunk.try_into().unwrap());
        assert_eq!(got, x[k] * 2.0, "element {k}");
    }
}

/// A kernel that loads a `[rows, cols]` tile (masked, so partial tiles too)
/// of `dtype` with `batch` leading tiles, swaps its last two axes and stores
/// it.
fn transpose_kernel(dtype: &str, batch: Option<usize>, rows: usize, cols: usize) -> Function {
    let (rank, lead, index, perm, zero) = match batch {
        Some(b) => (
            3,
            format!("{b}x"),
            "%z, %i, %j",
            "[0, 2, 1]",
            "  %z = constant 0 : i32\n",
        ),
        None => (2, String::new(), "%i, %j", "[1, 0]", ""),
    };
    let dims = |a: usize, b: usize| match batch {
        Some(n) => format!("{n}, {a}, {b}"),
        None => format!("{a}, {b}"),
    };
    parse(&format!(
        "kernel @t(%x: tensor<{dtype}, {rank}>, %out: tensor<{dtype}, {rank}>) {{
  %i = program_id 0 : i32
  %j = program_id 1 : i32
{zero}  %vx = partition_view %x [{xd}] : view<{dtype}, [{xd}]>
  %vo = partition_view %out [{od}] : view<{dtype}, [{od}]>
  %a = load_masked %vx[{index}] pad(zero) : tile<{lead}{rows}x{cols}x{dtype}>
  %t = permute %a {perm} : tile<{lead}{cols}x{rows}x{dtype}>
  store_masked %t, %vo[{swapped}]
}}",
        xd = dims(rows, cols),
        od = dims(cols, rows),
        swapped = index.replace("%i, %j", "%j, %i"),
    ))
}

#[test]
fn transposes_in_blocks_and_not() {
    // (dtype, batch, tile rows, tile cols): blocks of every element width,
    // then tiles the blocks do not divide (an affine copy).
    let cases: [(&str, Option<usize>, usize, usize); 9] = [
        ("f32", None, 8, 8),
        ("f32", None, 32, 32),
        ("f32", None, 16, 24),
        ("f64", None, 8, 16),
        ("f16", None, 16, 8),
        ("i8", None, 8, 8),
        ("f32", Some(2), 8, 16),
        ("f32", None, 8, 12),
        ("f32", None, 5, 7),
    ];
    for (dtype, batch, rows, cols) in cases {
        let func = transpose_kernel(dtype, batch, rows, cols);
        let d = match dtype {
            "f64" => DType::F64,
            "f16" => DType::F16,
            "i8" => DType::I8,
            _ => DType::F32,
        };
        // Whole tiles, then a partial last tile on both axes.
        for (m, n) in [(2 * rows, 3 * cols), (2 * rows + 3, cols + 1)] {
            let (x, out) = match batch {
                Some(b) => ([b, m, n], [b, n, m]),
                None => ([1, m, n], [1, n, m]),
            };
            let shape = |s: [usize; 3]| {
                if batch.is_some() {
                    s.to_vec()
                } else {
                    s[1..].to_vec()
                }
            };
            let grid = [m.div_ceil(rows) as u32, n.div_ceil(cols) as u32, 1];
            let args = vec![tensor_of(11, &shape(x), d), tensor_of(12, &shape(out), d)];
            host_agrees(&func, grid, args);
        }
    }
}

/// `[rows, cols]` values of `dtype` with NaNs of two payloads, both zeros and
/// infinities among ordinary values, as a row-major tensor.
fn special_values(dtype: DType, rows: usize, cols: usize) -> Arg {
    let specials = [
        f64::from_bits(0x7ff8_0000_0000_0001),
        f64::from_bits(0xfff4_0000_0000_0000),
        -0.0,
        0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    let base = values(21, rows * cols);
    let scalars: Vec<tile_ir::Scalar> = base
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            // Most rows get one special value at a varying column; some none.
            let v = if i % 7 == 3 {
                specials[(i / 7) % specials.len()]
            } else {
                f64::from(v)
            };
            tile_ir::eval::cast(tile_ir::Scalar::F64(v), dtype)
        })
        .collect();
    Arg::Tensor(HostTensor::from_scalars(dtype, &[rows, cols], &scalars).unwrap())
}

#[test]
fn reductions_along_rows_transposed_or_not() {
    // Up to sixteen rows fold with their accumulators in registers (eight
    // or sixteen rows of whole 8-column blocks read as blocks transposed in
    // registers); more
    // are transposed first (in 8 × 8 blocks when they divide the tile,
    // element by element otherwise), as is an `arg` of four or more; f32/f64
    // sums and products canonicalize NaN once at the end.
    for (dtype, name) in [
        (DType::F32, "f32"),
        (DType::F64, "f64"),
        (DType::F16, "f16"),
        (DType::I32, "i32"),
    ] {
        for reduce in [
            "reduce sum",
            "reduce prod",
            "reduce max",
            "reduce min",
            "arg argmax",
            "arg argmin",
        ] {
            let out_dtype = if reduce.starts_with("arg") {
                "i32"
            } else {
                name
            };
            for (rows, cols) in [
                (2, 13),
                (4, 8),
                (8, 24),
                (8, 8),
                (16, 16),
                (16, 12),
                (12, 5),
                (8, 1),
                (32, 8),
                (20, 5),
            ] {
                let func = parse(&format!(
                    "kernel @r(%x: tensor<{name}, 2>, %out: tensor<{out_dtype}, 1>) {{
  %p = program_id 0 : i32
  %c0 = constant 0 : i32
  %vx = partition_view %x [{rows}, {cols}] : view<{name}, [{rows}, {cols}]>
  %vo = partition_view %out [{rows}] : view<{out_dtype}, [{rows}]>
  %a = load %vx[%p, %c0] : tile<{rows}x{cols}x{name}>
  %r = {reduce} %a axis 1 : tile<{rows}x{out_dtype}>
  store %r, %vo[%p]
}}"
                ));
                let out = if reduce.starts_with("arg") {
                    DType::I32
                } else {
                    dtype
                };
                let args = vec![
                    special_values(dtype, 2 * rows, cols),
                    tensor_of(3, &[2 * rows], out),
                ];
                host_agrees(&func, [2, 1, 1], args);
            }
        }
    }
}

/// NaNs made by `inf - inf` (x86's negative default NaN) and carried from
/// inputs of two payloads through chains whose payloads are seen (stored,
/// selected and stored, broadcast, a one-element `reduce`) and not (squared,
/// rooted, summed, cast), for `nan.rs`.
const NAN_CHAINS: &str = "kernel @nan_chains(%x: tensor<f32, 2>, %out: tensor<f32, 2>, %sel: tensor<f32, 2>, %wide: tensor<f64, 2>, %means: tensor<f32, 1>) {
  %p = program_id 0 : i32
  %c0 = constant 0 : i32
  %vx = partition_view %x [8, 16] : view<f32, [8, 16]>
  %vo = partition_view %out [8, 16] : view<f32, [8, 16]>
  %vs = partition_view %sel [8, 16] : view<f32, [8, 16]>
  %vw = partition_view %wide [8, 16] : view<f64, [8, 16]>
  %vm = partition_view %means [8] : view<f32, [8]>
  %a = load %vx[%p, %c0] : tile<8x16xf32>
  %s = sub %a, %a : tile<8x16xf32>
  %m = mul %s, %s : tile<8x16xf32>
  %r = add %m, %a : tile<8x16xf32>
  store %r, %vo[%p, %c0]
  %z = full 0.0 : tile<8x16xf32>
  %c = cmp gt %a, %z : tile<8x16xbool>
  %t = reduce sum %s axis 1 keepdim : tile<8x1xf32>
  %bt = broadcast %t to [8, 16] : tile<8x16xf32>
  %e = select %c, %bt, %s : tile<8x16xf32>
  store %e, %vs[%p, %c0]
  %w = cast %m to f64 : tile<8x16xf64>
  %w2 = mul %w, %w : tile<8x16xf64>
  store %w2, %vw[%p, %c0]
  %s2 = sub %a, %a : tile<8x16xf32>
  %q = mul %s2, %s2 : tile<8x16xf32>
  %q2 = sqrt %q : tile<8x16xf32>
  %u = select %c, %q2, %z : tile<8x16xf32>
  %sum = reduce sum %u axis 1 : tile<8xf32>
  %n = constant 16.0 : f32
  %bn = broadcast %n to [8] : tile<8xf32>
  %mean = div %sum, %bn : tile<8xf32>
  store %mean, %vm[%p]
}";

/// A one-element `reduce` hands its element on as it is: stored, the NaN of
/// `inf - inf` must be canonical.
const NAN_SINGLE: &str = "kernel @nan_single(%x: tensor<f32, 2>, %out: tensor<f32, 2>) {
  %p = program_id 0 : i32
  %j = program_id 1 : i32
  %vx = partition_view %x [8, 1] : view<f32, [8, 1]>
  %vo = partition_view %out [8, 1] : view<f32, [8, 1]>
  %b = load %vx[%p, %j] : tile<8x1xf32>
  %bs = sub %b, %b : tile<8x1xf32>
  %f = reduce sum %bs axis 1 keepdim : tile<8x1xf32>
  store %f, %vo[%p, %j]
}";

#[test]
fn nans_are_canonical_wherever_their_payloads_are_seen() {
    let (rows, cols) = (16, 16);
    let args = vec![
        special_values(DType::F32, rows, cols),
        tensor_of(4, &[rows, cols], DType::F32),
        tensor_of(5, &[rows, cols], DType::F32),
        tensor_of(6, &[rows, cols], DType::F64),
        tensor_of(7, &[rows], DType::F32),
    ];
    host_agrees(&parse(NAN_CHAINS), [2, 1, 1], args);
    let args = vec![
        special_values(DType::F32, rows, cols),
        tensor_of(8, &[rows, cols], DType::F32),
    ];
    host_agrees(&parse(NAN_SINGLE), [2, 16, 1], args);
}

/// A column mask the same in every row (computed once, for one row, by
/// `lazy.rs`), next to a mask over the whole tile and half of each row's
/// maximum, which differ from row to row.
const ROW_INVARIANT: &str =
    "kernel @rows_once(%x: tensor<f32, 2>, %out: tensor<f32, 2>, %n: i32, %m: i32) {
  %p = program_id 0 : i32
  %c0 = constant 0 : i32
  %vx = partition_view %x [8, 16] : view<f32, [8, 16]>
  %vo = partition_view %out [8, 16] : view<f32, [8, 16]>
  %a = load %vx[%p, %c0] : tile<8x16xf32>
  %i = iota : tile<16xi32>
  %bi = broadcast %i to [8, 16] : tile<8x16xi32>
  %bn = broadcast %n to [8, 16] : tile<8x16xi32>
  %in = cmp lt %bi, %bn : tile<8x16xbool>
  %k = iota : tile<8x16xi32>
  %bm = broadcast %m to [8, 16] : tile<8x16xi32>
  %kn = cmp lt %k, %bm : tile<8x16xbool>
  %r = reduce max %a axis 1 keepdim : tile<8x1xf32>
  %br = broadcast %r to [8, 16] : tile<8x16xf32>
  %h = constant 0.5 : f32
  %bh = broadcast %h to [8, 16] : tile<8x16xf32>
  %rh = mul %br, %bh : tile<8x16xf32>
  %z = full 0.0 : tile<8x16xf32>
  %s1 = select %in, %a, %rh : tile<8x16xf32>
  %s2 = select %kn, %s1, %z : tile<8x16xf32>
  store %s2, %vo[%p, %c0]
}";

#[test]
fn ops_the_same_in_every_row_are_computed_once() {
    let func = parse(ROW_INVARIANT);
    for (n, m) in [(-1, 100), (0, 100), (5, 100), (5, 37), (16, 100), (40, 128)] {
        let args = vec![
            tensor_of(9, &[16, 16], DType::F32),
            tensor_of(10, &[16, 16], DType::F32),
            Arg::Scalar(tile_ir::Scalar::I32(n)),
            Arg::Scalar(tile_ir::Scalar::I32(m)),
        ];
        host_agrees(&func, [2, 1, 1], args);
    }
}

#[test]
fn block_folds_compute_their_lazy_operands() {
    // `(a - mean)²` summed along rows is computed inside the block fold;
    // `x · y` of two single-use loads is stored first (its loads are read
    // where the fold stands), as is every operand of a fold of other shapes.
    for (dtype, name) in [(DType::F32, "f32"), (DType::F64, "f64")] {
        for (rows, cols) in [(8, 8), (8, 24), (16, 16), (4, 8), (8, 12)] {
            let func = parse(&format!(
                "kernel @lazy_folds(%x: tensor<{name}, 2>, %y: tensor<{name}, 2>, %out: tensor<{name}, 1>, %out2: tensor<{name}, 1>) {{
  %p = program_id 0 : i32
  %c0 = constant 0 : i32
  %vx = partition_view %x [{rows}, {cols}] : view<{name}, [{rows}, {cols}]>
  %vy = partition_view %y [{rows}, {cols}] : view<{name}, [{rows}, {cols}]>
  %vo = partition_view %out [{rows}] : view<{name}, [{rows}]>
  %vo2 = partition_view %out2 [{rows}] : view<{name}, [{rows}]>
  %a = load %vx[%p, %c0] : tile<{rows}x{cols}x{name}>
  %m = reduce max %a axis 1 keepdim : tile<{rows}x1x{name}>
  %bm = broadcast %m to [{rows}, {cols}] : tile<{rows}x{cols}x{name}>
  %c = sub %a, %bm : tile<{rows}x{cols}x{name}>
  %sq = mul %c, %c : tile<{rows}x{cols}x{name}>
  %s = reduce sum %sq axis 1 : tile<{rows}x{name}>
  store %s, %vo[%p]
  %b = load %vy[%p, %c0] : tile<{rows}x{cols}x{name}>
  %b2 = load %vx[%p, %c0] : tile<{rows}x{cols}x{name}>
  %xy = mul %b2, %b : tile<{rows}x{cols}x{name}>
  %pr = reduce prod %xy axis 1 : tile<{rows}x{name}>
  store %pr, %vo2[%p]
}}"
            ));
            let args = vec![
                special_values(dtype, 2 * rows, cols),
                tensor_of(11, &[2 * rows, cols], dtype),
                tensor_of(12, &[2 * rows], dtype),
                tensor_of(13, &[2 * rows], dtype),
            ];
            host_agrees(&func, [2, 1, 1], args);
        }
    }
}

/// `[rows, cols]` values of `dtype` where the order of signed zeros and the
/// place of a NaN decide each row's maximum and minimum: rows of zeros of
/// both signs (one odd zero at a varying column), of negative numbers with
/// one zero, and with NaNs of two payloads at the first, a middle or the
/// last column.
fn signed_zeros_and_nans(dtype: DType, rows: usize, cols: usize) -> Arg {
    let nans = [
        f64::from_bits(0x7ff8_0000_0000_0001),
        f64::from_bits(0xfff4_0000_0000_0000),
    ];
    let value = |r: usize, c: usize| -> f64 {
        let odd = (r * 5 + 3) % cols;
        match r % 6 {
            0 if c == odd => 0.0,
            0 => -0.0,
            1 if c == odd => -0.0,
            1 => 0.0,
            2 if c == odd => -0.0,
            2 => -1.0 - c as f64,
            3 if c == [0, cols / 2, cols - 1][r / 6 % 3] => nans[r / 6 % 2],
            3 | 4 if c.is_multiple_of(2) => -0.0,
            3 | 4 => 0.0,
            _ => (c as f64 - r as f64) * 0.5,
        }
    };
    let scalars: Vec<tile_ir::Scalar> = (0..rows * cols)
        .map(|i| tile_ir::eval::cast(tile_ir::Scalar::F64(value(i / cols, i % cols)), dtype))
        .collect();
    Arg::Tensor(HostTensor::from_scalars(dtype, &[rows, cols], &scalars).unwrap())
}

#[test]
fn maxima_and_minima_order_signed_zeros_and_keep_nans() {
    // Block folds (8 or 16 rows of whole 8-column blocks) and the other
    // register folds step with IEEE maximum/minimum and canonicalize NaN at
    // the end: -0 < +0 wherever the odd zero stands, and a NaN anywhere in a
    // row is the row's result.
    for (dtype, name) in [(DType::F32, "f32"), (DType::F64, "f64")] {
        for reduce in ["max", "min"] {
            for (rows, cols) in [(8, 8), (8, 24), (16, 16), (4, 8), (32, 8)] {
                let func = parse(&format!(
                    "kernel @extremes(%x: tensor<{name}, 2>, %out: tensor<{name}, 1>) {{
  %p = program_id 0 : i32
  %c0 = constant 0 : i32
  %vx = partition_view %x [{rows}, {cols}] : view<{name}, [{rows}, {cols}]>
  %vo = partition_view %out [{rows}] : view<{name}, [{rows}]>
  %a = load %vx[%p, %c0] : tile<{rows}x{cols}x{name}>
  %r = reduce {reduce} %a axis 1 : tile<{rows}x{name}>
  store %r, %vo[%p]
}}"
                ));
                let args = vec![
                    signed_zeros_and_nans(dtype, 3 * rows, cols),
                    tensor_of(3, &[3 * rows], dtype),
                ];
                host_agrees(&func, [3, 1, 1], args);
            }
        }
    }
}

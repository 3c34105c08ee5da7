//! Scans as a chain through a warp's lanes (`lower/scan_chain.rs`): where
//! each thread holds runs along the scanned axis, the scan runs in
//! registers and shuffles, in the interpreter's order (bit for bit, NaNs
//! and signed zeros included), and needs no shared memory, where the staged
//! path copies the tile there (FlagGems' `[8, 4096]` f32 cumsum: 128 KiB,
//! past gfx942's 64 KiB). Exact float sums and products of rows run as the
//! same chain, its last total passed to every lane along the row (FlagGems'
//! `mv` summed its `[64, 64]` f32 products through 16 KiB).

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::DType;
use tile_testgen::inputs::tensor_of;
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions, TensorCores};
use tile_thread::program::Program;

/// A scan `kind` of a `[rows, cols]` block of `x` along `axis`, stored to
/// `out`; the blocks' rows step with the program id.
fn scan_kernel(kind: &str, dtype: &str, (rows, cols): (usize, usize), axis: usize) -> String {
    format!(
        "kernel @scan(%x: tensor<{dtype}, 2>, %out: tensor<{dtype}, 2>) {{
  %p = program_id 0 : i32
  %z = constant 0 : i32
  %vx = partition_view %x [{rows}, {cols}] : view<{dtype}, [{rows}, {cols}]>
  %t = load_masked %vx[%p, %z] pad(zero) : tile<{rows}x{cols}x{dtype}>
  %r = scan {kind} %t axis {axis} : tile<{rows}x{cols}x{dtype}>
  %vo = partition_view %out [{rows}, {cols}] : view<{dtype}, [{rows}, {cols}]>
  store_masked %r, %vo[%p, %z]
}}"
    )
}

/// A reduction `kind` of a `[rows, cols]` block of `x` along its rows,
/// with `keepdim` or reshaped to `[rows, 1]` after, stored to `out`.
fn reduce_kernel(kind: &str, dtype: &str, (rows, cols): (usize, usize), keepdim: bool) -> String {
    let reduced = if keepdim {
        format!("%r = reduce {kind} %t axis 1 keepdim : tile<{rows}x1x{dtype}>")
    } else {
        format!(
            "%d = reduce {kind} %t axis 1 : tile<{rows}x{dtype}>
  %r = reshape %d to [{rows}, 1] : tile<{rows}x1x{dtype}>"
        )
    };
    format!(
        "kernel @reduce(%x: tensor<{dtype}, 2>, %out: tensor<{dtype}, 2>) {{
  %p = program_id 0 : i32
  %z = constant 0 : i32
  %vx = partition_view %x [{rows}, {cols}] : view<{dtype}, [{rows}, {cols}]>
  %t = load_masked %vx[%p, %z] pad(zero) : tile<{rows}x{cols}x{dtype}>
  {reduced}
  %vo = partition_view %out [{rows}, 1] : view<{dtype}, [{rows}, 1]>
  store_masked %r, %vo[%p, %z]
}}"
    )
}

/// The elements of the shared buffers of `program`.
fn staged(program: &Program) -> usize {
    program.shared.iter().map(|(_, a)| a.len).sum()
}

/// `source` lowered for `warps` warps (and, where given, CDNA's waves),
/// checked against the interpreter on `x` over `grid` programs.
fn agrees(source: &str, options: &LowerOptions, x: Arg, out_shape: &[usize], grid: u32) -> Program {
    let func = parse_function(source).unwrap_or_else(|e| panic!("{e}\n{source}"));
    let program = lower(&func, options).expect("it lowers");
    tile_thread::program::verify(&program).expect("it verifies");
    let dtype = match &x {
        Arg::Tensor(t) => t.dtype(),
        _ => unreachable!("x is a tensor"),
    };
    let args = vec![x, tensor_of(9, out_shape, dtype)];
    let (mut emulated, mut reference) = (args.clone(), args);
    let grid = [grid, 1, 1];
    emulate::run(&program, grid, &mut emulated).expect("it runs");
    interp::run(&func, grid, &mut reference).expect("it interprets");
    assert_eq!(emulated, reference, "{source}");
    program
}

/// Values drawn from a pool with NaNs, signed zeros, infinities and
/// magnitudes far apart, so that another order of the sums shows.
fn awkward(seed: u64, shape: &[usize]) -> Arg {
    let pool = [
        0.0f32,
        -0.0,
        1.0e8,
        3.25,
        -1.0e8,
        f32::NAN,
        1.0e-3,
        -7.5,
        f32::INFINITY,
        0.1,
    ];
    let n: usize = shape.iter().product();
    let mut s = seed;
    let v = (0..n)
        .map(|i| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Mostly finite: one NaN or infinity in a few hundred.
            let k = (s >> 33) as usize % pool.len();
            if matches!(k, 5 | 8) && i % 97 != 0 {
                pool[(k + 1) % pool.len()]
            } else {
                pool[k]
            }
        })
        .collect();
    Arg::Tensor(HostTensor::from_vec(shape, v).unwrap())
}

#[test]
fn flaggems_cumsum_block_needs_no_shared_memory() {
    let source = scan_kernel("cumsum", "f32", (8, 4096), 1);
    // 8 warps keep a row in a warp; 16 on CDNA (Triton's 8 wavefronts) put
    // the two warps of a wave along it, chained by 64-lane shuffles.
    for options in [
        LowerOptions::warps(8),
        LowerOptions::warps(8).with_tensor_cores(TensorCores::Mfma),
        LowerOptions::warps(16).with_tensor_cores(TensorCores::Mfma),
    ] {
        let program = agrees(&source, &options, awkward(1, &[20, 4000]), &[20, 4000], 3);
        assert_eq!(staged(&program), 0, "{program}");
    }
}

#[test]
fn chained_scans_match_the_interpreter() {
    // Partial blocks (rows and columns), runs of 1 to 4, several rows a
    // thread, every dtype of a sum or product.
    let cases = [
        ("cumsum", "f32", (4, 1000), 4, (6, 1700)),
        ("cumsum", "f32", (2, 64), 1, (3, 64)),
        ("cumsum", "i32", (16, 256), 2, (20, 300)),
        ("cumprod", "f64", (4, 128), 4, (5, 128)),
        ("cumsum", "f16", (8, 512), 4, (9, 500)),
    ];
    for (kind, dtype, block, warps, x_shape) in cases {
        let source = scan_kernel(kind, dtype, block, 1);
        let dt: DType = dtype.parse().expect("a dtype");
        let x = if dt == DType::F32 {
            awkward(2, &[x_shape.0, x_shape.1])
        } else {
            tensor_of(3, &[x_shape.0, x_shape.1], dt)
        };
        let shape = [x_shape.0, x_shape.1];
        let grid = x_shape.0.div_ceil(block.0) as u32;
        let program = agrees(&source, &LowerOptions::warps(warps), x, &shape, grid);
        assert_eq!(staged(&program), 0, "{kind} {dtype} {block:?}: {program}");
    }
}

#[test]
fn scans_the_chain_cannot_take_stay_exact() {
    // Along the rows (the lanes lie across them) and with warps along the
    // axis, the scan takes the staged path, with the same results.
    for (block, axis, warps) in [((64, 8), 0, 2), ((1, 2048), 1, 4)] {
        let source = scan_kernel("cumsum", "f32", block, axis);
        let shape = [block.0 * 2, block.1];
        agrees(
            &source,
            &LowerOptions::warps(warps),
            awkward(4, &shape),
            &shape,
            2,
        );
    }
}

#[test]
fn chained_sums_match_the_interpreter() {
    // Runs of 1 to 8, one to several rows a thread, partial blocks, with
    // and without `keepdim`, sums and products of the float dtypes, rows
    // the layout pads (48 and 384 columns held as 64 and 512); on CDNA, 16
    // warps put a wave's two warps along a row.
    let cases = [
        ("sum", "f32", (4, 1024), 4, (6, 1000), true),
        ("sum", "f32", (64, 64), 4, (150, 64), false),
        ("sum", "f32", (2, 32), 1, (3, 32), true),
        ("prod", "f64", (4, 128), 4, (5, 128), false),
        ("sum", "f16", (8, 512), 4, (9, 500), true),
        ("sum", "bf16", (16, 64), 2, (20, 50), false),
        ("sum", "f32", (2, 48), 2, (4, 48), true),
        ("sum", "f32", (4, 384), 4, (5, 300), false),
    ];
    let cdna = LowerOptions::warps(16).with_tensor_cores(TensorCores::Mfma);
    let cdna_case = ("sum", "f32", (8, 4096), 16, (20, 4000), true);
    let cdna_at = cases.len();
    for (i, (kind, dtype, block, warps, x_shape, keepdim)) in
        cases.into_iter().chain([cdna_case]).enumerate()
    {
        let options = match i {
            _ if i == cdna_at => cdna.clone(),
            _ => LowerOptions::warps(warps),
        };
        let source = reduce_kernel(kind, dtype, block, keepdim);
        let dt: DType = dtype.parse().expect("a dtype");
        let x = if dt == DType::F32 {
            awkward(5 + i as u64, &[x_shape.0, x_shape.1])
        } else {
            tensor_of(6 + i as u64, &[x_shape.0, x_shape.1], dt)
        };
        let out = [x_shape.0, 1];
        let grid = x_shape.0.div_ceil(block.0) as u32;
        let program = agrees(&source, &options, x, &out, grid);
        // Nothing of the tile staged (a store may still gather the row
        // totals into vectors through shared memory).
        let what = format!("{kind} {dtype} {block:?}");
        assert!(staged(&program) < block.0 * block.1, "{what}: {program}");
        assert!(
            program.to_string().contains("shfl.idx"),
            "{what}: {program}"
        );
    }
}

#[test]
fn a_padded_row_sums_only_its_own_elements() {
    // 48 columns held as 64: the 16 dead registers of each row hold +0.0,
    // which would turn a row of -0.0 into +0.0 if the chain folded them.
    let source = reduce_kernel("sum", "f32", (2, 48), true);
    let x = Arg::Tensor(HostTensor::from_vec(&[4, 48], vec![-0.0f32; 4 * 48]).unwrap());
    let program = agrees(&source, &LowerOptions::warps(2), x, &[4, 1], 2);
    assert!(program.to_string().contains("shfl.idx"), "{program}");
}

#[test]
fn sums_the_chain_cannot_take_stay_staged_and_exact() {
    // Warps along the row (one row, or two rows on 4 warps): staged, with
    // the interpreter's results.
    for (block, warps) in [((1, 2048), 4), ((2, 256), 4)] {
        let source = reduce_kernel("sum", "f32", block, true);
        let shape = [block.0 * 2, block.1];
        let options = LowerOptions::warps(warps);
        let program = agrees(&source, &options, awkward(7, &shape), &[shape[0], 1], 2);
        assert!(staged(&program) > 0, "{block:?}: {program}");
    }
}

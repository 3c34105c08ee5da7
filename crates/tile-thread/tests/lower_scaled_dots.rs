//! Block-scaled products (`dot_scaled`) lowered, and run by the emulator
//! bit for bit against the interpreter:
//!
//! - expanded before lowering on `mma.sync` without block-scaled forms:
//!   both operands' scales load straight into the layout that repeats
//!   each over its group of elements (no staging of the repeated tiles;
//!   `b`'s product held in runs of rows per thread for it), and the
//!   operands computed in registers are staged for `ldmatrix` in 16-byte
//!   vectors;
//! - on sm_120a's `mma.sync … kind::mxf8f6f4.block_scale`
//!   (`TensorCores::MmaSyncScaled`) and gfx950's scaled MFMA: a
//!   `dot_scaled` of E4M3 or E5M2 operands with E8M0 scales runs on the
//!   instruction, its scales loaded or staged for the lanes that supply
//!   them; the products it cannot take are expanded as elsewhere.

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{DType, Function, Scalar};
use tile_testgen::inputs::blocks;
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions, TensorCores};
use tile_thread::program::Program;

/// A product of `bm × bn` tiles over K in steps of `bk`: `a` of dtype
/// `da` and `b` of `db`, one `f8e8m0` scale per 32 along K on each.
fn scaled(da: &str, db: &str, (bm, bn, bk): (usize, usize, usize)) -> Function {
    let g = bk / 32;
    parse_function(&format!(
        "kernel @scaled(%a: tensor<{da}, 2>, %sa: tensor<f8e8m0, 2>, %b: tensor<{db}, 2>, %sb: tensor<f8e8m0, 2>, %c: tensor<f32, 2>) {{
  %m = program_id 0 : i32
  %n = program_id 1 : i32
  %zero = constant 0 : i32
  %one = constant 1 : i32
  %k = dim %a axis 1 : i32
  %bk = constant {bk} : i32
  %k1 = add %k, %bk : i32
  %k2 = sub %k1, %one : i32
  %steps = div %k2, %bk : i32
  %va = partition_view %a [{bm}, {bk}] : view<{da}, [{bm}, {bk}]>
  %vsa = partition_view %sa [{bm}, {g}] : view<f8e8m0, [{bm}, {g}]>
  %vb = partition_view %b [{bk}, {bn}] : view<{db}, [{bk}, {bn}]>
  %vsb = partition_view %sb [{bn}, {g}] : view<f8e8m0, [{bn}, {g}]>
  %vc = partition_view %c [{bm}, {bn}] : view<f32, [{bm}, {bn}]>
  %init = full 0.0 : tile<{bm}x{bn}xf32>
  %acc = for %i = %zero to %steps step %one iter(%c0 = %init) : tile<{bm}x{bn}xf32> {{
    %x = load_masked %va[%m, %i] pad(zero) : tile<{bm}x{bk}x{da}>
    %sx = load_masked %vsa[%m, %i] pad(zero) : tile<{bm}x{g}xf8e8m0>
    %y = load_masked %vb[%i, %n] pad(zero) : tile<{bk}x{bn}x{db}>
    %sy = load_masked %vsb[%n, %i] pad(zero) : tile<{bn}x{g}xf8e8m0>
    %d = dot_scaled %x, %sx, %y, %sy, %c0 : tile<{bm}x{bn}xf32>
    yield %d
  }}
  store_masked %acc, %vc[%m, %n]
}}"
    ))
    .unwrap()
}

/// A tensor of `shape` and `dtype` holding `values` (cycled), each cast.
fn tensor(dtype: DType, shape: &[usize], values: &[f32]) -> Arg {
    let n: usize = shape.iter().product();
    let scalars: Vec<Scalar> = (0..n)
        .map(|i| {
            let v = values[(i * 7 + i / 5) % values.len()];
            tile_ir::eval::cast(Scalar::F32(v), dtype)
        })
        .collect();
    Arg::Tensor(HostTensor::from_scalars(dtype, shape, &scalars).unwrap())
}

/// `func` lowered for sm_120a's tensor cores with `warps` warps, verified.
fn lowered(func: &Function, warps: u32) -> Program {
    lowered_for(func, warps, TensorCores::MmaSyncScaled)
}

/// `func` lowered for `cores` with `warps` warps, verified.
fn lowered_for(func: &Function, warps: u32, cores: TensorCores) -> Program {
    let options = LowerOptions::warps(warps).with_tensor_cores(cores);
    let program = lower(func, &options).unwrap();
    tile_thread::program::verify(&program).unwrap();
    program
}

/// The emulator's run of `program` (`func` lowered) agrees with the
/// interpreter's bit for bit on a problem of partial tiles whose every
/// product and sum is exact (small integers; scales from 2⁻² to 2²,
/// different on every row and column, so that a scale read by the wrong
/// lane changes the result).
fn check_emulated(func: &Function, program: &Program, dtypes: [DType; 2], tiles: [usize; 3]) {
    let [bm, bn, bk] = tiles;
    let (m, n, k) = (bm + 3, 2 * bn - 5, 2 * bk);
    let elements = [0.0, 1.0, -2.0, 3.0, -1.0, 2.0, -4.0];
    let scales = [1.0, 2.0, 0.25, 4.0, 0.5];
    let args = vec![
        tensor(dtypes[0], &[m, k], &elements),
        tensor(DType::F8E8M0, &[m, k / 32], &scales),
        tensor(dtypes[1], &[k, n], &elements),
        tensor(DType::F8E8M0, &[n, k / 32], &scales[1..]),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[m, n])),
    ];
    let grid = [blocks(m, bm), blocks(n, bn), 1];
    let (mut emulated, mut reference) = (args.clone(), args);
    emulate::run(program, grid, &mut emulated).unwrap();
    interp::run(func, grid, &mut reference).unwrap();
    assert_eq!(emulated[4], reference[4]);
}

#[test]
fn scales_load_into_their_repetition_and_operands_stage_in_vectors() {
    let tiles = [64, 64, 64];
    let func = scaled("f8e4m3", "f8e4m3", (64, 64, 64));
    let options = LowerOptions::warps(4).with_tensor_cores(TensorCores::MmaSync);
    let program = lower(&func, &options).unwrap();
    let text = program.to_string();
    // `a`'s scales, whose 16 consecutive elements per thread share one,
    // are loaded as their repetition holds them; `b`'s product takes a
    // layout whose threads hold runs of rows, each run sharing one scale,
    // and its scales load so too. The loop's only barriers are those of the
    // operands' staging; staging the repeated scales took 14.
    let barriers = text.matches("barrier").count();
    assert_eq!(barriers, 2, "{text}");
    // The scaled operands go to shared memory as 16-byte vectors of bf16,
    // and nothing else is staged.
    let scalar_stores = text.matches("st.shared @").count();
    let vectors = text.matches("st.shared.v8").count();
    assert_eq!((scalar_stores, vectors), (0, 8), "{text}");
    check_emulated(&func, &program, [DType::F8E4M3; 2], tiles);
}

/// The formats `kind::mxf8f6f4` names, one value a byte: FP8, and FP6 and
/// FP4 in the FP8 plan, the emulator handing each byte to the instruction
/// in its container (FP4 in bits 5..2), as the emitter does.
#[test]
fn mx_products_run_on_the_block_scaled_instruction() {
    for (name, dtype) in MX_FORMATS {
        let tiles = [64, 64, 64];
        let func = scaled(name, name, (64, 64, 64));
        let program = lowered(&func, 4);
        let text = program.to_string();
        // 4 × 8 blocks of 16×8 and 2 k-steps of 32 for the 4 warps: 16
        // instructions a warp an iteration, and no operand scaled in
        // registers.
        let format = &name[2..];
        let native = text
            .matches(&format!("mma.m16n8k32.{format}.ue8m0"))
            .count();
        assert_eq!(native, 16, "{text}");
        assert!(!text.contains("bf16"), "{text}");
        // The operands are copied by `cp.async` (their loads deferred to the
        // product, or copied ahead by the loop's pipeline), and the scales
        // staged beside them.
        assert!(text.contains("cp.async"), "{text}");
        assert_eq!(text.matches(": f8e8m0[").count(), 2, "{text}");
        check_emulated(&func, &program, [dtype; 2], tiles);
    }
}

/// The element formats of `kind::mxf8f6f4`, as kernels name them.
const MX_FORMATS: [(&str, DType); 5] = [
    ("f8e4m3", DType::F8E4M3),
    ("f8e5m2", DType::F8E5M2),
    ("f6e2m3", DType::F6E2M3),
    ("f6e3m2", DType::F6E3M2),
    ("f4e2m1", DType::F4E2M1),
];

/// Where the target's block-scaled instructions do not take FP6 and FP4
/// (sm_100a's `tcgen05.mma`, whose images of them are packed or padded;
/// gfx950's MFMA, whose registers pack them), they are expanded.
#[test]
fn mxfp6_and_mxfp4_products_are_expanded_off_sm_120a() {
    for (name, dtype) in &MX_FORMATS[2..] {
        let tiles = [64, 64, 64];
        let func = scaled(name, name, (64, 64, 64));
        for cores in [TensorCores::Tcgen05, TensorCores::Mfma950] {
            let program = lowered_for(&func, 4, cores);
            let text = program.to_string();
            assert!(!text.contains("ue8m0"), "{cores:?}: {text}");
            check_emulated(&func, &program, [*dtype; 2], tiles);
        }
    }
}

/// MXFP4 as frameworks store it, two values a byte and the weights `[N, K
/// / 2]` (the `matmul_mxfp4` example's product): on sm_120a the unpacked
/// values stay in the threads that loaded their bytes, the weights'
/// transpose too, and each operand goes to its staging as one 16-byte
/// vector a thread, read K-major; the loop's only barriers are the
/// staging's (converting the weights' transpose first took two more, and
/// 32 scalar stores a thread with those of its staging).
#[test]
fn packed_mxfp4_weights_are_staged_as_loaded() {
    let func = parse_function(
        "kernel @packed(%a: tensor<u8, 2>, %sa: tensor<f8e8m0, 2>, %b: tensor<u8, 2>, %sb: tensor<f8e8m0, 2>, %c: tensor<f32, 2>) {
  %m = program_id 0 : i32
  %n = program_id 1 : i32
  %zero = constant 0 : i32
  %one = constant 1 : i32
  %k = dim %a axis 1 : i32
  %bk = constant 32 : i32
  %k1 = add %k, %bk : i32
  %k2 = sub %k1, %one : i32
  %steps = div %k2, %bk : i32
  %va = partition_view %a [64, 32] : view<u8, [64, 32]>
  %vsa = partition_view %sa [64, 2] : view<f8e8m0, [64, 2]>
  %vb = partition_view %b [64, 32] : view<u8, [64, 32]>
  %vsb = partition_view %sb [64, 2] : view<f8e8m0, [64, 2]>
  %vc = partition_view %c [64, 64] : view<f32, [64, 64]>
  %init = full 0.0 : tile<64x64xf32>
  %acc = for %i = %zero to %steps step %one iter(%c0 = %init) : tile<64x64xf32> {
    %xa = load_masked %va[%m, %i] pad(zero) : tile<64x32xu8>
    %x = unpack_fp4 %xa axis 1 : tile<64x64xf4e2m1>
    %sx = load_masked %vsa[%m, %i] pad(zero) : tile<64x2xf8e8m0>
    %yb = load_masked %vb[%n, %i] pad(zero) : tile<64x32xu8>
    %yu = unpack_fp4 %yb axis 1 : tile<64x64xf4e2m1>
    %y = permute %yu [1, 0] : tile<64x64xf4e2m1>
    %sy = load_masked %vsb[%n, %i] pad(zero) : tile<64x2xf8e8m0>
    %d = dot_scaled %x, %sx, %y, %sy, %c0 : tile<64x64xf32>
    yield %d
  }
  store_masked %acc, %vc[%m, %n]
}",
    )
    .unwrap();
    let program = lowered(&func, 8);
    let text = program.to_string();
    assert_eq!(text.matches("mma.m16n8k32.e2m1.ue8m0").count(), 8, "{text}");
    assert_eq!(text.matches("barrier").count(), 2, "{text}");
    assert_eq!(text.matches("st.shared.v16").count(), 2, "{text}");
    // Every byte, so every pair of FP4 values, and the scales of
    // `check_emulated`'s range.
    let (m, n, k) = (67, 123, 128);
    let bytes = |rows: usize| {
        let scalars: Vec<Scalar> = (0..rows * k / 2)
            .map(|i| Scalar::U8(((i * 37 + i / 7) % 256) as u8))
            .collect();
        Arg::Tensor(HostTensor::from_scalars(DType::U8, &[rows, k / 2], &scalars).unwrap())
    };
    let scales = [1.0, 2.0, 0.25, 4.0, 0.5];
    let args = vec![
        bytes(m),
        tensor(DType::F8E8M0, &[m, k / 32], &scales),
        bytes(n),
        tensor(DType::F8E8M0, &[n, k / 32], &scales[1..]),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[m, n])),
    ];
    let grid = [blocks(m, 64), blocks(n, 64), 1];
    let (mut emulated, mut reference) = (args.clone(), args);
    emulate::run(&program, grid, &mut emulated).unwrap();
    interp::run(&func, grid, &mut reference).unwrap();
    assert_eq!(emulated[4], reference[4]);
}

#[test]
fn warps_split_along_both_axes_read_their_own_scales() {
    // 8 warps over 128 × 64: 4 along M and 2 along N, each with 2 block
    // rows and 4 block columns.
    let tiles = [128, 64, 32];
    let func = scaled("f8e4m3", "f8e4m3", (128, 64, 32));
    let program = lowered(&func, 8);
    assert!(program.to_string().contains("mma.m16n8k32.e4m3.ue8m0"));
    check_emulated(&func, &program, [DType::F8E4M3; 2], tiles);
}

#[test]
fn products_the_instruction_cannot_take_are_expanded() {
    // Mixed formats, and tiles of 8 rows (the instruction's blocks are 16).
    for (da, db, tiles, dtypes) in [
        (
            "f8e4m3",
            "f8e5m2",
            [64, 64, 64],
            [DType::F8E4M3, DType::F8E5M2],
        ),
        ("f8e4m3", "f8e4m3", [8, 32, 32], [DType::F8E4M3; 2]),
    ] {
        let func = scaled(da, db, (tiles[0], tiles[1], tiles[2]));
        let program = lowered(&func, 4);
        let text = program.to_string();
        assert!(!text.contains("ue8m0"), "{text}");
        check_emulated(&func, &program, dtypes, tiles);
    }
}

#[test]
fn only_sm_120a_runs_the_block_scaled_instruction() {
    let func = scaled("f8e4m3", "f8e4m3", (64, 64, 64));
    let options = LowerOptions::warps(4).with_tensor_cores(TensorCores::MmaSyncFp8);
    let text = lower(&func, &options).unwrap().to_string();
    assert!(!text.contains("ue8m0"), "{text}");
    assert!(text.contains("mma.m16n8k16.bf16"), "{text}");
}

/// gfx950's scaled MFMA: 32×32×64 blocks where the tile has them (64×64
/// over two waves: two blocks each, one `k`-step of 64), else 16×16×128
/// (16 rows); each lane supplies its row's scale for its group of 32.
#[test]
fn mxfp8_products_run_on_the_scaled_mfma() {
    for (tiles, warps, name, count) in [
        ([64, 64, 64], 4, "mfma32x32x64.e4m3.ue8m0", 2),
        ([64, 64, 64], 8, "mfma32x32x64.e4m3.ue8m0", 1),
        ([16, 32, 128], 2, "mfma16x16x128.e4m3.ue8m0", 2),
    ] {
        let func = scaled("f8e4m3", "f8e4m3", (tiles[0], tiles[1], tiles[2]));
        let program = lowered_for(&func, warps, TensorCores::Mfma950);
        let text = program.to_string();
        assert_eq!(text.matches(name).count(), count, "{text}");
        assert!(
            !text.contains("bf16") && !text.contains(": f8e8m0["),
            "{text}"
        );
        check_emulated(&func, &program, [DType::F8E4M3; 2], tiles);
    }
}

/// On gfx950 a scale tile that is not loaded as the instruction holds it
/// (here `a`'s scales stored transposed, `[K / 32, M]`, and permuted) is
/// staged in shared memory and read back by the lanes that supply it,
/// `b`'s still loaded in place.
#[test]
fn scales_computed_in_registers_are_staged() {
    let program = permuted_scales((64, 64, 64), TensorCores::Mfma950);
    let text = program.to_string();
    assert_eq!(text.matches("mfma32x32x64.e4m3.ue8m0").count(), 2, "{text}");
    // The permute's conversion and the staging of its result.
    assert_eq!(text.matches(": f8e8m0[").count(), 2, "{text}");
    // On sm_100a, B's scales are held as each thread stores them into
    // tensor memory, A's (permuted) staged and loaded back, four bytes at
    // a time.
    let program = permuted_scales((128, 128, 128), TensorCores::Tcgen05);
    let text = program.to_string();
    assert_eq!(text.matches("tcgen05.mma.scaled").count(), 4, "{text}");
    assert_eq!(text.matches("tmem.store.bytes").count(), 2, "{text}");
    assert_eq!(text.matches("ld.shared.v4").count(), 4, "{text}");
}

/// A product whose `a_scale` is loaded transposed and permuted (so in no
/// instruction's layout), lowered for `cores` on 4 warps: the emulator's
/// run agrees with the interpreter's.
fn permuted_scales((bm, bn, bk): (usize, usize, usize), cores: TensorCores) -> Program {
    let g = bk / 32;
    let func = parse_function(&format!(
        "kernel @scaled_t(%a: tensor<f8e4m3, 2>, %sa: tensor<f8e8m0, 2>, %b: tensor<f8e4m3, 2>, %sb: tensor<f8e8m0, 2>, %c: tensor<f32, 2>) {{
  %m = program_id 0 : i32
  %n = program_id 1 : i32
  %zero = constant 0 : i32
  %va = partition_view %a [{bm}, {bk}] : view<f8e4m3, [{bm}, {bk}]>
  %vsa = partition_view %sa [{g}, {bm}] : view<f8e8m0, [{g}, {bm}]>
  %vb = partition_view %b [{bk}, {bn}] : view<f8e4m3, [{bk}, {bn}]>
  %vsb = partition_view %sb [{bn}, {g}] : view<f8e8m0, [{bn}, {g}]>
  %vc = partition_view %c [{bm}, {bn}] : view<f32, [{bm}, {bn}]>
  %init = full 0.0 : tile<{bm}x{bn}xf32>
  %x = load_masked %va[%m, %zero] pad(zero) : tile<{bm}x{bk}xf8e4m3>
  %sxt = load_masked %vsa[%zero, %m] pad(zero) : tile<{g}x{bm}xf8e8m0>
  %sx = permute %sxt [1, 0] : tile<{bm}x{g}xf8e8m0>
  %y = load_masked %vb[%zero, %n] pad(zero) : tile<{bk}x{bn}xf8e4m3>
  %sy = load_masked %vsb[%n, %zero] pad(zero) : tile<{bn}x{g}xf8e8m0>
  %d = dot_scaled %x, %sx, %y, %sy, %init : tile<{bm}x{bn}xf32>
  store_masked %d, %vc[%m, %n]
}}"
    ))
    .unwrap();
    let program = lowered_for(&func, 4, cores);
    let (m, n, k) = (bm + 3, 2 * bn - 5, bk);
    let elements = [0.0, 1.0, -2.0, 3.0, -1.0, 2.0, -4.0];
    let scales = [1.0, 2.0, 0.25, 4.0, 0.5];
    let args = vec![
        tensor(DType::F8E4M3, &[m, k], &elements),
        tensor(DType::F8E8M0, &[k / 32, m], &scales),
        tensor(DType::F8E4M3, &[k, n], &elements),
        tensor(DType::F8E8M0, &[n, k / 32], &scales[1..]),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[m, n])),
    ];
    let grid = [blocks(m, bm), blocks(n, bn), 1];
    let (mut emulated, mut reference) = (args.clone(), args);
    emulate::run(&program, grid, &mut emulated).unwrap();
    interp::run(&func, grid, &mut reference).unwrap();
    assert_eq!(emulated[4], reference[4]);
    program
}

/// sm_100a's `tcgen05.mma … kind::mxf8f6f4.block_scale`: thread 0 issues
/// one instruction per 32 `k` and block of the instruction's `N`, reading
/// the scales from the images every thread stored into tensor memory
/// (`tmem.store.bytes`: one per block and set of four groups, per side).
/// The emulator checks that each scale's four copies (one per quarter of
/// the lanes) agree, that the images are stored before the products and
/// not overwritten while a product reads them.
#[test]
fn mxfp8_products_run_on_tcgen05_with_scales_in_tensor_memory() {
    for (name, dtype, tiles, warps, issued, stores) in [
        // K 128: four groups, one word a row; width-4 loads of the staging.
        ("f8e4m3", DType::F8E4M3, [128, 128, 128], 4, 4, 2),
        // K 64: two groups, the cell's other bytes repeat the last.
        ("f8e5m2", DType::F8E5M2, [128, 128, 64], 4, 2, 2),
        // Two warpgroups share each image's columns; N 256 in two
        // instructions of 128 (B MN-major), each with its own B image.
        ("f8e4m3", DType::F8E4M3, [128, 256, 128], 8, 8, 3),
    ] {
        let func = scaled(name, name, (tiles[0], tiles[1], tiles[2]));
        let program = lowered_for(&func, warps, TensorCores::Tcgen05);
        let text = program.to_string();
        assert_eq!(
            text.matches("tcgen05.mma.scaled.").count(),
            issued,
            "{text}"
        );
        assert_eq!(text.matches("tmem.store.bytes").count(), stores, "{text}");
        assert!(!text.contains("bf16"), "{text}");
        // The loaded scales are held as each thread stores them: no
        // staging.
        assert!(!text.contains(": f8e8m0["), "{text}");
        check_emulated(&func, &program, [dtype; 2], tiles);
    }
    // Mixed formats are expanded into a bf16 product.
    let func = scaled("f8e4m3", "f8e5m2", (128, 128, 128));
    let program = lowered_for(&func, 4, TensorCores::Tcgen05);
    let text = program.to_string();
    assert!(!text.contains("tcgen05.mma.scaled"), "{text}");
    check_emulated(
        &func,
        &program,
        [DType::F8E4M3, DType::F8E5M2],
        [128, 128, 128],
    );
}

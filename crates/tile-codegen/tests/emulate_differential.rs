//! The differential suite on the emulation target: 1,000 generated programs
//! (tile-testgen) emitted for a GPU target, moved to the host and run by
//! `tile-emu`, against the interpreter, bit for bit: seeds `0..1000` for
//! sm_80 and sm_100a, and for gfx942 and gfx950 (wave64); a sample of them
//! for gfx1100 (wave32).
//! On sm_80 the `K` loops of the generator's pipelined products are
//! software-pipelined over 2 stages (2 warps) or 3 (1 and 4 warps).
//! The results are judged by `tile_testgen::agreement`, with the bounds of
//! the exact math library the GPU targets compute with: 8 ulps in an f64
//! result per f64 call of the library in the kernel, 1 in a narrower
//! float, none in an integer (the GPU bundle judges
//! the same programs on a device with the same function).
//!
//! The TMA's copies are checked on generated programs too: those whose
//! pipelined products (with `K` blocks of 64) it copies, on sm_90a
//! (`wgmma`) and sm_120a (`mma.sync`), their tensors given 16-byte aligned
//! rows so that tensor maps describe them.
//!
//! Beside them, masked loads and stores of every element size, over
//! aligned, misaligned and strided tensors: predicated PTX that ptxas
//! assembles, agreeing with the interpreter on sm_80 and gfx942.

mod emulated;

use emulated::Failure;
use std::sync::atomic::{AtomicUsize, Ordering};
use tile_codegen::{Gfx, Sm, Target};
use tile_ir::interp::{self, Arg};
use tile_ir::DType;
use tile_testgen::agreement::{agreement, f64_ulps, warps_and_stages, Agreement};
use tile_testgen::{generate, GenConfig};

/// The number of generated programs per target.
const CASES: u64 = 1000;

/// How many programs ran to the end, and how many of those differ from the
/// interpreter somewhere within the math library's bounds.
#[derive(Default)]
struct Counts {
    ran: AtomicUsize,
    near: AtomicUsize,
}

/// Why seed `seed` on `target` disagrees with the interpreter, if it does.
fn disagreement(seed: u64, target: Target, counts: &Counts) -> Option<String> {
    let case = generate(seed, &GenConfig::default());
    let (warps, stages) = warps_and_stages(seed);
    let mut expected = case.args.clone();
    let oracle = interp::run(&case.func, case.grid, &mut expected);
    let mut actual = case.args.clone();
    let emulated =
        emulated::run_staged(&case.func, target, (warps, stages), case.grid, &mut actual);
    match (oracle, emulated) {
        (Ok(()), Ok(())) => {
            counts.ran.fetch_add(1, Ordering::Relaxed);
            match agreement(&actual, &expected, f64_ulps(&case.func)) {
                Agreement::Identical => None,
                Agreement::WithinBounds => {
                    counts.near.fetch_add(1, Ordering::Relaxed);
                    None
                }
                Agreement::Apart(what) => Some(format!("seed {seed} ({warps} warps): {what}")),
            }
        }
        // The interpreter rejects the case: the GPU code's own checks must
        // have failed too (the emulator's are a bug of the code).
        (Err(_), Err(Failure::Status(_))) => None,
        // Lowering refuses what the GPU path does not support.
        (_, Err(Failure::Compile(e))) if e.contains("does not support") => None,
        (oracle, emulated) => Some(format!(
            "seed {seed} ({warps} warps): interpreter {:?}, emulated {}",
            oracle.err().map(|e| e.to_string()),
            emulated.err().map_or("ok".to_string(), |e| e.to_string())
        )),
    }
}

/// Why seed `seed` disagrees with the interpreter on `target` with the TMA
/// copying its pipelined operands; `counts` says whether it took the TMA
/// and whether its tensors have tensor maps. The case's products have `K`
/// blocks of 64 (16-bit rows of 128 bytes, the TMA's boxes) and its
/// tensors are made row-major with 16-byte aligned rows, so that most can
/// have maps.
fn tma_disagreement(seed: u64, target: Target, counts: &TmaCounts) -> Option<String> {
    use tile_codegen::CodegenOptions;
    use tile_thread::lower::{lower, LowerOptions};
    let config = GenConfig {
        pipeline_k_blocks: vec![64],
        pipeline_rate: 0.6,
        ..GenConfig::default()
    };
    let case = generate(seed, &config);
    let (warps, stages) = warps_and_stages(seed);
    let lowering = LowerOptions::warps(warps)
        .with_tensor_cores(target.tensor_cores())
        .with_stages(stages)
        .with_tma(true);
    let program = lower(&case.func, &lowering).ok()?;
    let maps = program.tma_maps();
    if maps.is_empty() {
        return None;
    }
    let args: Vec<Arg> = case
        .args
        .iter()
        .map(|arg| match arg {
            Arg::Tensor(t) => Arg::Tensor(row_pitched(t)),
            other => other.clone(),
        })
        .collect();
    let mut expected = args.clone();
    let oracle = interp::run(&case.func, case.grid, &mut expected);
    let mut actual = args;
    let options = CodegenOptions::default();
    let emulated = emulated::lowered_module(&case.func, target, &lowering, &options)
        .and_then(|module| emulated::image(&module))
        .and_then(|kernel| {
            let reach = &|_, bytes| bytes;
            emulated::launch_with_maps(&kernel, (case.grid, warps), &mut actual, reach, &maps)
        });
    match (oracle, emulated) {
        (Ok(()), Ok(())) => {
            counts.ran.fetch_add(1, Ordering::Relaxed);
            match agreement(&actual, &expected, f64_ulps(&case.func)) {
                Agreement::Identical | Agreement::WithinBounds => None,
                Agreement::Apart(what) => Some(format!("seed {seed} ({warps} warps): {what}")),
            }
        }
        // A tensor no map describes (ragged rows): the runtime refuses the
        // launch so.
        (_, Err(Failure::Compile(e))) if e.starts_with("no tensor map") => {
            counts.no_map.fetch_add(1, Ordering::Relaxed);
            None
        }
        (Err(_), Err(Failure::Status(_))) => None,
        (oracle, emulated) => Some(format!(
            "seed {seed} ({warps} warps): interpreter {:?}, emulated {}",
            oracle.err().map(|e| e.to_string()),
            emulated.err().map_or("ok".to_string(), |e| e.to_string())
        )),
    }
}

/// `t`'s elements row-major, a rank-2 tensor's rows 16-byte aligned (as a
/// tensor map needs them), any other contiguous.
fn row_pitched(t: &interp::HostTensor) -> interp::HostTensor {
    let (dtype, shape) = (t.dtype(), t.shape());
    let &[rows, cols] = shape else {
        return interp::HostTensor::from_scalars(dtype, shape, &t.to_scalars())
            .expect("the tensor's own elements");
    };
    let size = dtype.size_bytes();
    let pitch = (cols * size).next_multiple_of(16) / size;
    let bytes = vec![0u8; rows.max(1) * pitch * size];
    let strides = [pitch as isize, 1];
    let mut pitched = interp::HostTensor::with_strides(dtype, shape, &strides, 0, bytes)
        .expect("rows of `pitch` elements");
    for r in 0..rows {
        for c in 0..cols {
            let value = t.get(&[r, c]).expect("inside the tensor");
            pitched.set(&[r, c], value).expect("inside the tensor");
        }
    }
    pitched
}

/// How many generated programs took the TMA and ran, and how many took it
/// but had a tensor no map describes.
#[derive(Default)]
struct TmaCounts {
    ran: AtomicUsize,
    no_map: AtomicUsize,
}

/// Checks `seeds` on `target` on both cores; returns how many ran to the
/// end, and how many of those differ within the bounds somewhere.
fn check(target: Target, seeds: impl Iterator<Item = u64>) -> (usize, usize) {
    let counts = Counts::default();
    let seeds: Vec<u64> = seeds.collect();
    let failures: Vec<String> = std::thread::scope(|scope| {
        let halves: Vec<_> = seeds
            .chunks(seeds.len().div_ceil(2).max(1))
            .map(|chunk| {
                let counts = &counts;
                scope.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|&seed| disagreement(seed, target, counts))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        halves
            .into_iter()
            .flat_map(|h| h.join().expect("a worker of the suite"))
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{} seeds disagree on {target}:\n{}",
        failures.len(),
        failures.join("\n")
    );
    (counts.ran.into_inner(), counts.near.into_inner())
}

#[test]
fn generated_programs_agree_on_sm_80() {
    let (ran, near) = check(Target::Nvptx(Sm::Sm80), 0..CASES);
    eprintln!("sm_80: {ran} of {CASES} programs ran to the end and agree ({near} within the math library's bounds)");
    assert!(ran >= 700, "only {ran} programs ran");
}

#[test]
fn generated_programs_agree_on_gfx942() {
    let (ran, near) = check(Target::Amdgpu(Gfx::Gfx942), 0..CASES);
    eprintln!("gfx942: {ran} of {CASES} programs ran to the end and agree ({near} within the math library's bounds)");
    assert!(ran >= 700, "only {ran} programs ran");
}

/// Blackwell (sm_100a): `mma.sync` with its FP8 form, PTX for the newest
/// architecture.
#[test]
fn generated_programs_agree_on_sm_100a() {
    let (ran, near) = check(Target::Nvptx(Sm::Sm100a), 0..CASES);
    eprintln!("sm_100a: {ran} of {CASES} programs ran to the end and agree ({near} within the math library's bounds)");
    assert!(ran >= 700, "only {ran} programs ran");
}

/// CDNA 4 (gfx950): its own MFMA forms of twice the `K`.
#[test]
fn generated_programs_agree_on_gfx950() {
    let (ran, near) = check(Target::Amdgpu(Gfx::Gfx950), 0..CASES);
    eprintln!("gfx950: {ran} of {CASES} programs ran to the end and agree ({near} within the math library's bounds)");
    assert!(ran >= 700, "only {ran} programs ran");
}

/// The generated programs whose pipelined products the TMA copies agree
/// with the interpreter: on sm_90a for `wgmma`, and on sm_120a for
/// `mma.sync`, which reads the TMA's blocks with `ldmatrix`.
#[test]
fn generated_programs_with_the_tma_agree_on_sm_90a_and_sm_120a() {
    let check = |target: Target| {
        let counts = TmaCounts::default();
        let failures: Vec<String> = (0..CASES)
            .filter_map(|seed| tma_disagreement(seed, target, &counts))
            .collect();
        assert!(failures.is_empty(), "{target}:\n{}", failures.join("\n"));
        let (ran, no_map) = (counts.ran.into_inner(), counts.no_map.into_inner());
        eprintln!("{target}: {ran} programs ran with the TMA, {no_map} had a tensor no map");
        assert!(ran >= 20, "{target}: only {ran} programs ran with the TMA");
    };
    std::thread::scope(|scope| {
        let hopper = scope.spawn(|| check(Target::Nvptx(Sm::Sm90a)));
        check(Target::Nvptx(Sm::Sm120a));
        hopper.join().expect("the sm_90a half");
    });
}

#[test]
fn a_sample_of_generated_programs_agrees_on_gfx1100() {
    let (ran, near) = check(Target::Amdgpu(Gfx::Gfx1100), (0..CASES).step_by(10));
    eprintln!("gfx1100: {ran} of {} programs ran to the end and agree ({near} within the math library's bounds)", CASES / 10);
    assert!(ran >= 70, "only {ran} programs ran");
}

/// A kernel of `dtype` whose masked loads read a tensor it never writes
/// (`ld.global.nc` on NVIDIA) and one it writes (`ld.global`), and whose
/// masked store writes the larger (or either) of the two.
fn masked_update(dtype: DType) -> tile_ir::Function {
    let combine = if dtype.is_bool() { "or" } else { "max" };
    let text = format!(
        "kernel @update(%x: tensor<{dtype}, 1>, %out: tensor<{dtype}, 1>) {{
  %p = program_id 0 : i32
  %vx = partition_view %x [64] : view<{dtype}, [64]>
  %vo = partition_view %out [64] : view<{dtype}, [64]>
  %a = load_masked %vx[%p] pad(zero) : tile<64x{dtype}>
  %b = load_masked %vo[%p] pad(zero) : tile<64x{dtype}>
  %r = {combine} %a, %b : tile<64x{dtype}>
  store_masked %r, %vo[%p]
}}"
    );
    tile_ir::text::parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// `n` elements of `dtype` every `stride` elements from element `offset`,
/// of bytes that vary (0 or 1 for a bool).
fn pattern(dtype: DType, n: usize, stride: usize, offset: usize, seed: u8) -> Arg {
    let size = dtype.size_bytes();
    let len = (offset + (n - 1) * stride + 1) * size;
    let bytes = (0..len)
        .map(|i| {
            let b = (i as u8).wrapping_mul(37).wrapping_add(seed);
            if dtype.is_bool() {
                b & 1
            } else {
                b
            }
        })
        .collect();
    let t =
        tile_ir::interp::HostTensor::with_strides(dtype, &[n], &[stride as isize], offset, bytes)
            .unwrap();
    Arg::Tensor(t)
}

#[test]
fn masked_accesses_of_every_size_agree_with_the_interpreter() {
    // 150 elements: two full tiles and a partial one. Contiguous and
    // aligned (vector accesses, element by element at the edge), one
    // element off alignment, and strided (element by element throughout).
    let dtypes = [
        DType::Bool,
        DType::I8,
        DType::F8E5M2,
        // Bytes with bits above FP4's and FP6's, which no value reads.
        DType::F4E2M1,
        DType::F6E3M2,
        DType::I16,
        DType::BF16,
        DType::F32,
        DType::U32,
        DType::I64,
        DType::F64,
    ];
    for dtype in dtypes {
        let func = masked_update(dtype);
        predicated_ptx(&func, dtype);
        for (stride, offset) in [(1, 0), (1, 1), (3, 2)] {
            let args = vec![
                pattern(dtype, 150, stride, offset, 11),
                pattern(dtype, 150, 1, offset, 5),
            ];
            for target in [Target::Nvptx(Sm::Sm80), Target::Amdgpu(Gfx::Gfx942)] {
                let mut expected = args.clone();
                interp::run(&func, [3, 1, 1], &mut expected).unwrap();
                let mut actual = args.clone();
                emulated::run(&func, target, 2, [3, 1, 1], &mut actual)
                    .unwrap_or_else(|e| panic!("{dtype} on {target}: {e}"));
                if let Agreement::Apart(what) = agreement(&actual, &expected, f64_ulps(&func)) {
                    panic!("{dtype} on {target}, stride {stride}, offset {offset}: {what}");
                }
            }
        }
    }
}

/// Checks that `func`'s masked accesses of `dtype` are predicated PTX
/// instructions on sm_80 (a read-only tensor's load through the
/// non-coherent cache), and that ptxas assembles them.
fn predicated_ptx(func: &tile_ir::Function, dtype: DType) {
    let program = tile_thread::lower::lower(func, &tile_thread::lower::LowerOptions::warps(2))
        .unwrap_or_else(|e| panic!("{dtype}: {e}"));
    let sm = Sm::Sm80;
    let ptx = tile_codegen::gpu::emit(&program, Target::Nvptx(sm), &Default::default())
        .unwrap_or_else(|e| panic!("{dtype}: {e}"))
        .assembly;
    let bits = dtype.size_bytes() * 8;
    let word = if bits == 8 {
        "u8".to_string()
    } else {
        format!("b{bits}")
    };
    for instruction in [
        format!("ld.global.nc.{word} "),
        format!("ld.global.{word} "),
        format!("st.global.{word} "),
    ] {
        assert!(
            ptx.lines()
                .any(|l| l.trim_start().starts_with("@%p") && l.contains(&instruction)),
            "{dtype}: no predicated `{instruction}`:\n{ptx}"
        );
    }
    tile_codegen::tools::assemble_ptx(&ptx, sm).unwrap_or_else(|e| panic!("{dtype}: {e}"));
}

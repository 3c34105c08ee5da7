//! Streaming (non-temporal) stores of the host back end: emitted on x86-64
//! for outputs the kernel never reads, fenced, and — whatever the threshold,
//! the buffers' alignment, the strides or the edge tiles — equal bit for bit
//! to the interpreter.

mod common;

use common::{blocks, bytes, load, tensor, tensor_of};
use tile_codegen::host;
use tile_codegen::tools;
use tile_codegen::CodegenOptions;
use tile_ir::builder::Builder;
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::{samples, BinaryOp, DType, Function, Padding, TensorType, Type};
use tile_runtime::cpu::HostIsa;
use tile_runtime::LaunchArg;

fn tensor_type(dtype: DType, rank: usize) -> Type {
    Type::Tensor(TensorType::new(dtype, rank))
}

/// `out[i] = cast(x[i])` over 1-D tensors, `block` elements per program.
fn cast_copy(block: usize, to: DType) -> Function {
    let mut b = Builder::new("cast_copy");
    let x = b.param("x", tensor_type(DType::F32, 1));
    let out = b.param("out", tensor_type(to, 1));
    let pid = b.program_id(0).unwrap();
    let vx = b.partition_view(x, &[block]).unwrap();
    let vo = b.partition_view(out, &[block]).unwrap();
    let t = b.load_masked(vx, &[pid], Padding::Zero).unwrap();
    let c = b.cast(t, to).unwrap();
    b.store_masked(c, vo, &[pid]).unwrap();
    b.finish().unwrap()
}

/// `out[i] += x[i]`: the kernel reads its output, so it never streams.
fn accumulate(block: usize) -> Function {
    let mut b = Builder::new("accumulate");
    let x = b.param("x", tensor_type(DType::F32, 1));
    let out = b.param("out", tensor_type(DType::F32, 1));
    let pid = b.program_id(0).unwrap();
    let vx = b.partition_view(x, &[block]).unwrap();
    let vo = b.partition_view(out, &[block]).unwrap();
    let a = b.load_masked(vx, &[pid], Padding::Zero).unwrap();
    let o = b.load_masked(vo, &[pid], Padding::Zero).unwrap();
    let s = b.binary(BinaryOp::Add, a, o).unwrap();
    b.store_masked(s, vo, &[pid]).unwrap();
    b.finish().unwrap()
}

/// The disassembly of `func`'s kernel for `isa`.
fn listing(func: &Function, isa: HostIsa) -> String {
    let image = host::compile(func, isa, &CodegenOptions::default())
        .unwrap_or_else(|e| panic!("{isa}: {e}"));
    tools::disassemble(image.shared_object()).unwrap()
}

/// The non-temporal store mnemonics of `isa` found in `listing`.
fn streaming_stores(listing: &str) -> usize {
    listing
        .lines()
        .filter(|l| {
            ["movntdq", "movntps", "movntpd", "movnti"]
                .iter()
                .any(|m| l.contains(m))
        })
        .count()
}

#[test]
fn large_outputs_never_read_get_fenced_non_temporal_stores_on_x86_64() {
    for isa in HostIsa::for_this_architecture() {
        if isa == HostIsa::Aarch64 {
            continue;
        }
        for func in [
            samples::vector_add(1024).unwrap(),
            samples::transpose(64, 64).unwrap(),
            samples::transpose(32, 32).unwrap(),
        ] {
            let code = listing(&func, isa);
            assert!(
                streaming_stores(&code) > 0,
                "{} ({isa}): no non-temporal store",
                func.name
            );
            assert!(code.contains("sfence"), "{} ({isa}): no sfence", func.name);
            if isa == HostIsa::X86_64V3 {
                assert!(
                    code.lines()
                        .any(|l| l.contains("vmovnt") && l.contains("%ymm")),
                    "{}: no 256-bit non-temporal store",
                    func.name
                );
            }
        }
        // The kernel reads what it writes: plain stores, no fence.
        let code = listing(&accumulate(1024), isa);
        assert_eq!(streaming_stores(&code), 0, "accumulate ({isa}) streams");
        assert!(!code.contains("sfence"), "accumulate ({isa}) fences");
        // Rows shorter than two cache lines never stream: a 16 × 16 f32
        // transpose stores 64 bytes to each of 16 rows.
        for func in [
            samples::vector_add(8).unwrap(),
            samples::transpose(16, 16).unwrap(),
        ] {
            let code = listing(&func, isa);
            assert_eq!(streaming_stores(&code), 0, "{} ({isa}) streams", func.name);
        }
    }
}

/// Runs `func` on every level this CPU runs, streaming every output
/// (threshold 0) and none (`u64::MAX`): byte-identical to the interpreter.
fn agrees_streaming_or_not(func: &Function, grid: [u32; 3], args: Vec<Arg>) {
    let mut expected = args.clone();
    interp::run(func, grid, &mut expected).unwrap_or_else(|e| panic!("interpreter: {e}"));
    for isa in HostIsa::for_this_architecture() {
        if !isa.runs_here() {
            continue;
        }
        let mut library = load(
            &host::compile(func, isa, &CodegenOptions::default()).unwrap(),
            func,
        )
        .unwrap();
        for threshold in [0, u64::MAX] {
            library.set_stream_threshold(threshold);
            let mut actual = args.clone();
            let mut launch: Vec<_> = actual.iter_mut().map(LaunchArg::from).collect();
            library
                .run(grid, &mut launch)
                .unwrap_or_else(|e| panic!("{} ({isa}): {e}", func.name));
            assert!(
                bytes(&actual) == bytes(&expected),
                "{} ({isa}, threshold {threshold}) differs from the interpreter",
                func.name
            );
        }
    }
}

/// An f32 tensor of `shape` (row-major) whose element zero lies `skew`
/// elements into its buffer, the rest of which holds a pattern that must
/// survive.
fn skewed(seed: u64, shape: &[usize], skew: usize) -> Arg {
    let n: usize = shape.iter().product();
    let mut data: Vec<f32> = (0..n + skew + 7).map(|i| -(i as f32) - 0.25).collect();
    if let Arg::Tensor(t) = tensor(seed, &[n]) {
        for (d, s) in data[skew..].iter_mut().zip(t.data().chunks(4)) {
            *d = f32::from_le_bytes([s[0], s[1], s[2], s[3]]);
        }
    }
    let mut strides = vec![1isize; shape.len()];
    for k in (0..shape.len().saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * shape[k + 1] as isize;
    }
    let raw: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    Arg::Tensor(HostTensor::with_strides(DType::F32, shape, &strides, skew, raw).unwrap())
}

#[test]
fn streaming_equals_the_interpreter_at_every_alignment_and_edge() {
    for (block, n) in [(64, 150), (1024, 3000), (256, 256), (100, 1000)] {
        for skew in [0, 1, 3, 5, 15, 16] {
            let func = samples::vector_add(block).unwrap();
            let args = vec![tensor(1, &[n]), tensor(2, &[n]), skewed(3, &[n], skew)];
            agrees_streaming_or_not(&func, [blocks(n, block), 1, 1], args);
        }
    }
    for (bm, bn, m, n) in [(64, 32, 150, 70), (64, 16, 64, 40), (128, 8, 300, 20)] {
        for skew in [0, 3, 16] {
            let func = samples::transpose(bm, bn).unwrap();
            let args = vec![tensor(4, &[m, n]), skewed(5, &[n, m], skew)];
            agrees_streaming_or_not(&func, [blocks(m, bm), blocks(n, bn), 1], args);
        }
    }
    for (br, bc, rows, cols) in [(2, 128, 7, 100), (2, 384, 5, 384)] {
        let func = samples::layernorm(br, bc).unwrap();
        let args = vec![
            tensor(6, &[rows, cols]),
            tensor(7, &[cols]),
            tensor(8, &[cols]),
            skewed(9, &[rows, cols], 1),
            Arg::Scalar(tile_ir::Scalar::F32(1e-5)),
        ];
        agrees_streaming_or_not(&func, [blocks(rows, br), 1, 1], args);
    }
}

#[test]
fn streaming_stores_every_element_size_exactly() {
    for dtype in [DType::Bool, DType::U8, DType::F16, DType::I32, DType::F64] {
        for (block, n) in [(256, 1000), (512, 512)] {
            let func = cast_copy(block, dtype);
            let args = vec![tensor(10, &[n]), tensor_of(11, &[n], dtype)];
            agrees_streaming_or_not(&func, [blocks(n, block), 1, 1], args);
        }
    }
}

#[test]
fn strided_outputs_take_the_plain_path() {
    // `out` as the transpose of a row-major buffer: its last axis has
    // stride 8, so its stores cannot stream; results are unchanged.
    let func = samples::vector_add(64).unwrap();
    let raw = vec![0u8; 4 * 8 * 200];
    let out = HostTensor::with_strides(DType::F32, &[200], &[8], 3, raw).unwrap();
    let args = vec![tensor(12, &[200]), tensor(13, &[200]), Arg::Tensor(out)];
    agrees_streaming_or_not(&func, [blocks(200, 64), 1, 1], args);
}

#[test]
fn random_programs_streaming_every_output_agree_with_the_interpreter() {
    use tile_codegen::host::HostError;
    use tile_runtime::cpu::RunError;
    use tile_testgen::{generate, GenConfig};
    let Some(isa) = HostIsa::best_here().filter(|&isa| isa != HostIsa::Aarch64) else {
        eprintln!("skipped: this CPU has no streaming level");
        return;
    };
    // Tiles up to 1024 elements of rank 1 or 2, so that rows reach the
    // four lines a streaming store needs.
    let config = GenConfig {
        max_rank: 2,
        max_tile_elements: 1024,
        ..GenConfig::default()
    };
    let (mut streamed, mut failures) = (0, Vec::new());
    for seed in 0..120 {
        let case = generate(seed, &config);
        let mut expected = case.args.clone();
        let oracle = interp::run(&case.func, case.grid, &mut expected);
        if interp::check_launch(&case.func, case.grid, &case.args).is_err() {
            continue;
        }
        let image = match host::compile(&case.func, isa, &CodegenOptions::default()) {
            Err(HostError::Unsupported { .. }) => continue,
            other => other.unwrap_or_else(|e| panic!("seed {seed}: {e}")),
        };
        streamed += usize::from(image.llvm_ir().contains("!nontemporal"));
        let mut library = load(&image, &case.func).unwrap();
        library.set_stream_threshold(0);
        let mut actual = case.args.clone();
        let mut launch: Vec<_> = actual.iter_mut().map(LaunchArg::from).collect();
        match (library.run(case.grid, &mut launch), oracle) {
            (Ok(()), Ok(())) => {
                drop(launch);
                if bytes(&actual) != bytes(&expected) {
                    failures.push(format!("seed {seed}: results differ"));
                }
            }
            (Err(RunError::Op { .. }), Err(_)) => {}
            (host, oracle) => failures.push(format!(
                "seed {seed}: host {host:?}, interpreter {oracle:?}"
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        streamed >= 10,
        "only {streamed} programs have a streaming store"
    );
    eprintln!("{streamed} of 120 programs have streaming stores");
}

/// The example's transpose: `program_id(0)` indexes the columns of `x`, so
/// consecutive programs read consecutive tiles along the same rows.
const TRANSPOSE_ALONG_ROWS: &str =
    "kernel @transpose_rows(%x: tensor<f32, 2>, %out: tensor<f32, 2>) {
  %pn = program_id 0 : i32
  %pm = program_id 1 : i32
  %vx = partition_view %x [32, 32] : view<f32, [32, 32]>
  %vo = partition_view %out [32, 32] : view<f32, [32, 32]>
  %t = load_masked %vx[%pm, %pn] pad(zero) : tile<32x32xf32>
  %tt = permute %t [1, 0] : tile<32x32xf32>
  store_masked %tt, %vo[%pn, %pm]
}";

#[test]
fn tiles_read_along_rows_prefetch_the_next_programs_tile() {
    let along_rows = tile_ir::text::parse_function(TRANSPOSE_ALONG_ROWS).unwrap();
    let prefetches = |code: &str| code.lines().filter(|l| l.contains("prefetch")).count();
    for isa in HostIsa::for_this_architecture() {
        // 32 rows of 128 bytes: two lines each.
        let code = listing(&along_rows, isa);
        assert!(
            prefetches(&code) >= 2,
            "transpose_rows ({isa}): no prefetch"
        );
        // Tiles whose rows follow each other are left to the hardware: the
        // program id indexes the leading axis.
        for func in [
            samples::transpose(32, 32).unwrap(),
            samples::vector_add(1024).unwrap(),
            samples::layernorm(8, 64).unwrap(),
        ] {
            let code = listing(&func, isa);
            assert_eq!(prefetches(&code), 0, "{} ({isa}) prefetches", func.name);
        }
    }
    // The last column of tiles prefetches past the end of `x`, and the
    // right and bottom tiles are partial: the result is the interpreter's.
    let (m, n) = (70, 100);
    let args = vec![
        tensor_of(3, &[m, n], DType::F32),
        tensor_of(4, &[n, m], DType::F32),
    ];
    common::host_agrees(
        &along_rows,
        [n.div_ceil(32) as u32, m.div_ceil(32) as u32, 1],
        args,
    );
}

//! Tensor arrays through the lowering and the lockstep emulator: the
//! grouped matmul on CUDA cores and on every kind of tensor core, and a
//! loop over an array's tensors whose extents are read inside the loop,
//! equal to the interpreter; the thread program's text form; and a
//! `get_tensor` index outside the array, a failed check naming the op.

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::{samples, DType, Function, Scalar};
use tile_testgen::inputs::f32_vectors;
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions, TensorCores};
use tile_thread::program::{parse_program, ParamKind, ThreadOpKind};

/// A `rows × cols` tensor of `dtype` holding small integers (every `dot`
/// of them is exact in any order), different per `seed`.
fn small(seed: usize, rows: usize, cols: usize, dtype: DType) -> HostTensor {
    let scalars: Vec<Scalar> = (0..rows * cols)
        .map(|i| {
            let v = ((i * 5 + seed * 11) % 7) as f32 - 3.0;
            tile_ir::eval::cast(Scalar::F32(v), dtype)
        })
        .collect();
    HostTensor::from_scalars(dtype, &[rows, cols], &scalars).unwrap()
}

/// The grouped matmul's arguments for problems `(m, n, k)`.
fn grouped_args(problems: &[(usize, usize, usize)], dtype: DType) -> Vec<Arg> {
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for (g, &(m, n, k)) in problems.iter().enumerate() {
        a.push(small(g, m, k, dtype));
        b.push(small(g + 3, k, n, dtype));
        c.push(small(g + 6, m, n, DType::F32));
    }
    vec![Arg::Tensors(a), Arg::Tensors(b), Arg::Tensors(c)]
}

fn bits(args: &[Arg]) -> Vec<Vec<u64>> {
    let tensor = |t: &HostTensor| t.to_scalars().iter().map(|s| s.to_bits()).collect();
    args.iter()
        .flat_map(|a| match a {
            Arg::Tensor(t) => vec![tensor(t)],
            Arg::Tensors(ts) => ts.iter().map(tensor).collect(),
            Arg::Scalar(s) => vec![vec![s.to_bits()]],
        })
        .collect()
}

/// Runs `func` in the interpreter and lowered with `options` in the
/// emulator; the outputs must be equal bit for bit.
fn agree(func: &Function, options: &LowerOptions, grid: [u32; 3], args: Vec<Arg>) -> String {
    let mut expected = args.clone();
    interp::run(func, grid, &mut expected).unwrap();
    let program = lower(func, options).unwrap();
    tile_thread::program::verify(&program).unwrap();
    let mut actual = args;
    emulate::run(&program, grid, &mut actual).unwrap_or_else(|e| panic!("{options:?}: {e}"));
    assert_eq!(bits(&actual), bits(&expected), "{options:?}");
    program.to_string()
}

#[test]
fn a_grouped_matmul_agrees_on_every_kind_of_core() {
    let problems = [(70, 80, 48), (7, 50, 20), (1, 1, 1), (33, 16, 0)];
    let grid = [2, 2, problems.len() as u32];
    let func = samples::grouped_matmul(64, 64, 16, DType::F16).unwrap();
    let cores = [
        (TensorCores::None, 4, "= fma"),
        (TensorCores::MmaSync, 4, "mma.m16n8k16"),
        (TensorCores::Wgmma, 4, "wgmma."),
        (TensorCores::Mfma, 4, "mma.mfma"),
        (TensorCores::Wmma, 2, "mma.wmma"),
    ];
    for (cores, warps, instruction) in cores {
        for stages in [1, 3] {
            let options = LowerOptions::warps(warps)
                .with_tensor_cores(cores)
                .with_stages(stages);
            let text = agree(&func, &options, grid, grouped_args(&problems, DType::F16));
            assert!(text.contains(instruction), "{cores:?}: no {instruction}");
            if cores.cp_async() {
                assert!(text.contains("cp.async"), "{cores:?}: no cp.async");
            }
        }
    }
    // The TMA copies through maps of tensor parameters alone: the tensors
    // of arrays take `cp.async`.
    let options = LowerOptions::warps(4)
        .with_tensor_cores(TensorCores::Wgmma)
        .with_stages(3)
        .with_tma(true);
    let text = agree(&func, &options, grid, grouped_args(&problems, DType::F16));
    assert!(
        text.contains("cp.async") && !text.contains("tma.load"),
        "{text}"
    );
}

#[test]
fn tensors_chosen_in_a_loop_have_their_extents_read_there() {
    let func = samples::double_each(64).unwrap();
    let lengths = [100, 3, 0, 64, 129];
    for warps in [1, 2] {
        let args = vec![f32_vectors(&lengths, 0), f32_vectors(&lengths, 7)];
        let text = agree(&func, &LowerOptions::warps(warps), [3, 1, 1], args);
        // The extents of the tensors the loop picks are read after their
        // `get_tensor`, inside the loop, not in the kernel's prologue.
        let get = text.find("get_tensor xs_0 = xs[").expect("a get_tensor");
        let dim = text.find("dim xs_0.0").expect("the extent");
        let for_loop = text.find("for ").expect("the loop");
        assert!(for_loop < get && get < dim, "{text}");
    }
}

#[test]
fn the_program_text_reads_back() {
    let func = samples::grouped_matmul(32, 16, 16, DType::F16).unwrap();
    let options = LowerOptions::warps(4).with_tensor_cores(TensorCores::MmaSync);
    let program = lower(&func, &options).unwrap();
    let text = program.to_string();
    assert!(
        text.starts_with(
            "kernel grouped_matmul warps 4 (a: tensors<f16, 2>, b: tensors<f16, 2>, \
             c: tensors<f32, 2>, a_0: tensor<f16, 2> of a, b_0: tensor<f16, 2> of b, \
             c_0: tensor<f32, 2> of c)"
        ),
        "{text}"
    );
    let parsed = parse_program(&text).unwrap();
    assert_eq!(parsed.to_string(), text);
    assert!(matches!(
        parsed.params[3].kind,
        ParamKind::Element { array: 0, .. }
    ));
    let gets = parsed
        .ops
        .iter()
        .filter(|(_, op)| matches!(op.kind, ThreadOpKind::GetTensor { .. }))
        .count();
    assert_eq!(gets, 3);
}

#[test]
fn an_index_outside_the_array_fails_its_check() {
    let func = samples::double_each(64).unwrap();
    let program = lower(&func, &LowerOptions::warps(1)).unwrap();
    // `ys` holds one tensor more than `xs`: its last index is outside `xs`.
    let mut args = vec![f32_vectors(&[4, 4], 0), f32_vectors(&[4, 4, 4], 0)];
    let err = emulate::run(&program, [1, 1, 1], &mut args)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("tensor index check failed in kernel `double_each`")
            && err.contains("get_tensor %xs, ")
            && err.contains("tensor index 2 is outside the tensor array of 2 tensors"),
        "{err}"
    );
    let mut expected = vec![f32_vectors(&[4, 4], 0), f32_vectors(&[4, 4, 4], 0)];
    let err = interp::run(&func, [1, 1, 1], &mut expected)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("tensor index 2 is outside the tensor array of 2 tensors"),
        "{err}"
    );
}

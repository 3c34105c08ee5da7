//! Tensors promised aligned (`tensor<f32, 2, aligned>`): their accesses are
//! whole vectors with no contiguity test and no element-by-element path,
//! and every GPU stage — the lockstep emulator and the LLVM IR an sm_80,
//! gfx942 and gfx1100 receive (on the emulation target) — stores the
//! interpreter's bits for aligned arguments with padded rows, offset starts
//! and partial tiles; ptxas assembles the PTX and ld.lld links the code
//! objects. The interpreter refuses a misaligned argument.

mod emulated;

use emulated::{agrees, padded};

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{samples, DType, Function};
use tile_thread::lower::{lower, LowerOptions};

#[test]
fn an_aligned_softmax_over_padded_rows_agrees_on_every_stage() {
    // Rows of 36 columns (a multiple of 16 bytes) in tiles of 64: the last
    // vectors of each row are masked off as wholes; 5 rows in tiles of 2.
    let func = samples::with_aligned_tensors(samples::softmax(2, 64).unwrap());
    let args = || {
        vec![
            Arg::Tensor(padded(DType::F32, (5, 36), (40, 8), |i| {
                ((i * 37 + 11) % 97) as f64 * 0.25 - 9.0
            })),
            Arg::Tensor(padded(DType::F32, (5, 36), (44, 4), |_| -1.0)),
        ]
    };
    agrees(&func, args, 1, [3, 1, 1]);
    emulated::assembles_and_links(&func, 4);
}

#[test]
fn an_aligned_tensor_core_matmul_agrees_on_every_stage() {
    // sm_80 copies the operands with `cp.async` and no element-by-element
    // path; K = 24 ends in half a block of 16.
    let func = samples::with_aligned_tensors(samples::matmul(32, 32, 16, DType::F16).unwrap());
    let small = |i: usize| (i % 7) as f64 - 3.0;
    let args = || {
        vec![
            Arg::Tensor(padded(DType::F16, (40, 24), (32, 8), small)),
            Arg::Tensor(padded(DType::F16, (24, 40), (48, 0), |i| small(i / 3))),
            Arg::Tensor(padded(DType::F32, (40, 40), (44, 4), |_| 0.0)),
        ]
    };
    agrees(&func, args, 2, [2, 2, 1]);
}

/// `out = x + x` over tiles of 4 × 32 elements of `dtype`.
fn doubling(dtype: DType) -> Function {
    let text = format!(
        r#"kernel @double_{dtype}(%x: tensor<{dtype}, 2, aligned>, %out: tensor<{dtype}, 2, aligned>) {{
  %r = program_id 0 : i32
  %c = program_id 1 : i32
  %vx = partition_view %x [4, 32] : view<{dtype}, [4, 32]>
  %t = load_masked %vx[%r, %c] pad(zero) : tile<4x32x{dtype}>
  %s = add %t, %t : tile<4x32x{dtype}>
  %vo = partition_view %out [4, 32] : view<{dtype}, [4, 32]>
  store_masked %s, %vo[%r, %c]
}}"#
    );
    parse_function(&text).unwrap()
}

#[test]
fn aligned_vectors_of_every_width_agree_on_every_stage() {
    // f16: vectors of 8 over rows of 40; f64: of 2 over rows of 34.
    for (dtype, cols, pitch) in [
        (DType::F16, 40, 48),
        (DType::F32, 44, 48),
        (DType::F64, 34, 36),
    ] {
        let func = doubling(dtype);
        let args = || {
            vec![
                Arg::Tensor(padded(dtype, (6, cols), (pitch, pitch), |i| i as f64 * 0.5)),
                Arg::Tensor(padded(dtype, (6, cols), (pitch, 0), |_| -3.0)),
            ]
        };
        agrees(&func, args, 1, [2, 2, 1]);
    }
}

#[test]
fn aligned_accesses_have_no_test_and_no_element_path() {
    let aligned = samples::with_aligned_tensors(samples::softmax(2, 64).unwrap());
    let plain = samples::softmax(2, 64).unwrap();
    let text = |f: &Function| lower(f, &LowerOptions::warps(4)).unwrap().to_string();
    let (aligned, plain) = (text(&aligned), text(&plain));
    for (op, in_plain) in [(" = align ", true), (" = opaque ", true)] {
        assert_eq!(plain.contains(op), in_plain, "`{op}` in\n{plain}");
        assert!(!aligned.contains(op), "`{op}` in\n{aligned}");
    }
    assert!(aligned.contains("x: tensor<f32, 2, aligned>"), "{aligned}");
}

#[test]
fn a_misaligned_argument_is_refused_by_the_interpreter() {
    let func = doubling(DType::F32);
    let run = |x: HostTensor| {
        let out = padded(DType::F32, (2, 8), (8, 0), |_| 0.0);
        let mut args = vec![Arg::Tensor(x), Arg::Tensor(out)];
        interp::run(&func, [1, 1, 1], &mut args).map_err(|e| e.to_string())
    };
    let expected = "argument 0 (`x`): expected tensor<f32, 2, aligned> (contiguous rows, and its start, row strides and row length multiples of 16 bytes), found tensor<f32, 2> of shape [2, 8]";
    // Rows 8 elements (32 bytes) apart starting 16 bytes in are aligned.
    let x = padded(DType::F32, (2, 8), (8, 4), |i| i as f64);
    assert_eq!(run(x), Ok(()));
    let cases = [
        ((10, 0), "with strides [10, 1]: the stride of axis 0 is 10 elements (40 bytes), not a multiple of 16 bytes"),
        ((8, 2), "with strides [8, 1]: its start is 8 bytes into its buffer, not a multiple of 16"),
    ];
    for ((pitch, offset), reason) in cases {
        let x = padded(DType::F32, (2, 8), (pitch, offset), |i| i as f64);
        assert_eq!(run(x), Err(format!("{expected} {reason}")));
    }
    let narrow = padded(DType::F32, (2, 6), (8, 0), |i| i as f64);
    assert_eq!(
        run(narrow),
        Err("argument 0 (`x`): expected tensor<f32, 2, aligned> (contiguous rows, and its start, row strides and row length multiples of 16 bytes), found tensor<f32, 2> of shape [2, 6] with strides [8, 1]: its rows are 6 elements (24 bytes), not a multiple of 16 bytes".into())
    );
    let columns = HostTensor::with_strides(DType::F32, &[2, 8], &[1, 2], 0, vec![0; 64]).unwrap();
    assert_eq!(
        run(columns),
        Err("argument 0 (`x`): expected tensor<f32, 2, aligned> (contiguous rows, and its start, row strides and row length multiples of 16 bytes), found tensor<f32, 2> of shape [2, 8] with strides [1, 2]: its rows are not contiguous: the innermost stride is 2, not 1".into())
    );
}

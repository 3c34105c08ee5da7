//! A product's `b` that is the transpose of a tile computed in registers:
//! weights stored `[N, K]`, dequantized (`i8` cast to f16 and scaled) and
//! transposed, as quantized linear layers and block-scaled products read
//! them. The transpose keeps its operand's registers and the product
//! stages them K-major, in 16-byte vectors along `k`, where the
//! instruction reads B so (`mma.sync`, `wgmma`); the emulator agrees with
//! the interpreter.

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{DType, Scalar};
use tile_testgen::inputs::blocks;
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions, TensorCores};

const DEQUANTIZED: &str =
    "kernel @dequantized(%x: tensor<f16, 2>, %w: tensor<i8, 2>, %o: tensor<f32, 2>) {
  %m = program_id 0 : i32
  %n = program_id 1 : i32
  %zero = constant 0 : i32
  %one = constant 1 : i32
  %k = dim %x axis 1 : i32
  %bk = constant 32 : i32
  %k1 = add %k, %bk : i32
  %k2 = sub %k1, %one : i32
  %steps = div %k2, %bk : i32
  %vx = partition_view %x [64, 32] : view<f16, [64, 32]>
  %vw = partition_view %w [64, 32] : view<i8, [64, 32]>
  %vo = partition_view %o [64, 64] : view<f32, [64, 64]>
  %init = full 0.0 : tile<64x64xf32>
  %half = full 0.5 : tile<64x32xf16>
  %acc = for %i = %zero to %steps step %one iter(%c0 = %init) : tile<64x64xf32> {
    %a = load_masked %vx[%m, %i] pad(zero) : tile<64x32xf16>
    %q = load_masked %vw[%n, %i] pad(zero) : tile<64x32xi8>
    %h = cast %q to f16 : tile<64x32xf16>
    %s = mul %h, %half : tile<64x32xf16>
    %b = permute %s [1, 0] : tile<32x64xf16>
    %d = dot tensor %a, %b, %c0 : tile<64x64xf32>
    yield %d
  }
  store_masked %acc, %vo[%m, %n]
}";

/// A tensor of `shape` and `dtype` holding small integers.
fn tensor(dtype: DType, shape: &[usize]) -> Arg {
    let n: usize = shape.iter().product();
    let scalars: Vec<Scalar> = (0..n)
        .map(|i| tile_ir::eval::cast(Scalar::F32(((i * 7 + i / 5) % 9) as f32 - 4.0), dtype))
        .collect();
    Arg::Tensor(HostTensor::from_scalars(dtype, shape, &scalars).unwrap())
}

#[test]
fn dequantized_weights_are_staged_k_major_in_vectors() {
    let func = parse_function(DEQUANTIZED).unwrap();
    let (m, n, k) = (67, 123, 96);
    for cores in [TensorCores::MmaSync, TensorCores::Wgmma] {
        let options = LowerOptions::warps(4).with_tensor_cores(cores);
        let program = lower(&func, &options).unwrap();
        tile_thread::program::verify(&program).unwrap();
        let text = program.to_string();
        // The operands' staging is the loop's only use of shared memory:
        // one barrier before it is rewritten and one before it is read,
        // and each thread stores the 16 weights it dequantized, two runs
        // of 8 `k`, as two vectors (`x` is copied by `cp.async`). Staged
        // `[K, N]`, they took 16 scalar stores a thread.
        assert_eq!(text.matches("barrier").count(), 2, "{cores:?}:\n{text}");
        assert_eq!(
            text.matches("st.shared.v8").count(),
            2,
            "{cores:?}:\n{text}"
        );
        let args = vec![
            tensor(DType::F16, &[m, k]),
            tensor(DType::I8, &[n, k]),
            Arg::Tensor(HostTensor::zeros(DType::F32, &[m, n])),
        ];
        let grid = [blocks(m, 64), blocks(n, 64), 1];
        let (mut emulated, mut reference) = (args.clone(), args);
        emulate::run(&program, grid, &mut emulated).unwrap();
        interp::run(&func, grid, &mut reference).unwrap();
        assert_eq!(emulated[2], reference[2], "{cores:?}");
    }
}

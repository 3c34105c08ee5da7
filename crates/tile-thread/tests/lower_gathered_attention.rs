//! Decoding attention over gathered keys and values (the corpus's
//! `decode_attention`, SGLang's first stage, as the tile IR's default
//! pipeline leaves it): lowered for 4 warps and run by the lockstep
//! emulator against the interpreter, and the shared memory it stages.

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{DType, Scalar};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions, TensorCores};

/// The kernel: a program per sequence, head and split walks its split in
/// blocks of 64 slots, gathers their rows of the key and value pools
/// (`[slots, heads, 128]` bf16), and keeps a running maximum and sum.
const DECODE: &str = "kernel @decode_attention(%q: tensor<bf16, 3, aligned>, %k_buf: tensor<bf16, 3, aligned>, %v_buf: tensor<bf16, 3, aligned>, %sm_scale: f32, %kv_indptr: tensor<i32, 1>, %kv_indices: tensor<i32, 1>, %att_out: tensor<f32, 4, aligned>, %att_lse: tensor<f32, 3>, %num_kv_splits: tensor<i32, 1>) {
  %0 = program_id 0 : i32
  %1 = program_id 1 : i32
  %2 = program_id 2 : i32
  %3 = constant 1 : i32
  %4 = iota : tile<1x128xi32>
  %5 = constant true : bool
  %6 = constant 0 : i32
  %7 = gather %kv_indptr[%0], %5, %6 : i32
  %8 = add %0, %3 : i32
  %9 = gather %kv_indptr[%8], %5, %6 : i32
  %10 = sub %9, %7 : i32
  %11 = gather %num_kv_splits[%0], %5, %6 : i32
  %12 = add %10, %11 : i32
  %13 = sub %12, %3 : i32
  %14 = div %13, %11 : i32
  %15 = constant 32 : i32
  %16 = add %14, %15 : i32
  %17 = sub %16, %3 : i32
  %18 = div %17, %15 : i32
  %19 = mul %18, %15 : i32
  %20 = mul %19, %2 : i32
  %21 = add %20, %19 : i32
  %22 = min %21, %10 : i32
  %23 = constant -inf : f32
  %24 = constant 0.0 : f32
  %25 = full 0.0 : tile<1x128xf32>
  %26 = cmp gt %22, %20 : bool
  %27, %28, %29 = if %26 : tile<1x128xf32>, f32, f32 {
    %30 = partition_view %q [1, 1, 128] : view<bf16, [1, 1, 128]>
    %31 = load %30[%0, %1, %6] : tile<1x1x128xbf16>
    %32 = reshape %31 to [1, 128] : tile<1x128xbf16>
    %33 = constant 64 : i32
    %34, %35, %36 = for %37 = %20 to %22 step %33 iter(%38 = %25, %39 = %23, %40 = %24) : tile<1x128xf32>, f32, f32 loc(\"examples/corpus/decode_attention.rs\":58:9, \"for start_n in(..).step_by(..){..}\") {
      %41 = iota : tile<64x1xi32>
      %42 = broadcast %37 to [64, 1] : tile<64x1xi32>
      %43 = add %41, %42 : tile<64x1xi32>
      %44 = broadcast %22 to [64, 1] : tile<64x1xi32>
      %45 = cmp lt %43, %44 : tile<64x1xbool>
      %46 = broadcast %7 to [64, 1] : tile<64x1xi32>
      %47 = add %43, %46 : tile<64x1xi32>
      %48 = full 0 : tile<64x1xi32>
      %49 = gather %kv_indices[%47], %45, %48 : tile<64x1xi32>
      %50 = broadcast %1 to [64, 128] : tile<64x128xi32>
      %51 = broadcast %49 to [64, 128] : tile<64x128xi32>
      %52 = broadcast %4 to [64, 128] : tile<64x128xi32>
      %53 = broadcast %45 to [64, 128] : tile<64x128xbool>
      %54 = full 0.0 : tile<64x128xbf16>
      %55 = gather %k_buf[%51, %50, %52], %53, %54 : tile<64x128xbf16>
      %56 = broadcast %32 to [64, 128] : tile<64x128xbf16>
      %57 = mul %56, %55 : tile<64x128xbf16>
      %58 = cast %57 to f32 : tile<64x128xf32>
      %59 = reduce sum %58 axis 1 keepdim : tile<64x1xf32>
      %60 = broadcast %sm_scale to [64, 1] : tile<64x1xf32>
      %61 = mul %59, %60 : tile<64x1xf32>
      %62 = full -inf : tile<64x1xf32>
      %63 = select %45, %61, %62 : tile<64x1xf32>
      %64 = gather %v_buf[%51, %50, %52], %53, %54 : tile<64x128xbf16>
      %65 = reduce max %63 axis 0 : tile<1xf32>
      %66 = reduce max %65 axis 0 : f32
      %67 = max %66, %39 : f32
      %68 = sub %39, %67 : f32
      %69 = exp %68 : f32
      %70 = broadcast %67 to [64, 1] : tile<64x1xf32>
      %71 = sub %63, %70 : tile<64x1xf32>
      %72 = exp %71 : tile<64x1xf32>
      %73 = broadcast %69 to [1, 128] : tile<1x128xf32>
      %74 = mul %38, %73 : tile<1x128xf32>
      %75 = cast %64 to f32 : tile<64x128xf32>
      %76 = broadcast %72 to [64, 128] : tile<64x128xf32>
      %77 = mul %76, %75 : tile<64x128xf32>
      %78 = reduce sum %77 axis 0 keepdim : tile<1x128xf32>
      %79 = add %74, %78 : tile<1x128xf32>
      %80 = mul %40, %69 : f32
      %81 = reduce sum %72 axis 0 : tile<1xf32>
      %82 = reduce sum %81 axis 0 : f32
      %83 = add %80, %82 : f32
      yield %79, %67, %83
    }
    %84 = partition_view %att_out [1, 1, 1, 128] : view<f32, [1, 1, 1, 128]>
    %85 = broadcast %36 to [1, 128] : tile<1x128xf32>
    %86 = div %34, %85 : tile<1x128xf32>
    %87 = reshape %86 to [1, 1, 1, 128] : tile<1x1x1x128xf32>
    store %87, %84[%0, %1, %2, %6]
    %88 = log %36 : f32
    %89 = add %35, %88 : f32
    %90 = broadcast %0 to [1] : tile<1xi32>
    %91 = broadcast %1 to [1] : tile<1xi32>
    %92 = broadcast %2 to [1] : tile<1xi32>
    %93 = broadcast %89 to [1] : tile<1xf32>
    %94 = full true : tile<1xbool>
    scatter %att_lse[%90, %91, %92], %93, %94
    yield %34, %35, %36
  } else {
    yield %25, %23, %24
  }
}";

/// A bf16 tensor of `shape` holding multiples of 1/16 below 2 (exact).
fn bf16_tensor(shape: &[usize], seed: usize) -> Arg {
    let n: usize = shape.iter().product();
    let v: Vec<Scalar> = (0..n)
        .map(|i| ((i * seed + 3) % 31) as f32 / 16.0 - 0.9375)
        .map(|x| Scalar::from_bits(DType::BF16, u64::from(x.to_bits() >> 16)))
        .collect();
    Arg::Tensor(HostTensor::from_scalars(DType::BF16, shape, &v).unwrap())
}

/// One sequence of 100 tokens whose slots are scattered over a pool of 160,
/// in 2 splits of 64 (the second ends inside its block), and a third split
/// with no tokens: the output equals the interpreter's, and the index, mask
/// and zero tiles the two gathers read in their different layouts are
/// broadcast again from their `[64, 1]` operands and constant, not staged
/// through shared memory as `[64, 128]` tiles (56 KiB).
#[test]
fn gathered_keys_and_values_match_the_interpreter_without_staged_index_tiles() {
    let func = parse_function(DECODE).unwrap_or_else(|e| panic!("{e}"));
    let (pool, len, splits) = (160usize, 100usize, 3usize);
    let indices: Vec<i32> = (0..len).map(|i| ((i * 37 + 11) % pool) as i32).collect();
    let args = vec![
        bf16_tensor(&[1, 1, 128], 5),
        bf16_tensor(&[pool, 1, 128], 7),
        bf16_tensor(&[pool, 1, 128], 11),
        Arg::Scalar(Scalar::F32(0.125)),
        Arg::Tensor(HostTensor::from_vec(&[2], vec![0i32, len as i32]).unwrap()),
        Arg::Tensor(HostTensor::from_vec(&[len], indices).unwrap()),
        Arg::Tensor(
            HostTensor::from_vec(&[1, 1, splits, 128], vec![7.0f32; splits * 128]).unwrap(),
        ),
        Arg::Tensor(HostTensor::from_vec(&[1, 1, splits], vec![7.0f32; splits]).unwrap()),
        Arg::Tensor(HostTensor::from_vec(&[1], vec![2i32]).unwrap()),
    ];
    let grid = [1, 1, splits as u32];
    let mut expected = args.clone();
    interp::run(&func, grid, &mut expected).unwrap();
    // The corpus builds it with `approx_math`: sums in any order.
    let options = LowerOptions::warps(4)
        .with_reassociated_sums(true)
        .with_tensor_cores(TensorCores::MmaSync)
        .with_stages(2);
    let program = lower(&func, &options).unwrap();
    tile_thread::program::verify(&program).unwrap();
    let mut actual = args;
    emulate::run(&program, grid, &mut actual).unwrap();
    // Sums in another order than the interpreter's: within 2⁻¹⁸ here.
    let close = |a: &Arg, b: &Arg| match (a, b) {
        (Arg::Tensor(a), Arg::Tensor(b)) => {
            let (a, b) = (a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
            a.iter()
                .zip(&b)
                .all(|(x, y)| (x - y).abs() <= 4e-6 * (1.0 + y.abs()))
        }
        _ => false,
    };
    assert!(close(&actual[6], &expected[6]), "the split outputs");
    assert!(close(&actual[7], &expected[7]), "the log-sum-exps");
    let staged: Vec<(DType, usize)> = program
        .shared
        .iter()
        .map(|(_, a)| (a.dtype, a.len))
        .filter(|&(_, len)| len >= 64 * 128)
        .collect();
    assert_eq!(staged, [], "{program}");
}

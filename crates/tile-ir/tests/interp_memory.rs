//! Loads and stores of partitions: the reference's examples, partial edge
//! tiles, strided tensors, padding, and every bounds error with its message.

mod interp_support;

use half::f16;
use interp_support::{f32_tensor, random_f32, tensor_ty, zero_index};
use rand::{rngs::SmallRng, SeedableRng};
use tile_ir::builder::Builder;
use tile_ir::f8::F8E5M2;
use tile_ir::interp::{run, Arg, Fault, HostTensor, InterpError};
use tile_ir::{samples, DType, Function, Padding, Scalar, Type};

/// `out[0-tile] = load(x[i, j])` with `x`'s partitions of `tile`; `padding`
/// selects `load_masked`.
fn probe(dtype: DType, tile: &[usize], padding: Option<Padding>) -> Function {
    let mut b = Builder::new("probe");
    let x = b.param("x", tensor_ty(dtype, 2));
    let out = b.param("out", tensor_ty(dtype, 2));
    let i = b.param("i", Type::Scalar(DType::I32));
    let j = b.param("j", Type::Scalar(DType::I32));
    let vx = b.partition_view(x, tile).unwrap();
    let t = match padding {
        Some(p) => b.load_masked(vx, &[i, j], p).unwrap(),
        None => b.load(vx, &[i, j]).unwrap(),
    };
    let vo = b.partition_view(out, tile).unwrap();
    let zero = zero_index(&mut b, 2).unwrap();
    b.store(t, vo, &zero).unwrap();
    b.finish().unwrap()
}

fn run_probe(
    func: &Function,
    x: HostTensor,
    tile: &[usize],
    i: i32,
    j: i32,
) -> Result<HostTensor, InterpError> {
    let out = HostTensor::zeros(x.dtype(), tile);
    let mut args = vec![
        Arg::Tensor(x),
        Arg::Tensor(out),
        Arg::Scalar(Scalar::I32(i)),
        Arg::Scalar(Scalar::I32(j)),
    ];
    run(func, [1, 1, 1], &mut args)?;
    match &args[1] {
        Arg::Tensor(t) => Ok(t.clone()),
        _ => unreachable!(),
    }
}

fn iota_i32(shape: &[usize]) -> HostTensor {
    let n: usize = shape.iter().product();
    HostTensor::from_vec(shape, (0..n as i32).collect()).unwrap()
}

#[test]
fn reference_load_example() {
    let out = run_probe(
        &probe(DType::I32, &[2, 2], None),
        iota_i32(&[4, 8]),
        &[2, 2],
        1,
        2,
    )
    .unwrap();
    assert_eq!(out.to_vec::<i32>().unwrap(), vec![20, 21, 28, 29]);
}

#[test]
fn reference_masked_load_example_pads_with_nan() {
    let x = f32_tensor(&[4, 11], (0..44).map(|v| v as f32).collect());
    let out = run_probe(
        &probe(DType::F32, &[2, 4], Some(Padding::Nan)),
        x,
        &[2, 4],
        0,
        2,
    )
    .unwrap();
    let got = out.to_vec::<f32>().unwrap();
    assert_eq!(&got[..3], &[8.0, 9.0, 10.0]);
    assert_eq!(&got[4..7], &[19.0, 20.0, 21.0]);
    assert_eq!(got[3].to_bits(), 0x7fc0_0000);
    assert_eq!(got[7].to_bits(), 0x7fc0_0000);
}

#[test]
fn reference_store_example() {
    let mut b = Builder::new("store");
    let x = b.param("x", tensor_ty(DType::I32, 2));
    let v = b.partition_view(x, &[2, 2]).unwrap();
    let iota = b.iota(&[2, 2], DType::I32).unwrap();
    let hundred = b.full(Scalar::I32(100), &[2, 2]).unwrap();
    let a = b.binary(tile_ir::BinaryOp::Mul, hundred, iota).unwrap();
    let one = b.constant(Scalar::I32(1)).unwrap();
    let three = b.constant(Scalar::I32(3)).unwrap();
    b.store(a, v, &[one, three]).unwrap();
    let func = b.finish().unwrap();
    let mut args = vec![Arg::Tensor(iota_i32(&[4, 8]))];
    run(&func, [1, 1, 1], &mut args).unwrap();
    let Arg::Tensor(t) = &args[0] else {
        unreachable!()
    };
    let got = t.to_vec::<i32>().unwrap();
    let mut want: Vec<i32> = (0..32).collect();
    want[22] = 0;
    want[23] = 100;
    want[30] = 200;
    want[31] = 300;
    assert_eq!(got, want);
}

#[test]
fn vector_add_with_a_partial_edge_tile() {
    let mut rng = SmallRng::seed_from_u64(20);
    for (n, block) in [(1000usize, 128usize), (7, 16), (64, 64), (129, 8)] {
        let x = random_f32(&mut rng, n);
        let y = random_f32(&mut rng, n);
        let func = samples::vector_add(block).unwrap();
        let mut args = vec![
            Arg::Tensor(f32_tensor(&[n], x.clone())),
            Arg::Tensor(f32_tensor(&[n], y.clone())),
            Arg::Tensor(HostTensor::zeros(DType::F32, &[n])),
        ];
        run(&func, [n.div_ceil(block) as u32, 1, 1], &mut args).unwrap();
        let Arg::Tensor(out) = &args[2] else {
            unreachable!()
        };
        let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
        assert_eq!(
            out.to_vec::<f32>().unwrap(),
            want,
            "n = {n}, block = {block}"
        );
    }
}

/// Copies `x: [10, 13]` into `out` through 3x5 partitions on a 4x3 grid,
/// with masked or unmasked accesses.
fn copy_kernel(masked: bool) -> Function {
    let mut b = Builder::new("copy");
    let x = b.param("x", tensor_ty(DType::F32, 2));
    let out = b.param("out", tensor_ty(DType::F32, 2));
    let pm = b.program_id(0).unwrap();
    let pn = b.program_id(1).unwrap();
    let vx = b.partition_view(x, &[3, 5]).unwrap();
    let vo = b.partition_view(out, &[3, 5]).unwrap();
    if masked {
        let t = b.load_masked(vx, &[pm, pn], Padding::Zero).unwrap();
        b.store_masked(t, vo, &[pm, pn]).unwrap();
    } else {
        let t = b.load(vx, &[pm, pn]).unwrap();
        b.store(t, vo, &[pm, pn]).unwrap();
    }
    b.finish().unwrap()
}

#[test]
fn two_d_partitions_with_non_power_of_two_tiles_cover_the_tensor() {
    let mut rng = SmallRng::seed_from_u64(21);
    let values = random_f32(&mut rng, 130);
    // The same values through a column-major (transposed-strides) tensor.
    let mut col_major = vec![0f32; 130];
    for r in 0..10 {
        for c in 0..13 {
            col_major[c * 10 + r] = values[r * 13 + c];
        }
    }
    let bytes: Vec<u8> = col_major.iter().flat_map(|v| v.to_le_bytes()).collect();
    let strided = HostTensor::with_strides(DType::F32, &[10, 13], &[1, 10], 0, bytes).unwrap();
    for x in [f32_tensor(&[10, 13], values.clone()), strided] {
        let mut args = vec![
            Arg::Tensor(x),
            Arg::Tensor(HostTensor::zeros(DType::F32, &[10, 13])),
        ];
        run(&copy_kernel(true), [4, 3, 1], &mut args).unwrap();
        let Arg::Tensor(out) = &args[1] else {
            unreachable!()
        };
        assert_eq!(out.to_vec::<f32>().unwrap(), values);
    }
}

#[test]
fn unmasked_load_of_a_partial_partition_is_an_error() {
    let mut args = vec![
        Arg::Tensor(HostTensor::zeros(DType::F32, &[10, 13])),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[10, 13])),
    ];
    let err = run(&copy_kernel(false), [4, 3, 1], &mut args).unwrap_err();
    assert_eq!(
        err.to_string(),
        "program (3, 0, 0): `%4 = load %2, %0, %1` (a view of `x`): partition [3, 0] (tile [3, 5]) is partially \
         outside the tensor of extents [10, 13]: element [10, 0] is out of bounds (use the masked form)"
    );
    let InterpError::Op { program, fault, .. } = err else {
        panic!("{err:?}")
    };
    assert_eq!(program, [3, 0, 0]);
    assert_eq!(
        *fault,
        Fault::PartialPartition {
            index: vec![3, 0],
            tile: vec![3, 5],
            extents: vec![10, 13],
            element: vec![10, 0]
        }
    );
}

#[test]
fn unmasked_store_of_a_partial_partition_is_an_error() {
    let mut b = Builder::new("store_edge");
    let out = b.param("out", tensor_ty(DType::F32, 1));
    let v = b.partition_view(out, &[4]).unwrap();
    let t = b.full(Scalar::F32(1.0), &[4]).unwrap();
    let two = b.constant(Scalar::I32(2)).unwrap();
    b.store(t, v, &[two]).unwrap();
    let func = b.finish().unwrap();
    let mut args = vec![Arg::Tensor(HostTensor::zeros(DType::F32, &[10]))];
    let err = run(&func, [1, 1, 1], &mut args).unwrap_err();
    assert_eq!(
        err.to_string(),
        "program (0, 0, 0): `store %1, %0, %2` (a view of `out`): partition [2] (tile [4]) is partially outside the \
         tensor of extents [10]: element [10] is out of bounds (use the masked form)"
    );
    // Nothing was written: the check precedes every write.
    let Arg::Tensor(t) = &args[0] else {
        unreachable!()
    };
    assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0; 10]);
}

#[test]
fn partition_indices_outside_the_index_space_are_errors_even_when_masked() {
    let x = || HostTensor::zeros(DType::F32, &[10, 13]);
    let masked = probe(DType::F32, &[3, 5], Some(Padding::Zero));
    // 3 * 3 < 10 and 2 * 5 < 13: the last partitions are in the space.
    assert!(run_probe(&masked, x(), &[3, 5], 3, 2).is_ok());
    for (i, j) in [(4, 0), (0, 3), (-1, 0), (0, -7), (i32::MAX, 0)] {
        let err = run_probe(&masked, x(), &[3, 5], i, j).unwrap_err();
        let InterpError::Op { fault, .. } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(
            **fault,
            Fault::IndexSpace {
                index: vec![i.into(), j.into()],
                tile: vec![3, 5],
                extents: vec![10, 13]
            },
            "({i}, {j})"
        );
    }
    let err = run_probe(&masked, x(), &[3, 5], -1, 0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "program (0, 0, 0): `%1 = load_masked %0, %i, %j` (a view of `x`): partition index [-1, 0] is outside the \
         index space of the view (tile [3, 5] over extents [10, 13]: needs 0 <= i_k and i_k * tile_k < extent_k)"
    );
}

#[test]
fn masked_loads_pad_with_each_padding_kind() {
    let x = HostTensor::from_vec(
        &[3],
        vec![f16::from_f32(1.0), f16::from_f32(2.0), f16::from_f32(3.0)],
    )
    .unwrap();
    let cases = [
        (Padding::Zero, 0.0),
        (Padding::PosInf, f64::INFINITY),
        (Padding::NegInf, f64::NEG_INFINITY),
        (Padding::Value(Scalar::F16(f16::from_f32(-5.5))), -5.5),
    ];
    for (padding, want) in cases {
        let mut b = Builder::new("pad");
        let p = b.param("x", tensor_ty(DType::F16, 1));
        let o = b.param("out", tensor_ty(DType::F16, 1));
        let v = b.partition_view(p, &[2]).unwrap();
        let one = b.constant(Scalar::I64(1)).unwrap();
        let t = b.load_masked(v, &[one], padding).unwrap();
        let vo = b.partition_view(o, &[2]).unwrap();
        let zero = b.constant(Scalar::U8(0)).unwrap();
        b.store(t, vo, &[zero]).unwrap();
        let func = b.finish().unwrap();
        let mut args = vec![
            Arg::Tensor(x.clone()),
            Arg::Tensor(HostTensor::zeros(DType::F16, &[2])),
        ];
        run(&func, [1, 1, 1], &mut args).unwrap();
        let Arg::Tensor(out) = &args[1] else {
            unreachable!()
        };
        assert_eq!(out.to_scalars()[0], Scalar::F16(f16::from_f32(3.0)));
        assert_eq!(out.to_scalars()[1].to_f64(), want, "{padding:?}");
    }
    // E5M2 has infinities (0x7c); the saturating conversion must not be used.
    let mut b = Builder::new("pad8");
    let p = b.param("x", tensor_ty(DType::F8E5M2, 1));
    let o = b.param("out", tensor_ty(DType::F8E5M2, 1));
    let v = b.partition_view(p, &[4]).unwrap();
    let zero = b.constant(Scalar::I32(0)).unwrap();
    let t = b.load_masked(v, &[zero], Padding::NegInf).unwrap();
    let vo = b.partition_view(o, &[4]).unwrap();
    b.store(t, vo, &[zero]).unwrap();
    let func = b.finish().unwrap();
    let x = HostTensor::from_vec(&[1], vec![F8E5M2::from_f64(2.0)]).unwrap();
    let mut args = vec![
        Arg::Tensor(x),
        Arg::Tensor(HostTensor::zeros(DType::F8E5M2, &[4])),
    ];
    run(&func, [1, 1, 1], &mut args).unwrap();
    let Arg::Tensor(out) = &args[1] else {
        unreachable!()
    };
    let bits: Vec<u8> = out
        .to_vec::<F8E5M2>()
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    assert_eq!(bits, vec![0x40, 0xfc, 0xfc, 0xfc]);
}

#[test]
fn masked_store_skips_elements_outside_the_tensor() {
    let mut b = Builder::new("fill_corner");
    let o = b.param("out", tensor_ty(DType::F32, 2));
    let v = b.partition_view(o, &[3, 5]).unwrap();
    let t = b.full(Scalar::F32(7.0), &[3, 5]).unwrap();
    let i = b.constant(Scalar::I32(3)).unwrap();
    let j = b.constant(Scalar::I32(2)).unwrap();
    b.store_masked(t, v, &[i, j]).unwrap();
    let func = b.finish().unwrap();
    let mut args = vec![Arg::Tensor(f32_tensor(&[10, 13], vec![-1.0; 130]))];
    run(&func, [1, 1, 1], &mut args).unwrap();
    let Arg::Tensor(out) = &args[0] else {
        unreachable!()
    };
    // Partition (3, 2) covers rows 9..12 and columns 10..15: only row 9,
    // columns 10..13 are inside the tensor.
    let got = out.to_vec::<f32>().unwrap();
    for (k, v) in got.iter().enumerate() {
        let (r, c) = (k / 13, k % 13);
        let want = if r == 9 && c >= 10 { 7.0 } else { -1.0 };
        assert_eq!(*v, want, "[{r}, {c}]");
    }
}

#[test]
fn stores_through_aliasing_strides_are_errors() {
    // A [2, 4] tensor whose rows share memory (row stride 0).
    let out = HostTensor::with_strides(DType::F32, &[2, 4], &[0, 1], 0, vec![0; 16]).unwrap();
    let mut b = Builder::new("alias");
    let o = b.param("out", tensor_ty(DType::F32, 2));
    let v = b.partition_view(o, &[2, 4]).unwrap();
    let t = b.full(Scalar::F32(1.0), &[2, 4]).unwrap();
    let zero = zero_index(&mut b, 2).unwrap();
    b.store(t, v, &zero).unwrap();
    let func = b.finish().unwrap();
    let err = run(&func, [1, 1, 1], &mut [Arg::Tensor(out)]).unwrap_err();
    let InterpError::Op { fault, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        **fault,
        Fault::Aliasing {
            first: vec![0, 0],
            second: vec![1, 0]
        }
    );
}

#[test]
fn dim_returns_the_runtime_extent() {
    let mut b = Builder::new("dim");
    let x = b.param("x", tensor_ty(DType::U8, 3));
    let out = b.param("out", tensor_ty(DType::I32, 1));
    let dims: Vec<_> = (0..3).map(|a| b.dim(x, a).unwrap()).collect();
    let tiles: Vec<_> = dims
        .iter()
        .map(|&d| b.broadcast(d, &[1]).unwrap())
        .collect();
    let all = b.cat(&tiles, 0).unwrap();
    let v = b.partition_view(out, &[3]).unwrap();
    let zero = zero_index(&mut b, 1).unwrap();
    b.store(all, v, &zero).unwrap();
    let func = b.finish().unwrap();
    let mut args = vec![
        Arg::Tensor(HostTensor::zeros(DType::U8, &[2, 7, 5])),
        Arg::Tensor(HostTensor::zeros(DType::I32, &[3])),
    ];
    run(&func, [1, 1, 1], &mut args).unwrap();
    let Arg::Tensor(t) = &args[1] else {
        unreachable!()
    };
    assert_eq!(t.to_vec::<i32>().unwrap(), vec![2, 7, 5]);
}

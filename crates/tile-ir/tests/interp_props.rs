//! Random layouts and partitions: masked loads and stores agree with
//! element-by-element reads and writes through `HostTensor::get`/`set`, for
//! tensors of rank 1 to 3 with permuted, padded, negative or offset strides.

mod interp_support;

use interp_support::{indices, tensor_ty};
use rand::{rngs::SmallRng, seq::SliceRandom, Rng, SeedableRng};
use tile_ir::builder::Builder;
use tile_ir::interp::{run, Arg, HostTensor};
use tile_ir::{DType, Function, Padding, Scalar, Type};

/// A random injective layout of `shape` over a buffer of `i32` elements
/// `0, 1, 2, ...`: axes in a random order, each stride padded, some negated.
fn random_tensor(rng: &mut SmallRng, shape: &[usize]) -> HostTensor {
    let mut order: Vec<usize> = (0..shape.len()).collect();
    order.shuffle(rng);
    let mut strides = vec![0isize; shape.len()];
    let mut span = 1isize;
    for &axis in &order {
        strides[axis] = span;
        span *= shape[axis] as isize + rng.gen_range(0..2);
    }
    let mut offset = rng.gen_range(0..3usize);
    let len = offset + span as usize + 2;
    for axis in 0..shape.len() {
        if rng.gen_bool(0.3) {
            // Walk this axis backwards from its far end.
            offset += (shape[axis] - 1) * strides[axis] as usize;
            strides[axis] = -strides[axis];
        }
    }
    let data: Vec<u8> = (0..len as i32).flat_map(|v| v.to_le_bytes()).collect();
    HostTensor::with_strides(DType::I32, shape, &strides, offset, data).unwrap()
}

/// Loads partition `%i...` of `x` masked (padding -1) into `out`, then
/// stores `iota + 1000` masked to the same partition of `x`.
fn kernel(tile: &[usize]) -> Function {
    let rank = tile.len();
    let mut b = Builder::new("props");
    let x = b.param("x", tensor_ty(DType::I32, rank));
    let out = b.param("out", tensor_ty(DType::I32, rank));
    let index: Vec<_> = (0..rank)
        .map(|k| b.param(format!("i{k}"), Type::Scalar(DType::I64)))
        .collect();
    let vx = b.partition_view(x, tile).unwrap();
    let t = b
        .load_masked(vx, &index, Padding::Value(Scalar::I32(-1)))
        .unwrap();
    let vo = b.partition_view(out, tile).unwrap();
    let zero: Vec<_> = (0..rank)
        .map(|_| b.constant(Scalar::I64(0)).unwrap())
        .collect();
    b.store(t, vo, &zero).unwrap();
    let iota = b.iota(tile, DType::I32).unwrap();
    let base = b.full(Scalar::I32(1000), tile).unwrap();
    let marked = b.binary(tile_ir::BinaryOp::Add, iota, base).unwrap();
    b.store_masked(marked, vx, &index).unwrap();
    b.finish().unwrap()
}

#[test]
fn masked_accesses_agree_with_element_reads_and_writes() {
    let mut rng = SmallRng::seed_from_u64(90);
    for case in 0..300 {
        let rank = rng.gen_range(1..=3);
        let shape: Vec<usize> = (0..rank).map(|_| rng.gen_range(1..8)).collect();
        let tile: Vec<usize> = (0..rank).map(|_| rng.gen_range(1..5)).collect();
        let index: Vec<usize> = (0..rank)
            .map(|k| rng.gen_range(0..shape[k].div_ceil(tile[k])))
            .collect();
        let x = random_tensor(&mut rng, &shape);
        let mut args = vec![
            Arg::Tensor(x.clone()),
            Arg::Tensor(HostTensor::zeros(DType::I32, &tile)),
        ];
        args.extend(index.iter().map(|&i| Arg::Scalar(Scalar::I64(i as i64))));
        run(&kernel(&tile), [1, 1, 1], &mut args).unwrap();

        let mut want_x = x.clone();
        let mut want_out = Vec::new();
        for (linear, j) in indices(&tile).iter().enumerate() {
            let p: Vec<usize> = (0..rank).map(|k| index[k] * tile[k] + j[k]).collect();
            want_out.push(x.get(&p).unwrap_or(Scalar::I32(-1)));
            if x.get(&p).is_some() {
                want_x.set(&p, Scalar::I32(1000 + linear as i32)).unwrap();
            }
        }
        let (Arg::Tensor(got_x), Arg::Tensor(got_out)) = (&args[0], &args[1]) else {
            unreachable!()
        };
        let context = format!(
            "case {case}: shape {shape:?} strides {:?} tile {tile:?} index {index:?}",
            x.strides()
        );
        assert_eq!(got_out.to_scalars(), want_out, "{context}");
        assert_eq!(got_x, &want_x, "{context}");
    }
}

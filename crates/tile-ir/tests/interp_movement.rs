//! Movement ops against plain Rust index arithmetic on random tiles.

mod interp_support;

use interp_support::{
    apply, f32_tensor, indices, linear, map_kernel, random_f32, random_i32, run_map,
};
use rand::{rngs::SmallRng, SeedableRng};
use tile_ir::interp::HostTensor;
use tile_ir::{DType, Scalar};

fn input(seed: u64, shape: &[usize]) -> (HostTensor, Vec<f32>) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let values = random_f32(&mut rng, shape.iter().product());
    (f32_tensor(shape, values.clone()), values)
}

#[test]
fn broadcast_aligns_axes_to_the_right() {
    let (x, v) = input(30, &[3, 1]);
    let out = apply(&x, |b, t| b.broadcast(t, &[2, 3, 4]));
    let want: Vec<f32> = indices(&[2, 3, 4]).iter().map(|i| v[i[1]]).collect();
    assert_eq!(out.to_vec::<f32>().unwrap(), want);
    // A scalar broadcasts to every element.
    let out = apply(&x, |b, _| {
        let c = b.constant(Scalar::F32(2.5))?;
        b.broadcast(c, &[2, 2])
    });
    assert_eq!(out.to_vec::<f32>().unwrap(), vec![2.5; 4]);
}

#[test]
fn reshape_keeps_row_major_order() {
    let (x, v) = input(31, &[4, 6]);
    let out = apply(&x, |b, t| b.reshape(t, &[2, 3, 4]));
    assert_eq!(out.shape(), &[2, 3, 4]);
    assert_eq!(out.to_vec::<f32>().unwrap(), v);
}

#[test]
fn permute_takes_result_axis_i_from_operand_axis_perm_i() {
    let shape = [2, 3, 5];
    let (x, v) = input(32, &shape);
    let out = apply(&x, |b, t| b.permute(t, &[2, 0, 1]));
    assert_eq!(out.shape(), &[5, 2, 3]);
    let want: Vec<f32> = indices(&[5, 2, 3])
        .iter()
        .map(|o| v[linear(&[o[1], o[2], o[0]], &shape)])
        .collect();
    assert_eq!(out.to_vec::<f32>().unwrap(), want);
}

#[test]
fn expand_repeats_axes_of_extent_one() {
    let (x, v) = input(33, &[1, 4, 1]);
    let out = apply(&x, |b, t| b.expand(t, &[3, 4, 2]));
    let want: Vec<f32> = indices(&[3, 4, 2]).iter().map(|i| v[i[1]]).collect();
    assert_eq!(out.to_vec::<f32>().unwrap(), want);
}

#[test]
fn flip_reverses_the_listed_axes() {
    let shape = [3, 4, 2];
    let (x, v) = input(34, &shape);
    let out = apply(&x, |b, t| b.flip(t, &[0, 2]));
    let want: Vec<f32> = indices(&shape)
        .iter()
        .map(|i| v[linear(&[2 - i[0], i[1], 1 - i[2]], &shape)])
        .collect();
    assert_eq!(out.to_vec::<f32>().unwrap(), want);
}

#[test]
fn slice_takes_start_stop_step_per_axis() {
    let shape = [7, 9];
    let (x, v) = input(35, &shape);
    let out = apply(&x, |b, t| b.slice(t, &[1, 0], &[7, 8], &[2, 3]));
    // Rows 1, 3, 5; columns 0, 3, 6.
    assert_eq!(out.shape(), &[3, 3]);
    let want: Vec<f32> = indices(&[3, 3])
        .iter()
        .map(|o| v[linear(&[1 + 2 * o[0], 3 * o[1]], &shape)])
        .collect();
    assert_eq!(out.to_vec::<f32>().unwrap(), want);
}

#[test]
fn pad_surrounds_the_tile_with_the_value() {
    let shape = [2, 3];
    let (x, v) = input(36, &shape);
    let out = apply(&x, |b, t| b.pad(t, &[1, 0], &[2, 2], Scalar::F32(-9.0)));
    assert_eq!(out.shape(), &[5, 5]);
    let want: Vec<f32> = indices(&[5, 5])
        .iter()
        .map(|o| {
            if (1..3).contains(&o[0]) && o[1] < 3 {
                v[linear(&[o[0] - 1, o[1]], &shape)]
            } else {
                -9.0
            }
        })
        .collect();
    assert_eq!(out.to_vec::<f32>().unwrap(), want);
}

#[test]
fn cat_joins_along_an_axis_in_operand_order() {
    let mut rng = SmallRng::seed_from_u64(37);
    let (a, b, c) = (
        random_i32(&mut rng, 6),
        random_i32(&mut rng, 3),
        random_i32(&mut rng, 9),
    );
    let kernel = map_kernel(
        &[
            (&[2, 3], DType::I32),
            (&[1, 3], DType::I32),
            (&[3, 3], DType::I32),
        ],
        |bld, t| bld.cat(t, 0),
    );
    let inputs = vec![
        HostTensor::from_vec(&[2, 3], a.clone()).unwrap(),
        HostTensor::from_vec(&[1, 3], b.clone()).unwrap(),
        HostTensor::from_vec(&[3, 3], c.clone()).unwrap(),
    ];
    let out = run_map(&kernel, inputs).unwrap();
    assert_eq!(out.to_vec::<i32>().unwrap(), [a, b, c].concat());
    // Along the last axis the rows interleave.
    let kernel = map_kernel(&[(&[2, 1], DType::I32), (&[2, 2], DType::I32)], |bld, t| {
        bld.cat(t, 1)
    });
    let inputs = vec![
        HostTensor::from_vec(&[2, 1], vec![1, 2]).unwrap(),
        HostTensor::from_vec(&[2, 2], vec![3, 4, 5, 6]).unwrap(),
    ];
    let out = run_map(&kernel, inputs).unwrap();
    assert_eq!(out.to_vec::<i32>().unwrap(), vec![1, 3, 4, 2, 5, 6]);
}

#[test]
fn iota_and_full_fill_tiles() {
    let (x, _) = input(38, &[1]);
    let out = apply(&x, |b, _| b.iota(&[3, 4], DType::F32));
    assert_eq!(
        out.to_vec::<f32>().unwrap(),
        (0..12).map(|v| v as f32).collect::<Vec<_>>()
    );
    // iota wraps in a narrow integer dtype.
    let out = apply(&x, |b, _| b.iota(&[300], DType::U8));
    let want: Vec<u8> = (0..300u32).map(|v| v as u8).collect();
    assert_eq!(out.to_vec::<u8>().unwrap(), want);
}

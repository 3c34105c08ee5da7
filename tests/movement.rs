//! tinygrad's shape-changing movement methods in kernels (`squeeze`,
//! `unsqueeze`, `flatten`, `unflatten`, `repeat`, `repeat_interleave`,
//! `roll`, `split`, `chunk`, `stack`): on the CPU device and as the GPU
//! targets lower them (the lockstep emulator), against the interpreter bit
//! for bit and against tinygrad's documented results.

use tile::ir::interp::{self, Arg, HostTensor};
use tile::ir::text::parse_function;
use tile::{tile_kernel, Device, Element, Tensor};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

/// `x` is `[[0, 1, .., 5], [6, .., 11], ..]`, 4 × 6.
#[tile_kernel]
fn reshapes(
    x: &Tensor<f32, 2>,
    same: &mut Tensor<f32, 2>,
    flat: &mut Tensor<f32>,
    halves: &mut Tensor<f32, 2>,
    repeated: &mut Tensor<f32, 3>,
    interleaved: &mut Tensor<f32, 2>,
) {
    let t = partition_view(x, [4, 6]).load(0, 0);
    partition_view(same, [4, 6]).store(t.unsqueeze(0).unsqueeze(-1).squeeze(3).squeeze(), 0, 0);
    partition_view(flat, [24]).store(t.flatten(), 0);
    partition_view(halves, [2, 12]).store(t.flatten().unflatten(0, [2, 12]), 0, 0);
    partition_view(repeated, [2, 4, 12]).store(t.repeat([2, 1, 2]), 0, 0, 0);
    partition_view(interleaved, [4, 12]).store(t.repeat_interleave(2, 1), 0, 0);
}

#[tile_kernel]
fn pieces(
    x: &Tensor<f32, 2>,
    rolled: &mut Tensor<f32, 2>,
    left: &mut Tensor<f32, 2>,
    right: &mut Tensor<f32, 2>,
    stacked: &mut Tensor<f32, 3>,
) {
    let t = partition_view(x, [4, 6]).load(0, 0);
    partition_view(rolled, [4, 6]).store(t.roll(2, 1).roll(-1, 0), 0, 0);
    let (l, r) = t.split([2, 4], 1);
    partition_view(left, [4, 2]).store(l, 0, 0);
    partition_view(right, [4, 4]).store(r, 0, 0);
    let (top, middle, bottom) = t.chunk(3, 0).0.reshape([12]).chunk(3, 0);
    partition_view(stacked, [2, 3, 2]).store(
        stack([top, middle, bottom], 1).reshape([2, 3, 2]),
        0,
        0,
        0,
    );
}

fn host<T: Element>(shape: &[usize], values: &[T]) -> HostTensor {
    HostTensor::from_vec(shape, values.to_vec()).expect("host tensor")
}

fn zeros(dev: &Device, shape: &[usize]) -> Tensor<f32> {
    dev.zeros(shape).expect("device tensor")
}

fn same(got: &Tensor<f32>, want: &HostTensor) {
    assert_eq!(got.to_vec().unwrap(), want.to_vec::<f32>().unwrap());
}

#[test]
fn reshaping_methods_follow_tinygrad() {
    let dev = Device::cpu();
    let xs: Vec<f32> = (0..24).map(|i| i as f32).collect();
    let x = dev.tensor_from_slice(&xs, &[4, 6]).unwrap();
    let shapes: [&[usize]; 5] = [&[4, 6], &[24], &[2, 12], &[2, 4, 12], &[4, 12]];
    let [mut a, mut b, mut c, mut d, mut e] = shapes.map(|s| zeros(&dev, s));
    reshapes::launch(&dev, [1], (&x, &mut a, &mut b, &mut c, &mut d, &mut e)).unwrap();
    assert_eq!(a.to_vec().unwrap(), xs);
    assert_eq!(b.to_vec().unwrap(), xs);
    assert_eq!(c.to_vec().unwrap(), xs);
    // tinygrad: `t.repeat(2, 1, 2)` tiles the whole tile, `repeat_interleave`
    // repeats each element in place.
    let row = |r: usize| -> Vec<f32> { xs[r * 6..r * 6 + 6].to_vec() };
    let tiled: Vec<f32> = (0..2)
        .flat_map(|_| (0..4).flat_map(move |r| [row(r), row(r)].concat()))
        .collect();
    assert_eq!(d.to_vec().unwrap(), tiled);
    let doubled: Vec<f32> = xs.iter().flat_map(|&v| [v, v]).collect();
    assert_eq!(e.to_vec().unwrap(), doubled);
    let mut want = shapes.map(|s| host(s, &vec![0.0f32; s.iter().product()]));
    let [wa, wb, wc, wd, we] = &mut want;
    reshapes::interpret([1, 1, 1], (&host(&[4, 6], &xs), wa, wb, wc, wd, we)).unwrap();
    for (got, want) in [a, b, c, d, e].iter().zip(&want) {
        same(got, want);
    }
}

#[test]
fn rolls_splits_chunks_and_stacks_follow_tinygrad() {
    let dev = Device::cpu();
    let xs: Vec<f32> = (0..24).map(|i| i as f32).collect();
    let x = dev.tensor_from_slice(&xs, &[4, 6]).unwrap();
    let shapes: [&[usize]; 4] = [&[4, 6], &[4, 2], &[4, 4], &[2, 3, 2]];
    let [mut a, mut b, mut c, mut d] = shapes.map(|s| zeros(&dev, s));
    pieces::launch(&dev, [1], (&x, &mut a, &mut b, &mut c, &mut d)).unwrap();
    // roll(2, 1): element (r, c) moves to (r, c + 2 mod 6); then roll(-1, 0)
    // moves row r to r - 1 mod 4.
    let rolled: Vec<f32> = (0..24)
        .map(|i| {
            let (r, c) = (i / 6, i % 6);
            xs[((r + 1) % 4) * 6 + (c + 4) % 6]
        })
        .collect();
    assert_eq!(a.to_vec().unwrap(), rolled);
    let cols = |lo: usize, hi: usize| -> Vec<f32> {
        (0..4)
            .flat_map(|r| xs[r * 6 + lo..r * 6 + hi].to_vec())
            .collect()
    };
    assert_eq!(b.to_vec().unwrap(), cols(0, 2));
    assert_eq!(c.to_vec().unwrap(), cols(2, 6));
    // chunk(3, 0) of 4 rows: sizes 2, 2 (torch's rule); the first 2 rows,
    // flattened, in 3 chunks of 4: stacked along axis 1 as [4, 3], then
    // read as [2, 3, 2].
    let chunks = [&xs[0..4], &xs[4..8], &xs[8..12]];
    let stacked: Vec<f32> = (0..4).flat_map(|i| chunks.map(|c| c[i])).collect();
    assert_eq!(d.to_vec().unwrap(), stacked);
    let mut want = shapes.map(|s| host(s, &vec![0.0f32; s.iter().product()]));
    let [wa, wb, wc, wd] = &mut want;
    pieces::interpret([1, 1, 1], (&host(&[4, 6], &xs), wa, wb, wc, wd)).unwrap();
    for (got, want) in [a, b, c, d].iter().zip(&want) {
        same(got, want);
    }
}

/// The kernels' IR as the GPU targets lower it (2 warps) on the lockstep
/// emulator equals the interpreter.
#[test]
fn the_gpu_lowering_runs_them_like_the_interpreter() {
    let xs: Vec<f32> = (0..24).map(|i| i as f32).collect();
    let zeros = |s: &[usize]| Arg::Tensor(host(s, &vec![0.0f32; s.iter().product()]));
    let kernels: [(&str, &[&[usize]]); 2] = [
        (
            reshapes::ir(),
            &[&[4, 6], &[24], &[2, 12], &[2, 4, 12], &[4, 12]],
        ),
        (pieces::ir(), &[&[4, 6], &[4, 2], &[4, 4], &[2, 3, 2]]),
    ];
    for (ir, outputs) in kernels {
        let func = parse_function(ir).unwrap();
        let mut args = vec![Arg::Tensor(host(&[4, 6], &xs))];
        args.extend(outputs.iter().map(|s| zeros(s)));
        let mut want = args.clone();
        interp::run(&func, [1, 1, 1], &mut want).unwrap();
        let program = lower(&func, &LowerOptions::warps(2)).unwrap();
        emulate::run(&program, [1, 1, 1], &mut args).unwrap();
        for (got, want) in args.iter().zip(&want) {
            if let (Arg::Tensor(g), Arg::Tensor(w)) = (got, want) {
                assert_eq!(g.data(), w.data(), "{}", func.name);
            }
        }
    }
}

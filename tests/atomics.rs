//! Atomics in kernels on the CPU device, against the interpreter: a
//! histogram, a split-K matmul, an embedding's backward scatter-add, every
//! update with masks, compare-and-swap, the order and scope arguments, and
//! the error of an index outside the tensor.
//!
//! The interpreter runs programs one after another; the device runs them
//! on several cores at once. The tests compare what no order changes: the
//! final tensors of integer updates, of `max`/`min`, and of float sums of
//! small integers (exact in any order).

use tile::ir::interp::HostTensor;
use tile::{tile_kernel, Device, Element, Tensor};

#[tile_kernel(configs(B = 64))]
fn histogram<const B: usize>(x: &Tensor<i32>, hist: &mut Tensor<i32>) {
    let pid = program_id(0);
    let bins = partition_view(x, [B]).load_masked(pid);
    let inside = iota::<i32>([B]) + pid * B < x.dim(0);
    atomic_add(hist, [bins], 1, inside, Ordering::Relaxed);
}

fn host<T: Element>(shape: &[usize], values: &[T]) -> HostTensor {
    HostTensor::from_vec(shape, values.to_vec()).expect("host tensor")
}

fn device<T: Element>(dev: &Device, shape: &[usize], values: &[T]) -> Tensor<T> {
    dev.tensor_from_slice(values, shape).expect("device tensor")
}

fn same<T: Element + PartialEq + std::fmt::Debug>(got: &Tensor<T>, want: &HostTensor) {
    assert_eq!(got.to_vec().unwrap(), want.to_vec::<T>().unwrap());
}

#[test]
fn a_histogram_counts_every_value_once() {
    let dev = Device::cpu();
    let n = 10_000;
    let xs: Vec<i32> = (0..n as i32).map(|i| (i * 7919 + i / 13) % 37).collect();
    let x = device(&dev, &[n], &xs);
    let mut hist = device(&dev, &[37], &[0i32; 37]);
    let grid = [n.div_ceil(64) as u32];
    histogram::<64>::launch(&dev, grid, (&x, &mut hist)).unwrap();
    let mut want = host(&[37], &[0i32; 37]);
    histogram::<64>::interpret(grid, (&host(&[n], &xs), &mut want)).unwrap();
    same(&hist, &want);
    let mut counts = vec![0i32; 37];
    xs.iter().for_each(|&v| counts[v as usize] += 1);
    assert_eq!(hist.to_vec().unwrap(), counts);
}

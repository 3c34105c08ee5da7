//! `gather` and `scatter` in kernels on the CPU device and in the
//! interpreter, against plain Rust: a stencil's shifted reads with masked
//! edges, an embedding lookup at index tiles, a scalar read, a permutation
//! written at index tiles and a scalar write, and the error of an index
//! outside the tensor.

use tile::ir::interp::HostTensor;
use tile::{tile_kernel, Device, Error, Tensor};

/// `y[i] = x[i - 1] + 2 x[i] + x[i + 1]`, with `edge` past the ends.
#[tile_kernel(configs(B = 16))]
fn stencil<const B: usize>(x: &Tensor<f32>, y: &mut Tensor<f32>, edge: f32) {
    let pid = program_id(0);
    let n = x.dim(0);
    let i = iota::<i32>([B]) + pid * B as i32;
    let left = gather(x, [i - 1], (i >= 1) & (i <= n), edge);
    let mid = gather(x, [i], i < n);
    let right = gather(x, [i + 1], i + 1 < n, edge);
    partition_view(y, [B]).store_masked(left + mid * 2.0 + right, pid);
}

/// Row `ids[p]` of `weight` for each of the program's `R` ids.
#[tile_kernel(configs(R = 4, D = 8))]
fn lookup<const R: usize, const D: usize>(
    ids: &Tensor<i32>,
    weight: &Tensor<f32, 2>,
    out: &mut Tensor<f32, 2>,
) {
    let pid = program_id(0);
    let rows = partition_view(ids, [R]).load(pid).reshape([R, 1]);
    let cols = iota::<i32>([1, D]);
    partition_view(out, [R, D]).store(gather(weight, [rows, cols]), pid, 0);
}

/// Scales `x` by the one element `scale[at]`.
#[tile_kernel(configs(B = 8))]
fn scale_by<const B: usize>(x: &Tensor<f32>, scale: &Tensor<f32>, at: i32, y: &mut Tensor<f32>) {
    let pid = program_id(0);
    let s = gather(scale, [at]);
    partition_view(y, [B]).store(partition_view(x, [B]).load(pid) * s, pid);
}

/// `out[perm[i]] = x[i]` for the program's `B` elements, where `i < n`.
#[tile_kernel(configs(B = 8))]
fn permute_into<const B: usize>(x: &Tensor<f32>, perm: &Tensor<i32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    let i = iota::<i32>([B]) + pid * B as i32;
    let inside = i < x.dim(0);
    let to = gather(perm, [i], inside);
    scatter(out, [to], gather(x, [i], inside), inside);
}

/// `out[at] = v`: one element.
#[tile_kernel]
fn put(out: &mut Tensor<f32>, at: i32, v: f32) {
    scatter(out, [at], v);
}

fn stencil_reference(x: &[f32], edge: f32) -> Vec<f32> {
    (0..x.len())
        .map(|i| {
            let left = if i == 0 { edge } else { x[i - 1] };
            let right = x.get(i + 1).copied().unwrap_or(edge);
            left + x[i] * 2.0 + right
        })
        .collect()
}

#[test]
fn a_stencil_reads_shifted_elements_and_masks_the_edges() {
    let dev = Device::cpu();
    let n = 40;
    let values: Vec<f32> = (0..n).map(|i| ((i * 37) % 11) as f32 * 0.5).collect();
    let x = dev.tensor_from_slice(&values, &[n]).unwrap();
    let mut y: Tensor<f32> = dev.zeros(&[n]).unwrap();
    stencil::<16>::launch(&dev, [3], (&x, &mut y, -4.0)).unwrap();
    let want = stencil_reference(&values, -4.0);
    assert_eq!(y.to_vec().unwrap(), want);
    // The interpreter agrees.
    let x = HostTensor::from_vec(&[n], values).unwrap();
    let mut y = HostTensor::zeros(tile::ir::DType::F32, &[n]);
    stencil::<16>::interpret([3], (&x, &mut y, -4.0)).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), want);
}

#[test]
fn an_embedding_lookup_gathers_rows_at_index_tiles() {
    let dev = Device::cpu();
    let (vocab, d) = (10, 8);
    let table: Vec<f32> = (0..vocab * d).map(|i| i as f32 * 0.25).collect();
    let ids = [7, 0, 3, 3, 9, 1, 2, 7];
    let weight = dev.tensor_from_slice(&table, &[vocab, d]).unwrap();
    let ids_t = dev.tensor_from_slice(&ids, &[8]).unwrap();
    let mut out: Tensor<f32> = dev.zeros(&[8, d]).unwrap();
    lookup::<4, 8>::launch(&dev, [2], (&ids_t, &weight, &mut out)).unwrap();
    let want: Vec<f32> = ids
        .iter()
        .flat_map(|&r| table[r as usize * d..(r as usize + 1) * d].to_vec())
        .collect();
    assert_eq!(out.to_vec().unwrap(), want);
}

#[test]
fn an_id_outside_the_table_is_an_error_naming_the_index() {
    let dev = Device::cpu();
    let weight = dev.tensor_from_slice(&[0.0f32; 80], &[10, 8]).unwrap();
    let ids = dev
        .tensor_from_slice(&[1, 2, 3, 4, 5, 6, 12, 0], &[8])
        .unwrap();
    let mut out: Tensor<f32> = dev.zeros(&[8, 8]).unwrap();
    let err = lookup::<4, 8>::launch(&dev, [2], (&ids, &weight, &mut out)).unwrap_err();
    assert!(matches!(err, Error::Execution { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.starts_with("kernel `lookup` failed on device cpu: program (1, 0, 0): `gather(..)` at tests/gather.rs:"),
        "{text}"
    );
    assert!(
        text.ends_with("index [12, 0] is outside the tensor (mask it off)"),
        "{text}"
    );
}

#[test]
fn scalar_indices_read_one_element() {
    let dev = Device::cpu();
    let x = dev
        .tensor_from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], &[8])
        .unwrap();
    let scale = dev.tensor_from_slice(&[0.5f32, -3.0, 10.0], &[3]).unwrap();
    let mut y: Tensor<f32> = dev.zeros(&[8]).unwrap();
    scale_by::<8>::launch(&dev, [1], (&x, &scale, 1, &mut y)).unwrap();
    assert_eq!(
        y.to_vec().unwrap(),
        [-3.0, -6.0, -9.0, -12.0, -15.0, -18.0, -21.0, -24.0]
    );
    let err = scale_by::<8>::launch(&dev, [1], (&x, &scale, 3, &mut y)).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("index [3] is outside the tensor (mask it off)"),
        "{err}"
    );
}

#[test]
fn a_permutation_is_written_at_index_tiles() {
    let dev = Device::cpu();
    let n = 13;
    let values: Vec<f32> = (0..n).map(|i| i as f32 * 1.5 - 4.0).collect();
    let perm: Vec<i32> = (0..n as i32).map(|i| (i * 5 + 3) % n as i32).collect();
    let x = dev.tensor_from_slice(&values, &[n]).unwrap();
    let p = dev.tensor_from_slice(&perm, &[n]).unwrap();
    let mut out: Tensor<f32> = dev.full(&[n], -1.0).unwrap();
    permute_into::<8>::launch(&dev, [2], (&x, &p, &mut out)).unwrap();
    let mut want = vec![-1.0f32; n];
    for (i, &to) in perm.iter().enumerate() {
        want[to as usize] = values[i];
    }
    assert_eq!(out.to_vec().unwrap(), want);
    // The interpreter agrees.
    let x = HostTensor::from_vec(&[n], values).unwrap();
    let p = HostTensor::from_vec(&[n], perm).unwrap();
    let mut out = HostTensor::from_vec(&[n], vec![-1.0f32; n]).unwrap();
    permute_into::<8>::interpret([2], (&x, &p, &mut out)).unwrap();
    assert_eq!(out.to_vec::<f32>().unwrap(), want);
}

#[test]
fn a_scalar_scatter_writes_one_element_and_an_index_outside_is_an_error() {
    let dev = Device::cpu();
    let mut out: Tensor<f32> = dev.zeros(&[4]).unwrap();
    put::launch(&dev, [1], (&mut out, 2, 9.5)).unwrap();
    assert_eq!(out.to_vec().unwrap(), [0.0, 0.0, 9.5, 0.0]);
    let err = put::launch(&dev, [1], (&mut out, 4, 1.0)).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("kernel `put` failed on device cpu: program (0, 0, 0): `scatter(..)` at tests/gather.rs:"),
        "{text}"
    );
    assert!(
        text.ends_with("index [4] is outside the tensor (mask it off)"),
        "{text}"
    );
    assert_eq!(out.to_vec().unwrap(), [0.0, 0.0, 9.5, 0.0]);
}

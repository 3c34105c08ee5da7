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

/// Every update in turn at distinct indices (the permutation `perm`), a
/// third of the elements masked off, with the memory orders and scopes:
/// each element is updated by one program only, so the old values are
/// deterministic. `old` gets them row by row.
#[tile_kernel(configs(B = 32))]
fn every_update<const B: usize>(
    t: &mut Tensor<i64>,
    perm: &Tensor<i32>,
    vals: &Tensor<i64>,
    old: &mut Tensor<i64, 2>,
) {
    let pid = program_id(0);
    let i = partition_view(perm, [B]).load(pid);
    let v = partition_view(vals, [B]).load(pid);
    let keep = iota::<i32>([B]) % 3 != 2;
    let a = atomic_add(t, [i], v, keep);
    let b = atomic_max(t, [i], v * 3, keep, Ordering::Acquire);
    let c = atomic_min(t, [i], v - 5, keep, Ordering::Release, Scope::Cta);
    let d = atomic_and(t, [i], v | 255, keep);
    let e = atomic_or(t, [i], v, keep, Ordering::Relaxed);
    let f = atomic_xor(t, [i], v * 7, keep);
    let g = atomic_xchg(t, [i], v + 1, keep);
    let even = iota::<i32>([B]) % 2 == 0;
    let h = atomic_cas(t, [i], select(even, v + 1, v), v * 11, keep, Scope::Gpu);
    let (a, b, c, d) = (
        a.reshape([1, B]),
        b.reshape([1, B]),
        c.reshape([1, B]),
        d.reshape([1, B]),
    );
    let (e, f, g, h) = (
        e.reshape([1, B]),
        f.reshape([1, B]),
        g.reshape([1, B]),
        h.reshape([1, B]),
    );
    partition_view(old, [8, B]).store(cat([a, b, c, d, e, f, g, h], 0), 0, pid);
}

#[test]
fn every_update_returns_the_old_values_of_the_interpreter() {
    let dev = Device::cpu();
    let (programs, b) = (9, 32);
    let n = programs * b;
    let mut perm: Vec<i32> = (0..n as i32).collect();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for i in (1..n).rev() {
        perm.swap(i, (next() % (i as u64 + 1)) as usize);
    }
    let vals: Vec<i64> = (0..n).map(|_| next() as i64 >> 20).collect();
    let start: Vec<i64> = (0..n).map(|_| next() as i64 >> 20).collect();
    let mut t = device(&dev, &[n], &start);
    let mut old = device(&dev, &[8, n], &vec![0i64; 8 * n]);
    let (p, v) = (device(&dev, &[n], &perm), device(&dev, &[n], &vals));
    let grid = [programs as u32];
    every_update::<32>::launch(&dev, grid, (&mut t, &p, &v, &mut old)).unwrap();
    let mut want_t = host(&[n], &start);
    let mut want_old = host(&[8, n], &vec![0i64; 8 * n]);
    let args = (
        &mut want_t,
        &host(&[n], &perm),
        &host(&[n], &vals),
        &mut want_old,
    );
    every_update::<32>::interpret(grid, args).unwrap();
    same(&t, &want_t);
    same(&old, &want_old);
    // The interpreter itself against plain Rust, for one element.
    let j = 4; // program 0, element 4: kept (4 % 3 != 2), even
    let (x, e) = (start[perm[j] as usize], vals[j]);
    let after_add = x.wrapping_add(e);
    let row: Vec<i64> = want_old
        .to_vec::<i64>()
        .unwrap()
        .chunks(n)
        .map(|r| r[j])
        .collect();
    assert_eq!(row[0], x);
    assert_eq!(row[1], after_add);
    assert_eq!(row[2], after_add.max(e * 3));
}

/// Takes a ticket from a counter: each program gets a distinct one.
#[tile_kernel]
fn ticket(counter: &mut Tensor<i32>, tickets: &mut Tensor<i32>) {
    let pid = program_id(0);
    let mine = atomic_add(counter, [0], 1);
    partition_view(tickets, [1]).store(mine, pid);
}

#[test]
fn a_scalar_atomic_hands_out_distinct_tickets() {
    let dev = Device::cpu();
    let programs = 500;
    let mut counter = device(&dev, &[1], &[0i32]);
    let mut tickets = device(&dev, &[programs], &vec![-1i32; programs]);
    ticket::launch(&dev, [programs as u32], (&mut counter, &mut tickets)).unwrap();
    assert_eq!(counter.to_vec().unwrap(), [programs as i32]);
    let mut got = tickets.to_vec().unwrap();
    got.sort_unstable();
    assert_eq!(got, (0..programs as i32).collect::<Vec<_>>());
}

/// The block maximum of `x`'s partitions into `out`'s, masked and not.
#[tile_kernel(configs(B = 8))]
fn view_max<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>, unmasked: &mut Tensor<f32>) {
    let pid = program_id(0);
    let v = partition_view(x, [B]).load_masked(pid);
    partition_view(out, [B]).atomic_max_masked(v, 0);
    partition_view(unmasked, [B]).atomic_max(v, 0);
}

#[test]
fn view_atomics_combine_partitions_and_an_unmasked_edge_is_an_error() {
    let dev = Device::cpu();
    let xs: Vec<f32> = (0..20).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
    let x = device(&dev, &[20], &xs);
    let mut out = device(&dev, &[6], &[f32::NEG_INFINITY; 6]);
    let mut unmasked = device(&dev, &[8], &[f32::NEG_INFINITY; 8]);
    // Two whole partitions: every element is inside both tensors.
    view_max::<8>::launch(&dev, [2], (&x, &mut out, &mut unmasked)).unwrap();
    let want: Vec<f32> = (0..6).map(|j| xs[j].max(xs[8 + j])).collect();
    assert_eq!(out.to_vec().unwrap(), want);
    let mut want_out = host(&[6], &[f32::NEG_INFINITY; 6]);
    let mut want_unmasked = host(&[8], &[f32::NEG_INFINITY; 8]);
    view_max::<8>::interpret(
        [2, 1, 1],
        (&host(&[20], &xs), &mut want_out, &mut want_unmasked),
    )
    .unwrap();
    same(&out, &want_out);
    same(&unmasked, &want_unmasked);
    // An unmasked update of a partition partly outside its tensor.
    let mut short = device(&dev, &[6], &[0.0f32; 6]);
    let err = view_max::<8>::launch(&dev, [1], (&x, &mut out, &mut short)).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("index [6] is outside the tensor (mask it off)"),
        "{text}"
    );
}

/// CUDA tiles' atomic accesses of a partition and its index space: each
/// program stores its tile atomically, loads it back atomically, and
/// records how many tiles the view has.
#[tile_kernel(configs(B = 8))]
fn round_trip<const B: usize>(
    x: &Tensor<f32>,
    out: &mut Tensor<f32>,
    back: &mut Tensor<f32>,
    tiles: &mut Tensor<i32>,
) {
    let pid = program_id(0);
    let (vx, vo) = (partition_view(x, [B]), partition_view(out, [B]));
    vo.atomic_store_masked(vx.load_masked(pid) * 2.0, pid, Ordering::Release);
    let seen = vo.atomic_load_masked(pid, Ordering::Acquire, Scope::Cta);
    partition_view(back, [B]).store_masked(seen + 1.0, pid);
    partition_view(tiles, [1]).store(vx.num_tiles(0), pid);
}

#[test]
fn partition_views_load_and_store_atomically_and_count_their_tiles() {
    let dev = Device::cpu();
    let n = 19;
    let xs: Vec<f32> = (0..n).map(|i| i as f32 - 4.5).collect();
    let x = device(&dev, &[n], &xs);
    let mut out = device(&dev, &[n], &vec![0.0f32; n]);
    let mut back = device(&dev, &[n], &vec![0.0f32; n]);
    let mut tiles = device(&dev, &[3], &[0i32; 3]);
    round_trip::<8>::launch(&dev, [3], (&x, &mut out, &mut back, &mut tiles)).unwrap();
    let doubled: Vec<f32> = xs.iter().map(|v| v * 2.0).collect();
    assert_eq!(out.to_vec().unwrap(), doubled);
    let plus_one: Vec<f32> = doubled.iter().map(|v| v + 1.0).collect();
    assert_eq!(back.to_vec().unwrap(), plus_one);
    assert_eq!(tiles.to_vec().unwrap(), [3, 3, 3]);
    let mut want = [n, n, 3].map(|len| host(&[len], &vec![0.0f32; len]));
    let [want_out, want_back, _] = &mut want;
    let mut want_tiles = host(&[3], &[0i32; 3]);
    round_trip::<8>::interpret(
        [3, 1, 1],
        (&host(&[n], &xs), want_out, want_back, &mut want_tiles),
    )
    .unwrap();
    same(&out, want_out);
    same(&back, want_back);
    same(&tiles, &want_tiles);
}

//! `unpack_fp4` and `pack_fp4` against plain Rust, along every axis of
//! rank-1 to rank-3 tiles; the `expand-fp4-pairs` rewrite against the ops.

mod interp_support;

use interp_support::{map_kernel, run_map, MapKernel};
use rand::{rngs::SmallRng, Rng, SeedableRng};
use tile_ir::interp::HostTensor;
use tile_ir::passes::PassManager;
use tile_ir::{DType, Scalar};

/// The row-major strides of `dims`.
fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1; dims.len()];
    for a in (0..dims.len().saturating_sub(1)).rev() {
        s[a] = s[a + 1] * dims[a + 1];
    }
    s
}

/// `bytes` (of shape `dims`) unpacked along `axis`, as bit patterns.
fn unpacked(bytes: &[u8], dims: &[usize], axis: usize) -> Vec<u64> {
    let mut out_dims = dims.to_vec();
    out_dims[axis] *= 2;
    let (from, to) = (strides(dims), strides(&out_dims));
    (0..bytes.len() * 2)
        .map(|i| {
            let index: Vec<usize> = (0..dims.len()).map(|a| i / to[a] % out_dims[a]).collect();
            let byte: usize = (0..dims.len())
                .map(|a| from[a] * if a == axis { index[a] / 2 } else { index[a] })
                .sum();
            u64::from(bytes[byte] >> (4 * (index[axis] % 2)) & 0xf)
        })
        .collect()
}

/// The shapes and axes tried: every axis of a few tiles.
const CASES: [(&[usize], usize); 6] = [
    (&[8], 0),
    (&[4, 6], 1),
    (&[4, 6], 0),
    (&[2, 3, 4], 0),
    (&[2, 3, 4], 1),
    (&[2, 3, 4], 2),
];

fn random_bytes(rng: &mut SmallRng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.gen()).collect()
}

fn u8_tensor(dims: &[usize], bytes: &[u8]) -> HostTensor {
    let scalars: Vec<Scalar> = bytes.iter().map(|&b| Scalar::U8(b)).collect();
    HostTensor::from_scalars(DType::U8, dims, &scalars).unwrap()
}

fn bits(t: &HostTensor) -> Vec<u64> {
    t.to_scalars().iter().map(|s| s.to_bits()).collect()
}

fn unpack_kernel(dims: &[usize], axis: usize) -> MapKernel {
    map_kernel(&[(dims, DType::U8)], |b, t| b.unpack_fp4(t[0], axis))
}

/// `unpack_fp4` then `pack_fp4` along one axis: the bytes back.
fn round_trip_kernel(dims: &[usize], axis: usize) -> MapKernel {
    map_kernel(&[(dims, DType::U8)], |b, t| {
        let values = b.unpack_fp4(t[0], axis)?;
        b.pack_fp4(values, axis)
    })
}

fn expanded(kernel: &MapKernel) -> MapKernel {
    let mut func = kernel.func.clone();
    let mut pm = PassManager::new();
    pm.add("expand-fp4-pairs").unwrap();
    pm.run(&mut func, |_, _| {}).unwrap();
    let text = func.to_string();
    assert!(!text.contains("_fp4"), "{text}");
    MapKernel {
        func,
        out_shape: kernel.out_shape.clone(),
        out_dtype: kernel.out_dtype,
    }
}

#[test]
fn unpack_reads_the_low_four_bits_first() {
    let kernel = unpack_kernel(&[3], 0);
    let got = run_map(&kernel, vec![u8_tensor(&[3], &[0xf2, 0x51, 0x80])]).unwrap();
    assert_eq!(got.dtype(), DType::F4E2M1);
    let values: Vec<f64> = got.to_scalars().iter().map(|s| s.to_f64()).collect();
    // 0x2 is 1.0, 0xf is -6.0, 0x1 is 0.5, 0x5 is 3.0, 0x0 is 0 and 0x8 is -0.
    assert_eq!(values, [1.0, -6.0, 0.5, 3.0, 0.0, -0.0]);
    assert!(values[5].is_sign_negative());
}

#[test]
fn unpack_along_every_axis_equals_plain_rust() {
    let mut rng = SmallRng::seed_from_u64(7);
    for (dims, axis) in CASES {
        let bytes = random_bytes(&mut rng, dims.iter().product());
        let got = run_map(&unpack_kernel(dims, axis), vec![u8_tensor(dims, &bytes)]).unwrap();
        assert_eq!(
            bits(&got),
            unpacked(&bytes, dims, axis),
            "{dims:?} axis {axis}"
        );
    }
}

#[test]
fn pack_inverts_unpack() {
    let mut rng = SmallRng::seed_from_u64(8);
    for (dims, axis) in CASES {
        let bytes = random_bytes(&mut rng, dims.iter().product());
        let got = run_map(
            &round_trip_kernel(dims, axis),
            vec![u8_tensor(dims, &bytes)],
        );
        let want: Vec<u64> = bytes.iter().map(|&b| u64::from(b)).collect();
        assert_eq!(bits(&got.unwrap()), want, "{dims:?} axis {axis}");
    }
}

#[test]
fn the_expansion_computes_what_the_ops_do_bit_for_bit() {
    let mut rng = SmallRng::seed_from_u64(9);
    for (dims, axis) in CASES {
        let bytes = random_bytes(&mut rng, dims.iter().product());
        for kernel in [unpack_kernel(dims, axis), round_trip_kernel(dims, axis)] {
            let direct = run_map(&kernel, vec![u8_tensor(dims, &bytes)]).unwrap();
            let rewritten = run_map(&expanded(&kernel), vec![u8_tensor(dims, &bytes)]).unwrap();
            assert_eq!(bits(&direct), bits(&rewritten), "{dims:?} axis {axis}");
        }
    }
}

#[test]
fn host_packing_matches_pack_fp4() {
    let mut rng = SmallRng::seed_from_u64(10);
    let bytes = random_bytes(&mut rng, 12);
    let values = tile_ir::mx::F4E2M1::unpack_pairs(&bytes);
    let got = run_map(&unpack_kernel(&[12], 0), vec![u8_tensor(&[12], &bytes)]).unwrap();
    let want: Vec<u64> = values.iter().map(|v| u64::from(v.to_bits())).collect();
    assert_eq!(bits(&got), want);
    assert_eq!(tile_ir::mx::F4E2M1::pack_pairs(&values), bytes);
}

//! CDNA's MFMA lane layouts as `tile_hw::mma` models them, against
//! Composable Kernel's description of the same instructions, restated here
//! as code: each of the twelve instructions (CDNA 3's four, CDNA 4's
//! eight of twice the `K`, f16, bf16 and OCP FP8) in its own test; and an
//! MFMA takes a whole 64-lane wave.

use tile_hw::mma::{warp_mma, Fragment, MmaKind};

/// Composable Kernel's description of an MFMA instruction (`mfma_type`
/// in `ck/tensor_operation/gpu/warp/xdlops_gemm.hpp`): lane `l` is
/// thread `l % threads_per_blk` of input block `l / threads_per_blk`;
/// in a k-reduction input block `b` holds `k` from `b·k_per_blk` on, a
/// thread its row of A and column of B; D's registers form
/// `groups_per_blk` groups of `group_size` rows, the groups
/// `input_blks·group_size` rows apart, starting at row
/// `block·group_size` of the thread's column.
struct Xdlops {
    group_size: usize,
    groups_per_blk: usize,
    threads_per_blk: usize,
    input_blks: usize,
    k_per_blk: usize,
}

/// `kind`'s lane layouts are those CK computes from `x`
/// (`CalculateAThreadOriginDataIndex`, `GetBeginOfThreadBlk` and the
/// `M0 M1 M2` split of its C registers).
fn matches_composable_kernel(kind: MmaKind, x: Xdlops) {
    let (m, n, k) = kind.shape();
    assert_eq!((x.threads_per_blk * x.input_blks, kind.lanes()), (64, 64));
    assert_eq!(x.k_per_blk * x.input_blks, k, "{kind:?}");
    assert_eq!(kind.elements(Fragment::A), x.k_per_blk);
    assert_eq!(kind.elements(Fragment::B), x.k_per_blk);
    assert_eq!(kind.elements(Fragment::C), x.groups_per_blk * x.group_size);
    assert_eq!((x.threads_per_blk, x.threads_per_blk), (m, n));
    for lane in 0..64 {
        let (blk_id, blk_td) = (lane / x.threads_per_blk, lane % x.threads_per_blk);
        for e in 0..x.k_per_blk {
            let kk = blk_id * x.k_per_blk + e;
            assert_eq!(kind.element(Fragment::A, lane, e), (blk_td, kk));
            assert_eq!(kind.element(Fragment::B, lane, e), (kk, blk_td));
        }
        for r in 0..x.groups_per_blk * x.group_size {
            let (group, row) = (r / x.group_size, r % x.group_size);
            let m = blk_id * x.group_size + group * x.input_blks * x.group_size + row;
            assert_eq!(
                kind.element(Fragment::C, lane, r),
                (m, blk_td),
                "lane {lane} r {r}"
            );
        }
    }
}

/// CK's `mfma_f32_32x32x8f16` and `mfma_f32_32x32x8bf16_1k`.
const XDLOPS_32X32X8: Xdlops = Xdlops {
    group_size: 4,
    groups_per_blk: 4,
    threads_per_blk: 32,
    input_blks: 2,
    k_per_blk: 4,
};

/// CK's `mfma_f32_16x16x16f16` and `mfma_f32_16x16x16bf16_1k`.
const XDLOPS_16X16X16: Xdlops = Xdlops {
    group_size: 4,
    groups_per_blk: 1,
    threads_per_blk: 16,
    input_blks: 4,
    k_per_blk: 4,
};

/// CK's `mfma_f32_32x32x16f16`, `mfma_f32_32x32x16bf16` and
/// `mfma_f32_32x32x16f8f8` (and `bf8bf8`; gfx950).
const XDLOPS_32X32X16: Xdlops = Xdlops {
    group_size: 4,
    groups_per_blk: 4,
    threads_per_blk: 32,
    input_blks: 2,
    k_per_blk: 8,
};

/// CK's `mfma_f32_16x16x32f16`, `mfma_f32_16x16x32bf16` and
/// `mfma_f32_16x16x32f8f8` (and `bf8bf8`; gfx950).
const XDLOPS_16X16X32: Xdlops = Xdlops {
    group_size: 4,
    groups_per_blk: 1,
    threads_per_blk: 16,
    input_blks: 4,
    k_per_blk: 8,
};

#[test]
fn mfma_32x32x8_f16_is_composable_kernels() {
    matches_composable_kernel(MmaKind::MfmaF16M32N32K8, XDLOPS_32X32X8);
}

#[test]
fn mfma_32x32x8_bf16_1k_is_composable_kernels() {
    matches_composable_kernel(MmaKind::MfmaBf16M32N32K8, XDLOPS_32X32X8);
}

#[test]
fn mfma_16x16x16_f16_is_composable_kernels() {
    matches_composable_kernel(MmaKind::MfmaF16M16N16K16, XDLOPS_16X16X16);
}

#[test]
fn mfma_16x16x16_bf16_1k_is_composable_kernels() {
    matches_composable_kernel(MmaKind::MfmaBf16M16N16K16, XDLOPS_16X16X16);
}

#[test]
fn mfma_32x32x16_f16_is_composable_kernels() {
    matches_composable_kernel(MmaKind::MfmaF16M32N32K16, XDLOPS_32X32X16);
}

#[test]
fn mfma_32x32x16_bf16_is_composable_kernels() {
    matches_composable_kernel(MmaKind::MfmaBf16M32N32K16, XDLOPS_32X32X16);
}

#[test]
fn mfma_16x16x32_f16_is_composable_kernels() {
    matches_composable_kernel(MmaKind::MfmaF16M16N16K32, XDLOPS_16X16X32);
}

#[test]
fn mfma_16x16x32_bf16_is_composable_kernels() {
    matches_composable_kernel(MmaKind::MfmaBf16M16N16K32, XDLOPS_16X16X32);
}

#[test]
fn mfma_32x32x16_fp8_is_composable_kernels() {
    matches_composable_kernel(MmaKind::MfmaE4m3M32N32K16, XDLOPS_32X32X16);
    matches_composable_kernel(MmaKind::MfmaE5m2M32N32K16, XDLOPS_32X32X16);
}

#[test]
fn mfma_16x16x32_fp8_is_composable_kernels() {
    matches_composable_kernel(MmaKind::MfmaE4m3M16N16K32, XDLOPS_16X16X32);
    matches_composable_kernel(MmaKind::MfmaE5m2M16N16K32, XDLOPS_16X16X32);
}

/// CDNA 4's forms are its own, and each has the name the thread-level
/// program writes.
#[test]
fn cdna4_forms_are_named_and_marked() {
    let cdna4: Vec<String> = MmaKind::ALL
        .into_iter()
        .filter(|k| k.is_cdna4())
        .map(MmaKind::name)
        .collect();
    assert_eq!(
        cdna4,
        [
            "mfma32x32x16.e4m3",
            "mfma32x32x16.e5m2",
            "mfma16x16x32.e4m3",
            "mfma16x16x32.e5m2",
            "mfma32x32x64.e4m3.ue8m0",
            "mfma32x32x64.e5m2.ue8m0",
            "mfma16x16x128.e4m3.ue8m0",
            "mfma16x16x128.e5m2.ue8m0",
            "mfma32x32x16.f16",
            "mfma32x32x16.bf16",
            "mfma16x16x32.f16",
            "mfma16x16x32.bf16"
        ]
    );
}

/// An MFMA takes a whole wave: 32 lanes' fragments are an error, and
/// so is a lane with a fragment of the wrong length.
#[test]
fn mfma_takes_64_lanes() {
    let kind = MmaKind::MfmaF16M16N16K16;
    let one = u32::from(half::f16::ONE.to_bits());
    let (a, c) = (vec![vec![one; 4]; 64], vec![vec![0.5; 4]; 64]);
    let d = warp_mma(kind, &a, &a, &c).unwrap();
    assert!(d.iter().flatten().all(|&v| v == 16.5));
    let error = warp_mma(kind, &a[..32], &a, &c).unwrap_err();
    assert_eq!(
        error,
        format!("A fragments of {:?} elements, not 64 lanes of 4", [4; 32])
    );
    let mut short = c.clone();
    short[7].pop();
    assert!(warp_mma(kind, &a, &a, &short).is_err());
}

//! RDNA 4's WMMA lane layouts (gfx1200, gfx1201) as `tile_hw::mma` models
//! them, against cells of AMD's matrix instruction calculator
//! (`-a gfx1200 -{A,B,D}` for `v_wmma_f32_16x16x16_f16` and
//! `v_wmma_f32_16x16x16_fp8_fp8`) written out here lane by lane, and one
//! whole-wave product against the plain one.

use tile_hw::mma::{warp_mma, Fragment, MmaFamily, MmaKind};

const KINDS: [MmaKind; 2] = [MmaKind::Wmma12F16M16N16K16, MmaKind::Wmma12Bf16M16N16K16];

/// The calculator's `k` of A's elements 0..8 for lanes 0..16 (the first
/// half-wave) and 16..32 (the second): two runs of four, the half-waves
/// interleaved, no lane repeating another.
#[test]
fn a_and_b_hold_two_runs_of_four_k_per_lane() {
    let first = [0, 1, 2, 3, 8, 9, 10, 11];
    let second = [4, 5, 6, 7, 12, 13, 14, 15];
    for kind in KINDS {
        assert_eq!(kind.family(), MmaFamily::Wmma12);
        assert_eq!(kind.lanes(), 32);
        for lane in 0..32 {
            let want = if lane < 16 { first } else { second };
            for (e, &k) in want.iter().enumerate() {
                assert_eq!(
                    kind.element(Fragment::A, lane, e),
                    (lane % 16, k),
                    "{kind:?} l{lane}"
                );
                assert_eq!(
                    kind.element(Fragment::B, lane, e),
                    (k, lane % 16),
                    "{kind:?} l{lane}"
                );
            }
        }
    }
}

/// The FP8 forms' `k` of A's elements 0..8: eight consecutive `k`, from 0
/// in lanes 0..16 and from 8 in lanes 16..32 (the calculator's 8-bit
/// pattern, not the 16-bit one's runs of four); D as the 16-bit forms'.
#[test]
fn fp8_a_and_b_hold_eight_consecutive_k_per_lane() {
    for kind in [MmaKind::Wmma12E4m3M16N16K16, MmaKind::Wmma12E5m2M16N16K16] {
        assert_eq!(kind.family(), MmaFamily::Wmma12);
        assert_eq!((kind.elements(Fragment::A), kind.per_register()), (8, 4));
        for lane in 0..32 {
            let first = if lane < 16 { 0 } else { 8 };
            for e in 0..8 {
                let k = first + e;
                assert_eq!(kind.element(Fragment::A, lane, e), (lane % 16, k));
                assert_eq!(kind.element(Fragment::B, lane, e), (k, lane % 16));
            }
            for r in 0..8 {
                assert_eq!(
                    kind.element(Fragment::C, lane, r),
                    MmaKind::Wmma12F16M16N16K16.element(Fragment::C, lane, r)
                );
            }
        }
    }
}

/// D's eight registers of lane `l` are rows `0..8` (lanes 0..16) or
/// `8..16` (lanes 16..32) of column `l % 16`.
#[test]
fn d_holds_eight_consecutive_rows_of_a_column() {
    for kind in KINDS {
        assert_eq!(kind.elements(Fragment::C), 8);
        for lane in [0, 7, 15, 16, 23, 31] {
            let rows: Vec<usize> = (0..8)
                .map(|r| kind.element(Fragment::C, lane, r).0)
                .collect();
            let first = if lane < 16 { 0 } else { 8 };
            assert_eq!(rows, (first..first + 8).collect::<Vec<_>>(), "l{lane}");
            assert!((0..8).all(|r| kind.element(Fragment::C, lane, r).1 == lane % 16));
        }
    }
}

/// A whole wave's fragments of row-major matrices give their product: the
/// layouts place every element once and read D back where they wrote it.
#[test]
fn a_wave_computes_the_matrix_product() {
    let kind = MmaKind::Wmma12F16M16N16K16;
    let value = |i: usize| half::f16::from_f32((i % 7) as f32 - 3.0);
    let a_matrix: Vec<half::f16> = (0..256).map(value).collect();
    let b_matrix: Vec<half::f16> = (0..256).map(|i| value(i * 5 + 1)).collect();
    let fragment = |fragment: Fragment, matrix: &[half::f16]| -> Vec<Vec<u32>> {
        (0..32)
            .map(|lane| {
                (0..8)
                    .map(|e| {
                        let (r, c) = kind.element(fragment, lane, e);
                        u32::from(matrix[r * 16 + c].to_bits())
                    })
                    .collect()
            })
            .collect()
    };
    let c = vec![vec![0.5f32; 8]; 32];
    let d = warp_mma(
        kind,
        &fragment(Fragment::A, &a_matrix),
        &fragment(Fragment::B, &b_matrix),
        &c,
    )
    .unwrap();
    for (lane, registers) in d.iter().enumerate() {
        for (r, &got) in registers.iter().enumerate() {
            let (row, col) = kind.element(Fragment::C, lane, r);
            let want: f32 = 0.5
                + (0..16)
                    .map(|k| a_matrix[row * 16 + k].to_f32() * b_matrix[k * 16 + col].to_f32())
                    .sum::<f32>();
            assert_eq!(got, want, "D[{row}][{col}]");
        }
    }
}

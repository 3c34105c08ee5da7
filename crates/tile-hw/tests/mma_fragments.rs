//! The tensor-core instructions of `tile_hw::mma` against the manuals: every
//! fragment covers its matrix, the TF32 and FP8 fragments are CuTe's, WMMA's
//! replication is enforced, and a step rounds once.

use tile_hw::mma::*;

/// Every element of every fragment is held by exactly one of the
/// instruction's lanes (WMMA's A and B by two: lanes `l` and `l + 16`).
#[test]
fn fragments_cover_their_matrices_once() {
    for kind in MmaKind::ALL {
        let (m, n, k) = kind.shape();
        for (fragment, rows, cols) in [
            (Fragment::A, m, k),
            (Fragment::B, k, n),
            (Fragment::C, m, n),
        ] {
            let mut seen = vec![0; rows * cols];
            for lane in 0..kind.lanes() {
                for i in 0..kind.elements(fragment) {
                    let (r, c) = kind.element(fragment, lane, i);
                    seen[r * cols + c] += 1;
                }
            }
            let copies = match (kind.family(), fragment) {
                (MmaFamily::Wmma, Fragment::A | Fragment::B) => 2,
                _ => 1,
            };
            assert!(seen.iter().all(|&s| s == copies), "{kind:?} {fragment:?}");
        }
    }
}

/// WMMA needs lanes 16..32 to repeat lanes 0..16's A and B: a lane that
/// does not is an error, not an arbitrary result.
#[test]
fn wmma_rejects_operands_not_replicated() {
    let kind = MmaKind::WmmaF16M16N16K16;
    let one = u32::from(half::f16::ONE.to_bits());
    let a = vec![vec![one; 16]; 32];
    let b = vec![vec![one; 16]; 32];
    let c = vec![vec![0.0; 8]; 32];
    let d = warp_mma(kind, &a, &b, &c).unwrap();
    assert!(d.iter().flatten().all(|&v| v == 16.0));
    let mut broken = a.clone();
    broken[20][3] = 0;
    let error = warp_mma(kind, &broken, &b, &c).unwrap_err();
    assert_eq!(
        error,
        "lane 20 holds A element 67 as 0x0000, another lane as 0x3c00"
    );
}

/// The TF32 fragments against CuTe's `SM80_16x8x8_F32TF32TF32F32_TN`
/// traits, an independent statement of the PTX ISA's table: `ALayout =
/// ((4,8),(2,2)):((16,1),(8,64))` into the column-major 16×8 A,
/// `BLayout = ((4,8),2):((8,1),32)` into the column-major 8×8 Bᵀ (`n +
/// 8·k`), lane `l = t + 4·g`.
#[test]
fn tf32_fragments_are_cutes() {
    let kind = MmaKind::Tf32M16N8K8;
    for lane in 0..32 {
        let (t, g) = (lane % 4, lane / 4);
        for i in 0..4 {
            let index = 16 * t + g + 8 * (i % 2) + 64 * (i / 2);
            let (row, col) = kind.element(Fragment::A, lane, i);
            assert_eq!(row + 16 * col, index, "A lane {lane} element {i}");
        }
        for i in 0..2 {
            let index = 8 * t + g + 32 * i;
            let (k, n) = kind.element(Fragment::B, lane, i);
            assert_eq!(n + 8 * k, index, "B lane {lane} element {i}");
        }
    }
    assert_eq!(kind.words(), 10);
    assert_eq!(kind.name(), "m16n8k8.tf32");
    assert_eq!(kind.unpack(&[7, 9]), [7, 9]);
    assert_eq!(MmaKind::F16M16N8K16.unpack(&[0x0002_0001]), [1, 2]);
}

/// The FP8 fragments against CuTe's `SM89_16x8x32_F32E4M3E4M3F32_TN`
/// traits (those of `SM80_16x8x32_S32S8S8S32_TN`), an independent
/// statement of the PTX ISA's table: `ALayout =
/// ((4,8),(4,2,2)):((64,1),(16,8,256))` into the column-major 16×32 A,
/// `BLayout = ((4,8),(4,2)):((32,1),(8,128))` into the column-major
/// 8×32 Bᵀ (`n + 8·k`), lane `l = t + 4·g`.
#[test]
fn fp8_fragments_are_cutes() {
    for kind in [MmaKind::E4m3M16N8K32, MmaKind::E5m2M16N8K32] {
        for lane in 0..32 {
            let (t, g) = (lane % 4, lane / 4);
            for i in 0..16 {
                let index = 64 * t + g + 16 * (i % 4) + 8 * ((i / 4) % 2) + 256 * (i / 8);
                let (row, col) = kind.element(Fragment::A, lane, i);
                assert_eq!(row + 16 * col, index, "A lane {lane} element {i}");
            }
            for i in 0..8 {
                let index = 32 * t + g + 8 * (i % 4) + 128 * (i / 4);
                let (k, n) = kind.element(Fragment::B, lane, i);
                assert_eq!(n + 8 * k, index, "B lane {lane} element {i}");
            }
        }
        assert_eq!(kind.words(), 4 + 2 + 4);
        assert!(kind.is_fp8());
    }
    assert_eq!(MmaKind::E4m3M16N8K32.name(), "m16n8k32.e4m3");
    assert_eq!(
        MmaKind::E5m2M16N8K32.unpack(&[0x4433_2211]),
        [0x11, 0x22, 0x33, 0x44]
    );
    // e4m3 0x38 is 1.0, 0x7e is 448; e5m2 0x3c is 1.0, 0x7c infinity.
    assert_eq!(MmaKind::E4m3M16N8K32.operand_value(0x7e), 448.0);
    assert_eq!(MmaKind::E5m2M16N8K32.operand_value(0x7c), f32::INFINITY);
    // Thirty-two products 448 · 1 and 0.5 sum exactly.
    let kind = MmaKind::E4m3M16N8K32;
    let a = vec![vec![0x7e; 16]; 32];
    let b = vec![vec![0x38; 8]; 32];
    let c = vec![vec![0.5; 4]; 32];
    let d = warp_mma(kind, &a, &b, &c).unwrap();
    assert!(d.iter().flatten().all(|&v| v == 32.0 * 448.0 + 0.5));
}

/// The instruction reads TF32: the low 13 bits of an operand do not
/// count, so `1 + 2⁻¹¹` times 1 is 1, and `1 + 2⁻¹⁰` is itself.
#[test]
fn tf32_operands_drop_their_low_bits() {
    let kind = MmaKind::Tf32M16N8K8;
    let (m, n, k) = kind.shape();
    let ones = |len| -> Vec<Vec<u32>> { vec![vec![1f32.to_bits(); len]; 32] };
    let mut a = vec![vec![0u32; 4]; 32];
    // Lane 0's element 0 is A[0][0]; B is all ones, C zero.
    a[0][0] = (1.0 + 2f32.powi(-11)).to_bits();
    a[1][0] = (1.0 + 2f32.powi(-10)).to_bits();
    let c = vec![vec![0.0; 4]; 32];
    let d = warp_mma(kind, &a, &ones(2), &c).unwrap();
    // D[0][0], lane 0's first, sums row 0 of A: A[0][0] (lane 0's
    // element 0) and A[0][1] (lane 1's).
    assert_eq!(d[0][0], 2.0 + 2f32.powi(-10));
    assert_eq!((m, n, k), (16, 8, 8));
}

/// A step sums exactly and rounds once: `1 + 2⁻²⁴ + 2⁻²⁴` is `1 + 2⁻²³`
/// (an in-order f32 chain would give 1).
#[test]
fn a_step_rounds_once() {
    let kind = MmaKind::F16M16N8K16;
    let (m, n, k) = kind.shape();
    let mut a = vec![0.0; m * k];
    let mut b = vec![0.0; k * n];
    let c = vec![1.0; m * n];
    a[0] = 2f32.powi(-12);
    a[1] = 2f32.powi(-12);
    b[0] = 2f32.powi(-12);
    b[n] = 2f32.powi(-12);
    let d = kind.step(&a, &b, &c);
    assert_eq!(d[0], 1.0 + 2f32.powi(-23));
    assert_eq!(d[1], 1.0);
}

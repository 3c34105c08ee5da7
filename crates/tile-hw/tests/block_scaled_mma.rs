//! The block-scaled `mma.sync` forms (`kind::mxf8f6f4.block_scale`, one
//! E8M0 scale per row of A and per column of B) against CuTe's scale
//! layouts and a plain-Rust step.

use tile_hw::mma::*;
use tile_ir::f8::F8E4M3;

/// CuTe's `SFALayout ((2,2,8),V):((8,0,1),16)` maps lane `l`, decomposed
/// as `(l % 2, (l / 2) % 2, l / 4)`, to row `8·(l % 2) + l / 4` (the
/// second mode has stride 0: lanes `4g` and `4g + 2` hold one scale), and
/// `SFBLayout ((4,8),V):((0,1),8)` to column `l / 4`.
#[test]
fn scale_holders_are_cutes() {
    let kind = MmaKind::E4m3Ue8m0M16N8K32;
    for lane in 0..32 {
        let cute_row = 8 * (lane % 2) + (lane / 4);
        assert_eq!(
            kind.scale_holder(Fragment::A, lane),
            (cute_row, 0),
            "lane {lane}"
        );
        assert_eq!(
            kind.scale_holder(Fragment::B, lane),
            (lane / 4, 0),
            "lane {lane}"
        );
    }
}

/// The block-scaled kinds are the FP8 forms plus two scale words, named
/// apart from them, and never offered to a plain `dot`.
#[test]
fn block_scaled_kinds_extend_the_fp8_forms() {
    for (plain, scaled) in [
        (MmaKind::E4m3M16N8K32, MmaKind::E4m3Ue8m0M16N8K32),
        (MmaKind::E5m2M16N8K32, MmaKind::E5m2Ue8m0M16N8K32),
    ] {
        let dtype = plain.operand_dtype();
        let kinds: Vec<MmaKind> = MmaKind::for_scaled_dot(MmaFamily::MmaSync, dtype).collect();
        assert_eq!(kinds, vec![scaled]);
        assert_eq!(scaled.shape(), plain.shape());
        assert_eq!(scaled.words(), plain.words() + 2);
        assert_eq!(scaled.c_word(), 6);
        assert_eq!(scaled.name(), format!("{}.ue8m0", plain.name()));
        let dot = tile_ir::DotPrecision::Tensor;
        let kinds: Vec<MmaKind> = MmaKind::for_dot(MmaFamily::MmaSync, dot, dtype).collect();
        assert_eq!(kinds, vec![plain]);
    }
}

/// Bits of the E4M3 value `x`.
fn e4m3(x: f32) -> u32 {
    u32::from(F8E4M3::from_f32(x).to_bits())
}

/// A warp's fragments of row-major `a` (16×32) and `b` (32×8) and C zero.
fn fragments(kind: MmaKind, a: &[f32], b: &[f32]) -> [Vec<Vec<u32>>; 2] {
    let (_, n, k) = kind.shape();
    let frag = |fragment, matrix: &[f32], cols: usize| -> Vec<Vec<u32>> {
        (0..32)
            .map(|lane| {
                (0..kind.elements(fragment))
                    .map(|i| {
                        let (r, c) = kind.element(fragment, lane, i);
                        e4m3(matrix[r * cols + c])
                    })
                    .collect()
            })
            .collect()
    };
    [frag(Fragment::A, a, k), frag(Fragment::B, b, n)]
}

/// Each product is scaled by its row's and column's scale, exactly, even
/// where a scaled element alone would leave `f32`'s range; a NaN scale
/// (`0xFF`) makes its row NaN.
#[test]
fn a_scaled_step_multiplies_by_both_scales() {
    let kind = MmaKind::E4m3Ue8m0M16N8K32;
    let (m, n, k) = kind.shape();
    let a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..k * n).map(|i| ((i % 5) as f32 - 2.0) * 0.25).collect();
    let [fa, fb] = fragments(kind, &a, &b);
    // Row r's scale 2^(r - 8) (bits 119 + r), except row 5's 2^127 and
    // row 6's NaN; column c's 2^c, except column 3's 2^-117, with which
    // row 5's products stay finite (the others overflow to infinity).
    let row_bits = |r: usize| match r {
        5 => 254,
        6 => 0xFF,
        r => 119 + r as u32,
    };
    let col_bits = |c: usize| if c == 3 { 10 } else { 127 + c as u32 };
    let scales: Vec<[u32; 2]> = (0..32)
        .map(|lane| {
            [
                row_bits(kind.scale_holder(Fragment::A, lane).0),
                col_bits(kind.scale_holder(Fragment::B, lane).0),
            ]
        })
        .collect();
    let c = vec![vec![0.0; 4]; 32];
    let d = warp_mma_scaled(kind, &fa, &fb, &c, &scales).unwrap();
    for (lane, fragment) in d.iter().enumerate() {
        for (i, &v) in fragment.iter().enumerate() {
            let (r, col) = kind.element(Fragment::C, lane, i);
            let dot: f64 = (0..k)
                .map(|kk| f64::from(a[r * k + kk]) * f64::from(b[kk * n + col]))
                .sum();
            let exponent = row_bits(r) as i32 - 127 + col_bits(col) as i32 - 127;
            let want = (dot * 2f64.powi(exponent)) as f32;
            if r == 6 {
                assert!(v.is_nan(), "row 6 column {col}: {v}");
            } else {
                assert_eq!(v, want, "row {r} column {col}");
            }
        }
    }
}

/// Two lanes that hold one row's scale must agree, and the two entry
/// points take only their own kinds.
#[test]
fn scaled_steps_check_their_scales() {
    let kind = MmaKind::E4m3Ue8m0M16N8K32;
    let zeros = |e| vec![vec![0u32; kind.elements(e)]; 32];
    let c = vec![vec![0.0; 4]; 32];
    let mut scales = vec![[127u32, 127]; 32];
    scales[6] = [128, 127];
    let error =
        warp_mma_scaled(kind, &zeros(Fragment::A), &zeros(Fragment::B), &c, &scales).unwrap_err();
    assert_eq!(
        error,
        "lane 6 holds the scale of row 1 (group 0) as 0x80, another lane as 0x7f"
    );
    let error = warp_mma(kind, &zeros(Fragment::A), &zeros(Fragment::B), &c).unwrap_err();
    assert_eq!(error, "m16n8k32.e4m3.ue8m0 takes scales");
    let plain = MmaKind::E4m3M16N8K32;
    let scales = vec![[127u32, 127]; 32];
    let error =
        warp_mma_scaled(plain, &zeros(Fragment::A), &zeros(Fragment::B), &c, &scales).unwrap_err();
    assert_eq!(error, "m16n8k32.e4m3 takes no scales");
}

/// CDNA 4's scaled MFMA against the layouts of the ROCm blog's kernels
/// (`mfma_fp32_32x32x64_fp8_fp8`, and the 16×16×128 form by the same
/// rule): lane `l`'s byte `e` of A is row `l % s`, `k = 16·(l / s) + e %
/// 16 + (K / 2)·(e / 16)`; each lane supplies the scale of row (column)
/// `l % s` for the group of 32 `k` numbered `l / s`.
#[test]
fn scaled_mfma_layouts_are_the_blogs() {
    for (kind, s, k) in [
        (MmaKind::MfmaE4m3Ue8m0M32N32K64, 32, 64),
        (MmaKind::MfmaE5m2Ue8m0M16N16K128, 16, 128),
    ] {
        assert_eq!(kind.shape(), (s, s, k));
        assert!(kind.is_cdna4() && kind.is_block_scaled());
        assert_eq!(kind.elements(Fragment::A), 32);
        for lane in 0..64 {
            for e in 0..32 {
                let blog_k = 16 * (lane / s) + e % 16 + (k / 2) * (e / 16);
                assert_eq!(kind.element(Fragment::A, lane, e), (lane % s, blog_k));
                assert_eq!(kind.element(Fragment::B, lane, e), (blog_k, lane % s));
            }
            for fragment in [Fragment::A, Fragment::B] {
                assert_eq!(kind.scale_holder(fragment, lane), (lane % s, lane / s));
            }
        }
    }
}

/// A scaled MFMA step scales each group of 32 `k` by its own scales: with
/// every element 1, `D[r][c]` is `Σ_g 32 · 2^(sa[r][g] + sb[c][g])`.
#[test]
fn scaled_mfma_steps_scale_each_group_of_32() {
    for kind in [
        MmaKind::MfmaE4m3Ue8m0M32N32K64,
        MmaKind::MfmaE4m3Ue8m0M16N16K128,
    ] {
        let (s, _, k) = kind.shape();
        let groups = k / 32;
        let one = e4m3(1.0);
        let a = vec![vec![one; 32]; 64];
        let c = vec![vec![0.0; kind.elements(Fragment::C)]; 64];
        // Row r's exponent in group g: (r + g) % 3; column c's: -(c % 2) - g.
        let row_exp = |r: usize, g: usize| ((r + g) % 3) as i32;
        let col_exp = |c: usize, g: usize| -((c % 2) as i32) - g as i32;
        let scales: Vec<[u32; 2]> = (0..64)
            .map(|lane| {
                let (r, g) = kind.scale_holder(Fragment::A, lane);
                let (c, h) = kind.scale_holder(Fragment::B, lane);
                [(127 + row_exp(r, g)) as u32, (127 + col_exp(c, h)) as u32]
            })
            .collect();
        let d = warp_mma_scaled(kind, &a, &a, &c, &scales).unwrap();
        for (lane, fragment) in d.iter().enumerate() {
            for (i, &v) in fragment.iter().enumerate() {
                let (r, col) = kind.element(Fragment::C, lane, i);
                let want: f32 = (0..groups)
                    .map(|g| 32.0 * 2f32.powi(row_exp(r, g) + col_exp(col, g)))
                    .sum();
                assert_eq!(v, want, "{kind:?} row {r} column {col} (side {s})");
            }
        }
    }
}

/// `kind::mxf8f6f4` takes FP6 and FP4 one value a byte: FP6 in bits 5..0,
/// FP4 in bits 5..2 (CUTLASS shifts the nibbles `ldmatrix` leaves in bits
/// 3..0 left by two, `0b0000ABCD` to `0b00ABCD00`, before the instruction).
/// A step reads each value back from its container.
#[test]
fn fp6_and_fp4_operands_sit_in_their_containers() {
    use tile_ir::mx::{F4E2M1, F6E2M3, F6E3M2};
    use tile_ir::DType;
    let fp4 = MmaKind::E2m1Ue8m0M16N8K32;
    assert_eq!(fp4.container(), Some((0x0F0F_0F0F, 2)));
    for code in 0..16u32 {
        assert_eq!(fp4.contained(code), code << 2);
        assert_eq!(fp4.contained(0xF0 | code), code << 2, "high bits dropped");
        let value = F4E2M1::from_bits(code as u8).to_f64() as f32;
        assert_eq!(fp4.operand_value(code << 2), value, "code {code:#x}");
    }
    for (kind, decode) in [
        (
            MmaKind::E2m3Ue8m0M16N8K32,
            (|b| F6E2M3::from_bits(b).to_f64()) as fn(u8) -> f64,
        ),
        (MmaKind::E3m2Ue8m0M16N8K32, |b| {
            F6E3M2::from_bits(b).to_f64()
        }),
    ] {
        for code in 0..64u32 {
            assert_eq!(kind.contained(0xC0 | code), code);
            assert_eq!(kind.operand_value(code), decode(code as u8) as f32);
        }
    }
    for (dtype, kind, name) in [
        (
            DType::F6E2M3,
            MmaKind::E2m3Ue8m0M16N8K32,
            "m16n8k32.e2m3.ue8m0",
        ),
        (
            DType::F6E3M2,
            MmaKind::E3m2Ue8m0M16N8K32,
            "m16n8k32.e3m2.ue8m0",
        ),
        (DType::F4E2M1, fp4, "m16n8k32.e2m1.ue8m0"),
    ] {
        let kinds: Vec<MmaKind> = MmaKind::for_scaled_dot(MmaFamily::MmaSync, dtype).collect();
        assert_eq!(kinds, vec![kind]);
        assert_eq!(kind.name(), name);
        assert_eq!(kind.shape(), MmaKind::E4m3Ue8m0M16N8K32.shape());
        assert_eq!(kind.words(), MmaKind::E4m3Ue8m0M16N8K32.words());
        assert!(kind.is_fp8() && kind.is_block_scaled());
        assert_eq!(MmaKind::for_scaled_dot(MmaFamily::Mfma, dtype).count(), 0);
    }
    // One product an element: A's row r holds code r at k = 0 (zeros
    // elsewhere), B's column c code c + 8; the scales 2 and 1.
    assert_eq!(fp4.shape(), (16, 8, 32));
    let code = |i: usize| (i % 16) as u32;
    let frag = |fragment, at: &dyn Fn(usize, usize) -> u32| -> Vec<Vec<u32>> {
        (0..32)
            .map(|lane| {
                (0..fp4.elements(fragment))
                    .map(|i| {
                        let (r, c) = fp4.element(fragment, lane, i);
                        fp4.contained(at(r, c))
                    })
                    .collect()
            })
            .collect()
    };
    let a = frag(Fragment::A, &|r, c| if c == 0 { code(r) } else { 0 });
    let b = frag(Fragment::B, &|r, c| if r == 0 { code(c + 8) } else { 0 });
    let c = vec![vec![0.0; 4]; 32];
    let d = warp_mma_scaled(fp4, &a, &b, &c, &[[128, 127]; 32]).unwrap();
    let value = |bits: u32| F4E2M1::from_bits(bits as u8).to_f64() as f32;
    for (lane, fragment) in d.iter().enumerate() {
        for (i, &v) in fragment.iter().enumerate() {
            let (r, col) = fp4.element(Fragment::C, lane, i);
            assert_eq!(
                v,
                2.0 * value(code(r)) * value(code(col + 8)),
                "({r}, {col})"
            );
        }
    }
}

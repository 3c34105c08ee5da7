//! `eval::cast` between every pair of dtypes, against expectations computed
//! independently: a nearest-value search over every value of the small float
//! formats, and integer arithmetic for wrapping and saturation.

use half::{bf16, f16};
use rand::{rngs::SmallRng, Rng, SeedableRng};
use tile_ir::eval::{bitcast, cast};
use tile_ir::f8::{F8E4M3, F8E5M2};
use tile_ir::{DType, Scalar};

/// Every non-negative finite value of a float format with at most 16 bits,
/// ascending, with its bit pattern.
fn positive_values(dtype: DType) -> Vec<(f64, u64)> {
    let patterns = if dtype.bits() == 8 { 0x80 } else { 0x8000 };
    let mut values: Vec<(f64, u64)> = (0..patterns)
        .map(|bits| (Scalar::from_bits(dtype, bits).to_f64(), bits))
        .filter(|(v, _)| v.is_finite())
        .collect();
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    values
}

/// The bits of `x` rounded to nearest, ties to even, in `dtype`, by search.
fn nearest(x: f64, dtype: DType, table: &[(f64, u64)]) -> u64 {
    let sign = if x.is_sign_negative() {
        1u64 << (dtype.bits() - 1)
    } else {
        0
    };
    let a = x.abs();
    let (max, max_bits) = table[table.len() - 1];
    let below_max = table[table.len() - 2].0;
    let threshold = max + (max - below_max) / 2.0;
    let ieee_inf = match dtype {
        DType::F16 => Some(0x7c00),
        DType::BF16 => Some(0x7f80),
        _ => None, // FP8 saturates
    };
    if a >= threshold || a.is_infinite() {
        return sign | ieee_inf.unwrap_or(max_bits);
    }
    if a >= max {
        return sign | max_bits;
    }
    let i = table.partition_point(|&(v, _)| v < a);
    let (hi, hi_bits) = table[i];
    if hi == a || i == 0 {
        return sign | hi_bits;
    }
    let (lo, lo_bits) = table[i - 1];
    let pick = if a - lo < hi - a {
        lo_bits
    } else if hi - a < a - lo {
        hi_bits
    } else if lo_bits % 2 == 0 {
        lo_bits
    } else {
        hi_bits
    };
    sign | pick
}

/// Edge values of f64 plus, for each small format, the midpoints between
/// neighbours and the values one f64 ulp either side of them.
fn probe_values(rng: &mut SmallRng) -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        5e-324,
        1e-30,
        65504.0,
        65519.99,
        65520.0,
        448.0,
        464.0,
        57344.0,
        61440.0,
        3.0e38,
        3.4e38,
        f64::from(f32::MAX),
        2f64.powi(-24),
        2f64.powi(-25),
        2f64.powi(-25) * 1.0000001,
        2f64.powi(-133),
        2f64.powi(-149),
        2f64.powi(-150),
    ];
    for dtype in [DType::F16, DType::BF16, DType::F8E4M3, DType::F8E5M2] {
        let table = positive_values(dtype);
        for pair in table.windows(2).step_by(7) {
            let mid = (pair[0].0 + pair[1].0) / 2.0;
            for m in [mid, next_up(mid), next_down(mid)] {
                v.push(m);
                v.push(-m);
            }
        }
    }
    for _ in 0..2000 {
        let mantissa: f64 = rng.gen_range(1.0..2.0);
        v.push(mantissa * 2f64.powi(rng.gen_range(-140..130)));
    }
    v
}

fn next_up(x: f64) -> f64 {
    f64::from_bits(x.to_bits() + 1)
}

fn next_down(x: f64) -> f64 {
    f64::from_bits(x.to_bits() - 1)
}

#[test]
fn f64_to_small_floats_rounds_once_to_nearest_even() {
    let mut rng = SmallRng::seed_from_u64(1);
    let probes = probe_values(&mut rng);
    for dtype in [DType::F16, DType::BF16, DType::F8E4M3, DType::F8E5M2] {
        let table = positive_values(dtype);
        for &x in &probes {
            let got = cast(Scalar::F64(x), dtype);
            assert_eq!(got.dtype(), dtype);
            assert_eq!(got.to_bits(), nearest(x, dtype, &table), "{x:e} -> {dtype}");
        }
    }
}

#[test]
fn f32_to_small_floats_rounds_once_to_nearest_even() {
    let mut rng = SmallRng::seed_from_u64(2);
    let probes = probe_values(&mut rng);
    for dtype in [DType::F16, DType::BF16, DType::F8E4M3, DType::F8E5M2] {
        let table = positive_values(dtype);
        for &x in &probes {
            let narrow = x as f32;
            let got = cast(Scalar::F32(narrow), dtype);
            let want = nearest(f64::from(narrow), dtype, &table);
            assert_eq!(got.to_bits(), want, "{narrow:e} -> {dtype}");
        }
    }
}

#[test]
fn a_value_just_above_a_bf16_tie_rounds_up() {
    // 1 + 2^-8 is the tie between 1 and 1 + 2^-7; a tiny excess must round up,
    // which rounding via f32 (or truncating the low bits) would lose.
    let x = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
    assert_eq!(
        cast(Scalar::F64(x), DType::BF16),
        Scalar::BF16(bf16::from_f32(1.0 + 2f32.powi(-7)))
    );
    let y = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
    assert_eq!(
        cast(Scalar::F64(y), DType::F16),
        Scalar::F16(f16::from_f32(1.0 + 2f32.powi(-10)))
    );
}

#[test]
fn widening_float_casts_are_exact_and_round_trip() {
    for bits in 0..=u16::MAX {
        for dtype in [DType::F16, DType::BF16] {
            let x = Scalar::from_bits(dtype, u64::from(bits));
            if x.is_nan() {
                continue;
            }
            for wide in [DType::F32, DType::F64] {
                let w = cast(x, wide);
                assert_eq!(w.to_f64().to_bits(), x.to_f64().to_bits());
                assert_eq!(cast(w, dtype), x);
            }
        }
    }
    for bits in 0..=u8::MAX {
        let e4 = Scalar::F8E4M3(F8E4M3::from_bits(bits));
        let e5 = Scalar::F8E5M2(F8E5M2::from_bits(bits));
        if !e4.is_nan() {
            assert_eq!(cast(cast(e4, DType::F16), DType::F8E4M3), e4);
        }
        if !e5.is_nan() {
            assert_eq!(cast(cast(e5, DType::BF16), DType::F8E5M2).to_f64(), {
                let v = e5.to_f64();
                if v.is_infinite() {
                    57344f64.copysign(v)
                } else {
                    v
                }
            });
            assert_eq!(cast(cast(e5, DType::F32), DType::F8E5M2).to_bits(), {
                if e5.to_f64().is_infinite() {
                    u64::from(bits) - 1
                } else {
                    u64::from(bits)
                }
            });
        }
    }
}

#[test]
fn nan_converts_to_the_canonical_nan_of_other_float_dtypes() {
    let nan = Scalar::F32(f32::from_bits(0xffc1_2345));
    let cases = [
        (DType::F16, 0x7e00),
        (DType::BF16, 0x7fc0),
        (DType::F64, 0x7ff8_0000_0000_0000),
        (DType::F8E4M3, 0x7f),
        (DType::F8E5M2, 0x7f),
    ];
    for (dtype, bits) in cases {
        assert_eq!(cast(nan, dtype).to_bits(), bits, "{dtype}");
    }
    // A cast to the same dtype is the identity, payload included.
    assert_eq!(cast(nan, DType::F32), nan);
}

const INTS: [DType; 8] = [
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
];

fn int_range(dtype: DType) -> (i128, i128) {
    let w = dtype.bits();
    if dtype.is_signed_int() {
        (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
    } else {
        (0, (1i128 << w) - 1)
    }
}

fn int_probes() -> Vec<i128> {
    let mut v = vec![
        0, 1, -1, 2, -2, 127, 128, -128, -129, 255, 256, 32767, -32768, 65535,
    ];
    for w in [8u32, 16, 32, 64] {
        let p = 1i128 << (w - 1);
        v.extend([p - 1, p, -p, -p - 1, 2 * p - 1, 2 * p]);
    }
    v
}

fn int_scalar(dtype: DType, v: i128) -> Option<Scalar> {
    let (lo, hi) = int_range(dtype);
    (lo..=hi)
        .contains(&v)
        .then(|| Scalar::from_bits(dtype, v as u64))
}

#[test]
fn int_to_int_wraps_modulo_two_to_the_width() {
    for from in INTS {
        for to in INTS {
            for v in int_probes() {
                let Some(x) = int_scalar(from, v) else {
                    continue;
                };
                let modulus = 1i128 << to.bits();
                let mut want = v.rem_euclid(modulus);
                if to.is_signed_int() && want >= modulus / 2 {
                    want -= modulus;
                }
                assert_eq!(cast(x, to).to_i128(), Some(want), "{v} {from} -> {to}");
            }
        }
    }
}

#[test]
fn float_to_int_truncates_and_saturates_with_nan_to_zero() {
    let probes = [
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.0,
        -1.0,
        2.9,
        -2.9,
        127.5,
        128.0,
        -128.9,
        -129.0,
        255.9,
        256.0,
        65535.5,
        65536.0,
        1e10,
        -1e10,
        3e38,
        -3e38,
        1e300,
        -1e300,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        9.223372036854776e18,
        1.8446744073709552e19,
    ];
    for from in [
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::F8E4M3,
        DType::F8E5M2,
    ] {
        for &p in &probes {
            let x = cast(Scalar::F64(p), from);
            let v = x.to_f64();
            for to in INTS {
                let (lo, hi) = int_range(to);
                let want = if v.is_nan() {
                    0
                } else if v <= lo as f64 {
                    lo
                } else if v >= hi as f64 {
                    hi
                } else {
                    v.trunc() as i128
                };
                assert_eq!(cast(x, to).to_i128(), Some(want), "{v} {from} -> {to}");
            }
        }
    }
}

#[test]
fn int_to_float_rounds_once_to_nearest_even() {
    let mut rng = SmallRng::seed_from_u64(3);
    let tables: Vec<(DType, Vec<(f64, u64)>)> =
        [DType::F16, DType::BF16, DType::F8E4M3, DType::F8E5M2]
            .into_iter()
            .map(|d| (d, positive_values(d)))
            .collect();
    let mut probes: Vec<i64> = int_probes()
        .into_iter()
        .filter_map(|v| i64::try_from(v).ok())
        .collect();
    probes.extend(
        (0..2000).map(|_| rng.gen_range(-(1i64 << 40)..(1i64 << 40)) >> rng.gen_range(0..40)),
    );
    for v in probes {
        let x = Scalar::I64(v);
        assert_eq!(cast(x, DType::F32), Scalar::F32(v as f32));
        assert_eq!(cast(x, DType::F64), Scalar::F64(v as f64));
        for (dtype, table) in &tables {
            // |v| < 2^53 is exact in f64, so the f64 search is the oracle.
            assert_eq!(
                cast(x, *dtype).to_bits(),
                nearest(v as f64, *dtype, table),
                "{v} -> {dtype}"
            );
        }
    }
    // 2^62 + 2^54 + 1 is just above the bf16 tie between 2^62 and 2^62 + 2^55;
    // via f64 the +1 would be lost and the tie would round down to even.
    let x = Scalar::I64((1 << 62) + (1 << 54) + 1);
    assert_eq!(cast(x, DType::BF16).to_f64(), 2f64.powi(62) + 2f64.powi(55));
    let u = Scalar::U64(u64::MAX);
    assert_eq!(cast(u, DType::F32), Scalar::F32(u64::MAX as f32));
    assert_eq!(cast(u, DType::F16).to_f64(), f64::INFINITY);
    assert_eq!(cast(u, DType::F8E4M3).to_f64(), 448.0);
}

#[test]
fn bool_casts_test_non_zero_and_produce_zero_or_one() {
    let mut rng = SmallRng::seed_from_u64(4);
    // f8e8m0 has no zero: its pattern 0 is 2^-127.
    for from in DType::ALL.into_iter().filter(|&d| d != DType::F8E8M0) {
        assert_eq!(
            cast(Scalar::zero(from), DType::Bool),
            Scalar::Bool(false),
            "{from}"
        );
    }
    for from in DType::ALL {
        for _ in 0..50 {
            let x = Scalar::from_bits(from, rng.gen());
            let want = if from.is_float() {
                x.to_f64() != 0.0
            } else {
                x.to_bits() != 0
            };
            assert_eq!(cast(x, DType::Bool), Scalar::Bool(want), "{x:?}");
        }
    }
    assert_eq!(cast(Scalar::F32(f32::NAN), DType::Bool), Scalar::Bool(true));
    assert_eq!(
        cast(Scalar::F16(f16::NEG_ZERO), DType::Bool),
        Scalar::Bool(false)
    );
    for to in DType::ALL {
        assert_eq!(cast(Scalar::Bool(true), to).to_f64(), 1.0, "{to}");
        assert_eq!(cast(Scalar::Bool(false), to), Scalar::zero(to), "{to}");
    }
}

#[test]
fn every_pair_of_dtypes_converts_to_the_target_dtype() {
    let mut rng = SmallRng::seed_from_u64(5);
    for from in DType::ALL {
        for to in DType::ALL {
            for _ in 0..64 {
                let x = Scalar::from_bits(from, rng.gen());
                let y = cast(x, to);
                assert_eq!(y.dtype(), to);
                if from == to {
                    assert_eq!(y, x);
                }
            }
        }
    }
}

#[test]
fn bitcasts_keep_every_bit_and_refuse_other_widths() {
    let mut rng = SmallRng::seed_from_u64(5);
    for from in DType::ALL.into_iter().filter(|d| !d.is_bool()) {
        for to in DType::ALL.into_iter().filter(|d| !d.is_bool()) {
            for _ in 0..20 {
                let x = Scalar::from_bits(from, rng.gen());
                match bitcast(x, to) {
                    Ok(y) => {
                        assert_eq!(from.bits(), to.bits(), "{from} to {to}");
                        assert_eq!(y.dtype(), to);
                        // FP4 and FP6 keep the low bits of the byte.
                        let kept = (1u128 << to.value_bits()) - 1;
                        assert_eq!(y.to_bits(), x.to_bits() & kept as u64, "{x:?} to {to}");
                    }
                    Err(e) => {
                        assert_ne!(from.bits(), to.bits(), "{from} to {to}");
                        assert_eq!(e.to_string(), format!("`bitcast` is not defined on {from}"));
                    }
                }
            }
        }
    }
    // A NaN's payload and a negative zero survive, where `cast` would
    // canonicalize the NaN.
    let payload = Scalar::from_bits(DType::F32, 0xffc0_1234);
    assert_eq!(
        bitcast(payload, DType::U32).unwrap(),
        Scalar::U32(0xffc0_1234)
    );
    assert_eq!(
        bitcast(Scalar::U16(0x8000), DType::BF16).unwrap().to_bits(),
        0x8000
    );
    assert!(bitcast(Scalar::Bool(true), DType::U8).is_err());
}

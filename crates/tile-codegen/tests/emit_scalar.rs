//! The emitter's scalar code against the oracle: every unary, binary,
//! comparison, `fma` and cast of every dtype, compiled for the host through
//! `scalar::probe` (the same LLVM IR the GPU targets receive for the op) and run
//! on edge values and random bits. Exact ops must agree with
//! `tile_ir::eval` bit for bit; the math-library functions (`UnaryOp::MATH`)
//! within one ulp of the dtype (f64: each function's bound, `probe::f64_bound`),
//! with special values exact (dense samples: tests/emit_math.rs). An op the
//! oracle rejects must be rejected too.

mod probe;

use probe::{f64_bound, run_probe, run_probe_as, ulps};
use tile_codegen::{Sm, Target};
use tile_ir::eval;
use tile_ir::{BinaryOp, CmpPred, DType, Scalar, UnaryOp};
use tile_thread::program::ThreadOpKind;

/// Edge values and pseudo-random bits of `dtype`.
fn samples(dtype: DType, seed: u64) -> Vec<u64> {
    // FP4 and FP6 registers hold their value in the low bits, the rest zero.
    let width = dtype.value_bits();
    let mask = if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    let mut out: Vec<u64> = match dtype {
        DType::Bool => return vec![0, 1],
        d if d.is_float() => {
            let one = Scalar::F64(1.0);
            let values = [
                0.0,
                -0.0,
                1.0,
                -1.0,
                0.5,
                2.0,
                3.0,
                -7.5,
                1e-3,
                100.0,
                65504.0,
                1e30,
                -1e-30,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NAN,
                0.1,
                1.5,
                2.5,
                -2.5,
                448.0,
                57344.0,
                1e-40,
                5e-324,
                1e300,
                0.75,
                33.3,
                -0.2,
                6.0,
                20.0,
            ];
            let _ = one;
            let mut v: Vec<u64> = values
                .iter()
                .map(|&x| eval::cast(Scalar::F64(x), d).to_bits())
                .collect();
            // Smallest subnormal, largest finite, a NaN with a payload.
            v.extend([1, mask >> 1, mask & !(mask >> 1) | 1, (mask >> 1) - 1]);
            v
        }
        _ => vec![
            0,
            1,
            mask,
            mask >> 1,
            (mask >> 1) + 1,
            2,
            u64::from(width - 1),
            u64::from(width),
            3,
            7,
        ],
    };
    let mut s = seed | 1;
    for _ in 0..300 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        out.push(s & mask);
    }
    out
}

/// Checks `op` on `dtype`; returns the largest ulp distance seen.
fn check_unary(op: UnaryOp, dtype: DType) -> u64 {
    let xs = samples(dtype, 0x1234 + op as u64);
    let inputs: Vec<[u64; 3]> = xs.iter().map(|&x| [x, 0, 0]).collect();
    let got = run_probe(&ThreadOpKind::Unary(op), &[dtype], &inputs, false);
    // sm_80 calls the f32 functions as `tile.math.<op>.f32`: the same bits.
    if dtype == DType::F32 {
        let like_sm80 = run_probe_as(
            &ThreadOpKind::Unary(op),
            &[dtype],
            &inputs,
            Target::Nvptx(Sm::Sm80),
        );
        assert_eq!(like_sm80, got, "{} f32 as on sm_80", op.name());
    }
    let bound = match (op.is_math(), dtype) {
        (false, _) => 0,
        (true, DType::F64) => f64_bound(op),
        (true, _) => 1,
    };
    let mut worst = 0;
    for (i, &x) in xs.iter().enumerate() {
        let want = eval::unary(op, Scalar::from_bits(dtype, x));
        match (&got, want) {
            (None, Err(_)) => return 0,
            (Some(g), Ok(w)) => {
                let (g, w) = (g[i], w.to_bits());
                let wv = Scalar::from_bits(dtype, w);
                let special = wv.is_nan() || !wv.to_f64().is_finite();
                let distance = if g == w {
                    0
                } else if special || !dtype.is_float() {
                    u64::MAX
                } else {
                    ulps(dtype, g, w)
                };
                assert!(
                    distance <= bound,
                    "{} {dtype} of {x:#x}: got {g:#x}, the oracle {w:#x}",
                    op.name()
                );
                worst = worst.max(distance);
            }
            (g, w) => panic!(
                "{} on {dtype}: emitter {:?}, oracle {:?}",
                op.name(),
                g.is_some(),
                w.is_ok()
            ),
        }
    }
    worst
}

#[test]
fn unary_ops_match_the_oracle() {
    for &op in UnaryOp::ALL {
        let mut worst = Vec::new();
        for dtype in DType::ALL {
            let w = check_unary(op, dtype);
            if dtype.is_float() {
                worst.push(format!("{dtype} {w}"));
            }
        }
        println!("{:<6} max ulps: {}", op.name(), worst.join(", "));
    }
}

#[test]
fn binary_ops_match_the_oracle() {
    // The math-library functions (`pow`, `atan2`, `hypot`) are within their
    // ulp bounds: tests/emit_pow.rs and tests/emit_math.rs.
    for &op in BinaryOp::ALL.iter().filter(|op| !op.is_math()) {
        for dtype in DType::ALL {
            let xs = samples(dtype, 0x99 + op as u64);
            let ys = samples(dtype, 0x4242 + op as u64);
            let mut inputs = Vec::new();
            for (i, &x) in xs.iter().enumerate() {
                inputs.push([x, ys[i], 0]);
                inputs.push([x, xs[(i * 7 + 3) % xs.len()], 0]);
            }
            let kind = ThreadOpKind::Binary(op);
            let got = run_probe(&kind, &[dtype, dtype], &inputs, false);
            // sm_80's min/max are other instructions (`llvm.maximum`).
            let like_sm80 = matches!(op, BinaryOp::Min | BinaryOp::Max)
                .then(|| run_probe_as(&kind, &[dtype, dtype], &inputs, Target::Nvptx(Sm::Sm80)));
            for (i, inp) in inputs.iter().enumerate() {
                let want = eval::binary(
                    op,
                    Scalar::from_bits(dtype, inp[0]),
                    Scalar::from_bits(dtype, inp[1]),
                );
                if let (Some(Some(g)), Ok(w)) = (&like_sm80, &want) {
                    assert_eq!(
                        g[i],
                        w.to_bits(),
                        "{} {dtype} of {:#x}, {:#x} as on sm_80",
                        op.name(),
                        inp[0],
                        inp[1]
                    );
                }
                match (&got, want) {
                    (None, Err(_)) => break,
                    (Some(g), Ok(w)) => assert_eq!(
                        g[i],
                        w.to_bits(),
                        "{} {dtype} of {:#x}, {:#x}",
                        op.name(),
                        inp[0],
                        inp[1]
                    ),
                    (g, w) => panic!(
                        "{} on {dtype}: emitter {:?}, oracle {:?}",
                        op.name(),
                        g.is_some(),
                        w.is_ok()
                    ),
                }
            }
        }
    }
}

#[test]
fn comparisons_and_select_match_the_oracle() {
    for &pred in CmpPred::ALL {
        for dtype in DType::ALL {
            let xs = samples(dtype, 7 + pred as u64);
            let inputs: Vec<[u64; 3]> = xs
                .iter()
                .enumerate()
                .map(|(i, &x)| [x, xs[(i * 5 + 1) % xs.len()], 0])
                .collect();
            let got = run_probe(&ThreadOpKind::Cmp(pred), &[dtype, dtype], &inputs, false);
            for (i, inp) in inputs.iter().enumerate() {
                let want = eval::compare(
                    pred,
                    Scalar::from_bits(dtype, inp[0]),
                    Scalar::from_bits(dtype, inp[1]),
                );
                match (&got, want) {
                    (None, Err(_)) => break,
                    (Some(g), Ok(w)) => {
                        assert_eq!(g[i], u64::from(w), "{} {dtype} {inp:x?}", pred.name())
                    }
                    (g, w) => panic!(
                        "{} on {dtype}: emitter {:?}, oracle {:?}",
                        pred.name(),
                        g.is_some(),
                        w.is_ok()
                    ),
                }
            }
        }
    }
    let xs = samples(DType::F16, 3);
    let inputs: Vec<[u64; 3]> = xs
        .iter()
        .enumerate()
        .map(|(i, &x)| [(i % 2) as u64, x, 0x3c00])
        .collect();
    let got = run_probe(
        &ThreadOpKind::Select,
        &[DType::Bool, DType::F16, DType::F16],
        &inputs,
        false,
    )
    .expect("select");
    for (g, inp) in got.iter().zip(&inputs) {
        assert_eq!(*g, if inp[0] == 1 { inp[1] } else { inp[2] });
    }
}

#[test]
fn fma_matches_the_oracle() {
    // Both refuse the scale f8e8m0 (`binary_ops_match_the_oracle` checks).
    for dtype in DType::ALL
        .into_iter()
        .filter(|&d| d.is_float() && d != DType::F8E8M0)
    {
        let (xs, ys, zs) = (samples(dtype, 11), samples(dtype, 12), samples(dtype, 13));
        let inputs: Vec<[u64; 3]> = (0..xs.len()).map(|i| [xs[i], ys[i], zs[i]]).collect();
        let got = run_probe(&ThreadOpKind::Fma, &[dtype; 3], &inputs, false).expect("fma");
        for (i, inp) in inputs.iter().enumerate() {
            let want = eval::fma(
                Scalar::from_bits(dtype, inp[0]),
                Scalar::from_bits(dtype, inp[1]),
                Scalar::from_bits(dtype, inp[2]),
            )
            .expect("fma");
            assert_eq!(got[i], want.to_bits(), "fma {dtype} {inp:x?}");
        }
    }
}

#[test]
fn casts_match_the_oracle() {
    for from in DType::ALL {
        for to in DType::ALL {
            let xs = samples(from, 21 + from as u64 * 16 + to as u64);
            let inputs: Vec<[u64; 3]> = xs.iter().map(|&x| [x, 0, 0]).collect();
            let got = run_probe(&ThreadOpKind::Cast { to }, &[from], &inputs, false)
                .expect("casts are total");
            for (i, &x) in xs.iter().enumerate() {
                let want = eval::cast(Scalar::from_bits(from, x), to).to_bits();
                assert_eq!(got[i], want, "cast {x:#x} from {from} to {to}");
            }
        }
    }
}

/// bf16 and f16 → f32 and f64 of every bit pattern (subnormals, infinities
/// and NaN payloads among them), NaNs canonical: bf16 as the upper half of
/// the f32's bits, f16 by the conversion instruction where the target has
/// one (the probe's host: `Target::converts_f16`) and by integer arithmetic
/// where it has not.
#[test]
fn sixteen_bit_floats_widen_like_the_oracle_for_every_bit_pattern() {
    let inputs: Vec<[u64; 3]> = (0..=u64::from(u16::MAX)).map(|x| [x, 0, 0]).collect();
    for from in [DType::BF16, DType::F16] {
        for to in [DType::F32, DType::F64] {
            let got = run_probe(&ThreadOpKind::Cast { to }, &[from], &inputs, false)
                .expect("casts are total");
            for (g, x) in got.iter().zip(&inputs) {
                let want = eval::cast(Scalar::from_bits(from, x[0]), to).to_bits();
                assert_eq!(*g, want, "cast {:#x} from {from} to {to}", x[0]);
            }
        }
    }
}

/// f32 → f16 where rounding decides: every f16 value's f32 neighbourhood
/// (itself, the midpoints to the next f16 and one f32 ulp either side of
/// them), across subnormals, the overflow threshold and NaN payloads. Most
/// targets round with an instruction here (`Target::converts_f16`).
#[test]
fn f32_to_f16_rounds_like_the_oracle_at_every_boundary() {
    let mut xs: Vec<u64> = Vec::new();
    for h in 0u16..0x7c00 {
        let (lo, hi) = (half_to_f32(h), half_to_f32(h + 1));
        let mid = f32::midpoint(lo, hi).to_bits();
        for bits in [lo.to_bits(), mid - 1, mid, mid + 1] {
            xs.extend([u64::from(bits), u64::from(bits | 0x8000_0000)]);
        }
    }
    xs.extend([
        0x7f80_0000,
        0x7f80_0001,
        0x7fc0_0000,
        0xffc1_2345,
        0x7fbf_ffff,
    ]);
    let inputs: Vec<[u64; 3]> = xs.iter().map(|&x| [x, 0, 0]).collect();
    let cast = ThreadOpKind::Cast { to: DType::F16 };
    let got = run_probe(&cast, &[DType::F32], &inputs, false).expect("casts are total");
    for (&x, &got) in xs.iter().zip(&got) {
        let want = eval::cast(Scalar::from_bits(DType::F32, x), DType::F16).to_bits();
        assert_eq!(got, want, "cast {x:#010x} from f32 to f16");
    }
}

/// f32 → bf16 where rounding decides: every bf16 value's f32 neighbourhood
/// (itself, the midpoint to the next bf16 and one f32 ulp either side of
/// it), across subnormals, the overflow threshold and NaN payloads.
#[test]
fn f32_to_bf16_rounds_like_the_oracle_at_every_boundary() {
    let mut xs: Vec<u64> = Vec::new();
    for h in 0u32..0x7f80 {
        let (lo, mid) = (h << 16, h << 16 | 0x8000);
        for bits in [lo, mid - 1, mid, mid + 1] {
            xs.extend([u64::from(bits), u64::from(bits | 0x8000_0000)]);
        }
    }
    xs.extend([
        0x7f80_0000,
        0x7f80_0001,
        0x7fc0_0000,
        0xffc1_2345,
        0x7fbf_ffff,
        0x7fff_ffff,
    ]);
    let inputs: Vec<[u64; 3]> = xs.iter().map(|&x| [x, 0, 0]).collect();
    let cast = ThreadOpKind::Cast { to: DType::BF16 };
    let got = run_probe(&cast, &[DType::F32], &inputs, false).expect("casts are total");
    for (&x, &got) in xs.iter().zip(&got) {
        let want = eval::cast(Scalar::from_bits(DType::F32, x), DType::BF16).to_bits();
        assert_eq!(got, want, "cast {x:#010x} from f32 to bf16");
    }
}

/// The f16 of `bits` as an f32 (exact; `bits` is finite).
fn half_to_f32(bits: u16) -> f32 {
    let (exp, man) = (i32::from(bits >> 10), f32::from(bits & 0x3ff));
    match exp {
        0 => man * 2f32.powi(-24),
        _ => (1.0 + man / 1024.0) * 2f32.powi(exp - 15),
    }
}

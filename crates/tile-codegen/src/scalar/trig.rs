//! sin, cos and tan of the exact library: Cody–Waite reduction by π/2 in four
//! parts below 2^19, Payne–Hanek with 288 bits of 2/π up to 2^140 and with
//! 1,200 bits beyond (a loop over them in a function of its own, `tile.math.reduce_huge.f64`,
//! so the common path does not pay for it), Taylor polynomials of the
//! reduced argument, and the quadrant's choice between them, which the fast
//! library (`fast_math.rs`) shares.

use super::ScalarEmitter;
use crate::EmitError;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::module::Linkage;
use inkwell::values::{FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};

/// 2/π in 24-bit chunks: chunk i weighs 2^(-24(i+1)). Computed exactly
/// (Machin's formula in integers); the reduction of |x| < 2^e needs the
/// chunks down to about 2^(e−180), so the first 12 (288 bits) serve every
/// argument below 2^140 and all 50 (1,200 bits) every finite f64.
const TWO_OVER_PI: [u32; 50] = [
    0xa2f983, 0x6e4e44, 0x1529fc, 0x2757d1, 0xf534dd, 0xc0db62, 0x95993c, 0x439041, 0xfe5163,
    0xabdebb, 0xc561b7, 0x246e3a, 0x424dd2, 0xe00649, 0x2eea09, 0xd1921c, 0xfe1deb, 0x1cb129,
    0xa73ee8, 0x8235f5, 0x2ebb44, 0x84e99c, 0x7026b4, 0x5f7e41, 0x3991d6, 0x398353, 0x39f49c,
    0x845f8b, 0xbdf928, 0x3b1ff8, 0x97ffde, 0x05980f, 0xef2f11, 0x8b5a0a, 0x6d1f6d, 0x367ecf,
    0x27cb09, 0xb74f46, 0x3f669e, 0x5fea2d, 0x7527ba, 0xc7ebe5, 0xf17b3d, 0x0739f7, 0x8a5292,
    0xea6bfb, 0x5fb11f, 0x8d5d08, 0x560330, 0x46fc7b,
];

/// How many chunks of [`TWO_OVER_PI`] reduce arguments below [`HUGE_ARGUMENT`].
const LARGE_CHUNKS: usize = 12;

/// Arguments from this magnitude (2^140) on take every chunk of 2/π.
const HUGE_ARGUMENT: f64 = f64::from_bits(0x48b0_0000_0000_0000);

/// The huge path scales `x` by 2^−HUGE_SCALE and the chunks by 2^HUGE_SCALE,
/// so neither the split of `x` overflows nor the last chunk underflows.
const HUGE_SCALE: i32 = 400;

/// Arguments from this magnitude on use the Payne–Hanek reduction.
const LARGE_ARGUMENT: f64 = 524_288.0;

/// π/2 in four parts of 33 bits (fdlibm's pio2_1, pio2_2, pio2_3, pio2_3t):
/// `k · part` is exact for |k| < 2^20.
const PIO2: [u64; 4] = [
    0x3ff9_21fb_5440_0000,
    0x3dd0_b461_1a60_0000,
    0x3ba3_198a_2e00_0000,
    0x397b_839a_2520_49c1,
];

/// `1/n!` for `n` in `0..count`.
pub(super) fn inverse_factorials(count: u32) -> Vec<f64> {
    let mut out = Vec::new();
    let mut factorial = 1.0f64;
    for n in 0..count {
        if n > 0 {
            factorial *= f64::from(n);
        }
        out.push(1.0 / factorial);
    }
    out
}

/// The first `terms` coefficients of sin and cos as series in `r²`:
/// sin r = r·Σ (-1)^i r^(2i)/(2i+1)!, cos r = Σ (-1)^i r^(2i)/(2i)!.
pub(super) fn sin_cos_series(terms: usize) -> (Vec<f64>, Vec<f64>) {
    let inverse = inverse_factorials(2 * terms as u32);
    let term = |n: usize| {
        if (n / 2).is_multiple_of(2) {
            inverse[n]
        } else {
            -inverse[n]
        }
    };
    (
        (0..terms).map(|i| term(2 * i + 1)).collect(),
        (0..terms).map(|i| term(2 * i)).collect(),
    )
}

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// sin x or cos x.
    pub(super) fn sin_cos(
        &self,
        x: FloatValue<'ctx>,
        cos: bool,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let (k, s, c) = self.reduced_sin_cos(x)?;
        let v = self.in_quadrant(k, cos, s, c)?;
        // sin(±0) = ±0.
        let v = if cos { v } else { self.keep_zero(x, v)? };
        self.nan_unless_finite(x, v)
    }

    /// tan x: `sin r / cos r` in even quadrants, `−cos r / sin r` in odd
    /// ones, each within an ulp or two (|r| ≤ π/4 keeps the divisor away
    /// from 0 except where tan x is huge, and there `sin r` is accurate
    /// relative to `r`).
    pub(super) fn tan(&self, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>, EmitError> {
        let (k, s, c) = self.reduced_sin_cos(x)?;
        let v = self.tan_in_quadrant(k, s, c)?;
        let v = self.keep_zero(x, v)?;
        self.nan_unless_finite(x, v)
    }

    /// tan x from `s = sin r` and `c = cos r` of `r = x − k·π/2`: `s/c`
    /// for an even `k`, `−c/s` for an odd one (either float type).
    pub(super) fn tan_in_quadrant(
        &self,
        k: IntValue<'ctx>,
        s: FloatValue<'ctx>,
        c: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let it = k.get_type();
        let odd = b.build_int_compare(
            IntPredicate::NE,
            b.build_and(k, it.const_int(1, false), "odd")?,
            it.const_zero(),
            "odd",
        )?;
        let even_quotient = b.build_float_div(s, c, "tan")?;
        let odd_quotient = b.build_float_div(b.build_float_neg(c, "nc")?, s, "cot")?;
        self.select_f(odd, odd_quotient, even_quotient)
    }

    /// `(k mod 4, sin r, cos r)` of `x = k·π/2 + r`, |r| ≤ π/4, by the
    /// reduction fitting |x| (module doc).
    fn reduced_sin_cos(
        &self,
        x: FloatValue<'ctx>,
    ) -> Result<(IntValue<'ctx>, FloatValue<'ctx>, FloatValue<'ctx>), EmitError> {
        let b = &self.b;
        let i64t = self.ctx.i64_type();
        let k = self.float_intrinsic(
            "llvm.rint",
            &[b.build_float_mul(x, self.c(std::f64::consts::FRAC_2_PI), "xk")?],
        )?;
        let mut r = x;
        for part in PIO2 {
            r = self.fma3(k, self.c(-f64::from_bits(part)), r)?;
        }
        let magnitude = self.float_intrinsic("llvm.fabs", &[x])?;
        let (k_big, r_big) = self.reduce_by_chunks(x, &TWO_OVER_PI[..LARGE_CHUNKS], 0)?;
        let large = self.fcmp(FloatPredicate::OGE, magnitude, self.c(LARGE_ARGUMENT))?;
        let k = self.select_f(large, k_big, k)?;
        let r = self.select_f(large, r_big, r)?;
        let (k_huge, r_huge) = self.reduce_huge(x)?;
        let huge = self.fcmp(FloatPredicate::OGE, magnitude, self.c(HUGE_ARGUMENT))?;
        let k = self.select_f(huge, k_huge, k)?;
        let r = self.select_f(huge, r_huge, r)?;
        let r2 = b.build_float_mul(r, r, "r2")?;
        let (sin_c, cos_c) = sin_cos_series(10);
        let s = b.build_float_mul(r, self.poly(r2, &sin_c)?, "sin")?;
        let c = self.poly(r2, &cos_c)?;
        // k mod 4, exact in f64 (a huge k is a multiple of 4).
        let k4 = b.build_float_mul(
            self.float_intrinsic("llvm.floor", &[b.build_float_mul(k, self.c(0.25), "k4")?])?,
            self.c(4.0),
            "k4f",
        )?;
        let ki = b.build_float_to_signed_int(b.build_float_sub(k, k4, "kmod")?, i64t, "ki")?;
        Ok((ki, s, c))
    }

    /// `v`, or `x` itself where `x` is ±0 (an odd function's signed zero).
    fn keep_zero(
        &self,
        x: FloatValue<'ctx>,
        v: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let zero = self.fcmp(FloatPredicate::OEQ, x, self.c(0.0))?;
        self.select_f(zero, x, v)
    }

    /// `v` for a finite `x`; NaN for ±∞ and NaN.
    fn nan_unless_finite(
        &self,
        x: FloatValue<'ctx>,
        v: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let finite = self.fcmp(
            FloatPredicate::OLT,
            self.float_intrinsic("llvm.fabs", &[x])?,
            self.c(f64::INFINITY),
        )?;
        self.select_f(finite, v, self.c(f64::NAN))
    }

    /// sin x (or cos x, `cos`) from `s = sin r` and `c = cos r` of the
    /// reduced argument `r = x − k·π/2`, `k` an integer of any width: with
    /// `q = k mod 4` (+1 for cos), 0 → s, 1 → c, 2 → −s, 3 → −c.
    pub(super) fn in_quadrant(
        &self,
        k: IntValue<'ctx>,
        cos: bool,
        s: FloatValue<'ctx>,
        c: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let it = k.get_type();
        let q = if cos {
            b.build_int_add(k, it.const_int(1, false), "kc")?
        } else {
            k
        };
        let bit = |mask: u64, name: &str| {
            b.build_int_compare(
                IntPredicate::NE,
                b.build_and(q, it.const_int(mask, false), name)?,
                it.const_zero(),
                name,
            )
        };
        let (odd, negate) = (bit(1, "odd")?, bit(2, "neg")?);
        let v = self.select_f(odd, c, s)?;
        let nv = b.build_float_neg(v, "nv")?;
        self.select_f(negate, nv, v)
    }

    /// `(k, r)` of [`Self::reduce_by_chunks`] with every chunk of 2/π, for
    /// |x| ≥ 2^140 (other arguments give `(0, 0)`): a call of the module's
    /// internal `tile.math.reduce_huge.f64`, which branches around the work.
    fn reduce_huge(
        &self,
        x: FloatValue<'ctx>,
    ) -> Result<(FloatValue<'ctx>, FloatValue<'ctx>), EmitError> {
        const NAME: &str = "tile.math.reduce_huge.f64";
        let f64t = self.ctx.f64_type();
        let pair = self.ctx.struct_type(&[f64t.into(), f64t.into()], false);
        let f = match self.module.get_function(NAME) {
            Some(f) => f,
            None => {
                let f = self.module.add_function(
                    NAME,
                    pair.fn_type(&[f64t.into()], false),
                    Some(Linkage::Internal),
                );
                // Kept out of its caller, whatever the inliner's costs say:
                // the common path need not hold its registers.
                let noinline = Attribute::get_named_enum_kind_id("noinline");
                f.add_attribute(
                    AttributeLoc::Function,
                    self.ctx.create_enum_attribute(noinline, 0),
                );
                let e = self.nested();
                let b = &e.b;
                let entry = self.ctx.append_basic_block(f, "entry");
                let work = self.ctx.append_basic_block(f, "huge");
                let skip = self.ctx.append_basic_block(f, "skip");
                b.position_at_end(entry);
                let x = f
                    .get_nth_param(0)
                    .ok_or_else(|| EmitError::internal("reduce_huge parameter"))?
                    .into_float_value();
                let magnitude = e.float_intrinsic("llvm.fabs", &[x])?;
                // Unordered: NaN skips too (its result is selected away).
                let small = e.fcmp(FloatPredicate::ULT, magnitude, e.c(HUGE_ARGUMENT))?;
                b.build_conditional_branch(small, skip, work)?;
                b.position_at_end(skip);
                b.build_return(Some(&pair.const_zero()))?;
                b.position_at_end(work);
                let (k, r) = e.reduce_by_chunks_looped(f, x)?;
                let v = b.build_insert_value(pair.get_undef(), k, 0, "k")?;
                let v = b.build_insert_value(v, r, 1, "kr")?;
                b.build_return(Some(&v))?;
                f
            }
        };
        let v = self
            .b
            .build_call(f, &[x.into()], "huge")?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| EmitError::internal("reduce_huge returned nothing"))?
            .into_struct_value();
        let field = |i: u32, name: &str| -> Result<FloatValue<'ctx>, EmitError> {
            Ok(self.b.build_extract_value(v, i, name)?.into_float_value())
        };
        Ok((field(0, "k_huge")?, field(1, "r_huge")?))
    }

    /// `x = k·π/2 + r` with |r| ≤ π/4 for large |x|: `x·2/π` summed exactly
    /// mod 4 from products with the 24-bit `chunks` of 2/π (`x` split in
    /// halves of 26 bits so every product is exact), in double-double. `x`
    /// is scaled by 2^−scale and the chunks by 2^scale, which keeps the
    /// products' values and every intermediate finite and normal.
    fn reduce_by_chunks(
        &self,
        x: FloatValue<'ctx>,
        chunks: &[u32],
        scale: i32,
    ) -> Result<(FloatValue<'ctx>, FloatValue<'ctx>), EmitError> {
        let (xh, xl) = self.split(x, scale)?;
        let (mut hi, mut lo) = (self.c(0.0), self.c(0.0));
        for (i, &chunk) in chunks.iter().enumerate() {
            let weight = (2f64).powi(scale - 24 * (i as i32 + 1));
            let c = self.c(f64::from(chunk) * weight);
            (hi, lo) = self.add_chunk((xh, xl), c, (hi, lo))?;
        }
        self.k_and_r(hi, lo)
    }

    /// [`Self::reduce_by_chunks`] with every chunk of 2/π, scaled by
    /// 2^−[`HUGE_SCALE`], as a loop over the chunks in `f`, which is kept
    /// rolled: unrolled, the products of all 50 chunks (independent of the
    /// sums) are computed ahead of the sums and live at once, and the
    /// function spilled 1.5 KB on sm_80. The same operations in the same
    /// order as the unrolled form, so the same result.
    fn reduce_by_chunks_looped(
        &self,
        f: inkwell::values::FunctionValue<'ctx>,
        x: FloatValue<'ctx>,
    ) -> Result<(FloatValue<'ctx>, FloatValue<'ctx>), EmitError> {
        let b = &self.b;
        let (i32t, f64t) = (self.ctx.i32_type(), self.ctx.f64_type());
        let (xh, xl) = self.split(x, HUGE_SCALE)?;
        let pre = self.current_block_of()?;
        let head = self.ctx.append_basic_block(f, "chunks");
        let done = self.ctx.append_basic_block(f, "chunks.done");
        b.build_unconditional_branch(head)?;
        b.position_at_end(head);
        let i = b.build_phi(i32t, "i")?;
        let weight = b.build_phi(f64t, "weight")?;
        let hi = b.build_phi(f64t, "hi")?;
        let lo = b.build_phi(f64t, "lo")?;
        let first = (2f64).powi(HUGE_SCALE - 24);
        i.add_incoming(&[(&i32t.const_zero(), pre)]);
        weight.add_incoming(&[(&self.c(first), pre)]);
        hi.add_incoming(&[(&self.c(0.0), pre)]);
        lo.add_incoming(&[(&self.c(0.0), pre)]);
        let iv = i.as_basic_value().into_int_value();
        let wv = weight.as_basic_value().into_float_value();
        // Chunk `i` of 2/π, chosen among the constants.
        let mut chunk = i32t.const_int(u64::from(TWO_OVER_PI[0]), false);
        for (n, &bits) in TWO_OVER_PI.iter().enumerate().skip(1) {
            let at =
                b.build_int_compare(IntPredicate::EQ, iv, i32t.const_int(n as u64, false), "at")?;
            let value = i32t.const_int(u64::from(bits), false);
            chunk = b.build_select(at, value, chunk, "chunk")?.into_int_value();
        }
        let c = b.build_float_mul(
            b.build_unsigned_int_to_float(chunk, f64t, "chunkf")?,
            wv,
            "c",
        )?;
        let (new_hi, new_lo) = self.add_chunk(
            (xh, xl),
            c,
            (
                hi.as_basic_value().into_float_value(),
                lo.as_basic_value().into_float_value(),
            ),
        )?;
        let next = b.build_int_add(iv, i32t.const_int(1, false), "next")?;
        let next_weight = b.build_float_mul(wv, self.c((2f64).powi(-24)), "w")?;
        let more = b.build_int_compare(
            IntPredicate::ULT,
            next,
            i32t.const_int(TWO_OVER_PI.len() as u64, false),
            "more",
        )?;
        let latch = self.current_block_of()?;
        i.add_incoming(&[(&next, latch)]);
        weight.add_incoming(&[(&next_weight, latch)]);
        hi.add_incoming(&[(&new_hi, latch)]);
        lo.add_incoming(&[(&new_lo, latch)]);
        let back = b.build_conditional_branch(more, head, done)?;
        crate::unroll::disable_unrolling(self.ctx, back);
        b.position_at_end(done);
        self.k_and_r(new_hi, new_lo)
    }

    /// `x` scaled by 2^−scale and split in halves of 26 bits (Veltkamp), so
    /// that its products with 24-bit chunks are exact.
    fn split(
        &self,
        x: FloatValue<'ctx>,
        scale: i32,
    ) -> Result<(FloatValue<'ctx>, FloatValue<'ctx>), EmitError> {
        let b = &self.b;
        let xs = b.build_float_mul(x, self.c((2f64).powi(-scale)), "xs")?;
        let t = b.build_float_mul(xs, self.c(134_217_729.0), "t")?;
        let xh = b.build_float_sub(t, b.build_float_sub(t, xs, "tx")?, "xh")?;
        let xl = b.build_float_sub(xs, xh, "xl")?;
        Ok((xh, xl))
    }

    /// The double-double `(hi, lo)` plus `x·c` mod 4 for each half of `x`
    /// in turn (each product exact), by TwoSum.
    fn add_chunk(
        &self,
        (xh, xl): (FloatValue<'ctx>, FloatValue<'ctx>),
        c: FloatValue<'ctx>,
        (mut hi, mut lo): (FloatValue<'ctx>, FloatValue<'ctx>),
    ) -> Result<(FloatValue<'ctx>, FloatValue<'ctx>), EmitError> {
        let b = &self.b;
        for part in [xh, xl] {
            // v minus a multiple of 4 toward zero: exact, |result| < 4 with
            // v's sign (a floor would add 4 to small negative values and
            // round).
            let v = b.build_float_mul(part, c, "p")?;
            let q =
                self.float_intrinsic("llvm.trunc", &[b.build_float_mul(v, self.c(0.25), "q")?])?;
            let q = self.fma3(q, self.c(-4.0), v)?;
            let (s, err) = self.two_sum(hi, q)?;
            hi = s;
            lo = b.build_float_add(lo, err, "lo")?;
        }
        Ok((hi, lo))
    }

    /// `(k, r)` from the double-double `x·2/π mod 4 = hi + lo`.
    fn k_and_r(
        &self,
        hi: FloatValue<'ctx>,
        lo: FloatValue<'ctx>,
    ) -> Result<(FloatValue<'ctx>, FloatValue<'ctx>), EmitError> {
        let b = &self.b;
        // |hi| < 4·2·chunks: k is an exact integer and hi - k exact; the caller
        // takes k mod 4.
        let k = self.float_intrinsic("llvm.rint", &[hi])?;
        let f = b.build_float_add(b.build_float_sub(hi, k, "f")?, lo, "flo")?;
        let r = self.fma3(
            f,
            self.c(f64::from_bits(PIO2[0])),
            b.build_float_mul(
                f,
                self.c(f64::from_bits(PIO2[1]) + f64::from_bits(PIO2[2])),
                "rl",
            )?,
        )?;
        Ok((k, r))
    }
}

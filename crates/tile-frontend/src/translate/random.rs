//! Counter-based random numbers: `rand(seed, offsets)`,
//! `randint(seed, offsets)` and `randn(seed, offsets)`, Philox 4x32-10
//! (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) as
//! Triton's `tl.rand`, `tl.randint` and `tl.randn` compute it. They are
//! compositions of elementwise integer ops, so every stage runs them as is.
//!
//! The key is the seed's 64 bits (a signed seed sign-extended): `k0` its low
//! word, `k1` its high word. The counter is `(offset, 0, 0, 0)` for offsets
//! of at most 32 bits, as in Triton, and `(low, high, 0, 0)` for 64-bit
//! offsets. There Triton switches to Philox 4x64, so 64-bit offsets draw
//! other numbers than Triton's; here an offset below 2^32 draws the same
//! whatever its dtype. Narrower offsets convert as Rust's `as u32` does.
//! Each of the ten rounds, with `mulhilo(m, x)` the high and low words of the
//! 64-bit product (a `u64` multiply and a shift):
//!
//! ```text
//! (hi0, lo0) = mulhilo(0xD2511F53, c0)      (hi1, lo1) = mulhilo(0xCD9E8D57, c2)
//! (c0, c1, c2, c3) = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0)
//! (k0, k1) = (k0 + 0x9E3779B9, k1 + 0xBB67AE85)
//! ```
//!
//! `randint` is the first output word as `u32`. `rand` maps it as Triton
//! does, `x = w as i32; (if x < 0 { !x } else { x }) as f32 * 2^-31`, then
//! clamps the result to the largest `f32` below 1: Triton returns exactly
//! 1.0 for the 128 words `0x7fffffc0..=0x8000003f` (one draw in 2^25),
//! which breaks `[0, 1)`; elsewhere the two agree bit for bit. `randn` is
//! the cosine half of Box–Muller on the first two words mapped without the
//! clamp, `sqrt(-2 ln max(u1, 1e-7)) * cos(2π u2)`, as Triton, rounded as
//! this device's `ln`, `sqrt` and `cos` round (Triton's are approximate).

use super::{Translator, Val};
use quote::ToTokens;
use syn::{Expr, ExprCall};
use tile_ir::{BinaryOp, CmpPred, DType, Scalar, Type, UnaryOp, Value};

/// The multiplier of counter word 0 in a round.
const ROUND_A: u32 = 0xD251_1F53;
/// The multiplier of counter word 2 in a round.
const ROUND_B: u32 = 0xCD9E_8D57;
/// The increment of key word 0 after a round (the golden ratio).
const KEY_A: u32 = 0x9E37_79B9;
/// The increment of key word 1 after a round (`sqrt(3) - 1`).
const KEY_B: u32 = 0xBB67_AE85;
/// The number of rounds.
const ROUNDS: usize = 10;
/// `2^-31`, Triton's `4.656613e-10` rounded to `f32`.
const TWO_TO_MINUS_31: f32 = 4.656_613e-10;
/// The largest `f32` below 1.
const BELOW_ONE: f32 = 0.999_999_94;

/// The four 32-bit words of a Philox counter or output.
type Words = [Value; 4];

impl Translator<'_> {
    /// Lowers `rand`, `randint` or `randn` (`name`) of `(seed, offsets)`.
    pub(crate) fn random_call(
        &mut self,
        name: &str,
        c: &ExprCall,
        args: &[&Expr],
    ) -> syn::Result<Val> {
        let a = self.argn(args, 2, &format!("{name}(seed, offsets)"), c)?;
        let counter = self.philox_counter(a[1], name)?;
        let key = self.philox_key(a[0], counter[0], name)?;
        let out = self.philox(counter, key, c)?;
        let v = match name {
            "randint" => out[0],
            "rand" => self.uniform(out[0], c)?,
            _ => self.normal(out[0], out[1], c)?,
        };
        Ok(Val::Ir(v))
    }

    /// The counter of the offsets `e`: `(offset, 0, 0, 0)`, or the low and
    /// high words of a 64-bit offset first.
    fn philox_counter(&mut self, e: &Expr, name: &str) -> syn::Result<Words> {
        let v = self.expr(e)?;
        let off = self.data(&v, None, e)?;
        let d = self.ty(off).dtype();
        if !d.is_int() {
            return Err(self.err(
                e,
                format!(
                    "the offsets of `{name}` must be integers (a tile or a scalar), found {}",
                    self.ty(off)
                ),
            ));
        }
        let zero = self.splat(Scalar::U32(0), off, e)?;
        if d.bits() <= 32 {
            let c0 = self.ir(e, |b| b.cast(off, DType::U32))?;
            return Ok([c0, zero, zero, zero]);
        }
        let wide = self.ir(e, |b| b.cast(off, DType::U64))?;
        let (c1, c0) = self.split_u64(wide, e)?;
        Ok([c0, c1, zero, zero])
    }

    /// The key words of the seed `e`, in the shape of `like`.
    fn philox_key(&mut self, e: &Expr, like: Value, name: &str) -> syn::Result<[Value; 2]> {
        let v = self.expr(e)?;
        let seed = match v {
            Val::Int(i) => {
                let s = u64::try_from(i)
                    .ok()
                    .or_else(|| i64::try_from(i).ok().map(|s| s as u64))
                    .ok_or_else(|| {
                        self.err(e, format!("the seed {i} does not fit in 64 bits"))
                    })?;
                self.ir(e, |b| b.constant(Scalar::U64(s)))?
            }
            Val::Ir(x) if matches!(self.ty(x), Type::Scalar(d) if d.is_int()) => {
                self.ir(e, |b| b.cast(x, DType::U64))?
            }
            other => {
                return Err(self.err(
                    e,
                    format!(
                        "the seed of `{name}` must be an integer scalar (i32, i64, u32, u64 or a constant), found {}",
                        self.describe(&other)
                    ),
                ))
            }
        };
        let (hi, lo) = self.split_u64(seed, e)?;
        Ok([self.like(lo, like, e)?, self.like(hi, like, e)?])
    }

    /// The high and low `u32` words of a `u64` value.
    fn split_u64(&mut self, x: Value, node: &dyn ToTokens) -> syn::Result<(Value, Value)> {
        let lo = self.ir(node, |b| b.cast(x, DType::U32))?;
        let shift = self.splat(Scalar::U64(32), x, node)?;
        let high = self.ir(node, |b| b.binary(BinaryOp::Shr, x, shift))?;
        let hi = self.ir(node, |b| b.cast(high, DType::U32))?;
        Ok((hi, lo))
    }

    /// The ten rounds of Philox 4x32 on `c` with the key `k`.
    fn philox(
        &mut self,
        mut c: Words,
        mut k: [Value; 2],
        node: &dyn ToTokens,
    ) -> syn::Result<Words> {
        for round in 0..ROUNDS {
            if round > 0 {
                k[0] = self.add_const(k[0], KEY_A, node)?;
                k[1] = self.add_const(k[1], KEY_B, node)?;
            }
            c = self.philox_round(c, k, node)?;
        }
        Ok(c)
    }

    /// One Philox 4x32 round.
    fn philox_round(&mut self, c: Words, k: [Value; 2], node: &dyn ToTokens) -> syn::Result<Words> {
        let (hi0, lo0) = self.mul_hi_lo(ROUND_A, c[0], node)?;
        let (hi1, lo1) = self.mul_hi_lo(ROUND_B, c[2], node)?;
        let c0 = self.xor3(hi1, c[1], k[0], node)?;
        let c2 = self.xor3(hi0, c[3], k[1], node)?;
        Ok([c0, lo1, c2, lo0])
    }

    /// `a ^ b ^ c`.
    fn xor3(&mut self, a: Value, b: Value, c: Value, node: &dyn ToTokens) -> syn::Result<Value> {
        let ab = self.ir(node, |bld| bld.binary(BinaryOp::Xor, a, b))?;
        self.ir(node, |bld| bld.binary(BinaryOp::Xor, ab, c))
    }

    /// `x + k`, wrapping, for a `u32` value `x`.
    fn add_const(&mut self, x: Value, k: u32, node: &dyn ToTokens) -> syn::Result<Value> {
        let k = self.splat(Scalar::U32(k), x, node)?;
        self.ir(node, |b| b.binary(BinaryOp::Add, x, k))
    }

    /// The high and low words of the 64-bit product `m * x` of `u32`s.
    fn mul_hi_lo(&mut self, m: u32, x: Value, node: &dyn ToTokens) -> syn::Result<(Value, Value)> {
        let wide = self.ir(node, |b| b.cast(x, DType::U64))?;
        let m = self.splat(Scalar::U64(m.into()), wide, node)?;
        let product = self.ir(node, |b| b.binary(BinaryOp::Mul, wide, m))?;
        self.split_u64(product, node)
    }

    /// Triton's map of a random word to `f32` in `[0, 1]`.
    fn unit_float(&mut self, w: Value, node: &dyn ToTokens) -> syn::Result<Value> {
        let x = self.ir(node, |b| b.cast(w, DType::I32))?;
        let zero = self.splat(Scalar::I32(0), x, node)?;
        let negative = self.ir(node, |b| b.cmp(CmpPred::Lt, x, zero))?;
        let flipped = self.ir(node, |b| b.unary(UnaryOp::Not, x))?;
        let x = self.ir(node, |b| b.select(negative, flipped, x))?;
        let f = self.ir(node, |b| b.cast(x, DType::F32))?;
        self.mul_const(f, TWO_TO_MINUS_31, node)
    }

    /// `rand`'s map of a random word to `f32` in `[0, 1)`.
    fn uniform(&mut self, w: Value, node: &dyn ToTokens) -> syn::Result<Value> {
        let u = self.unit_float(w, node)?;
        let below_one = self.splat(Scalar::F32(BELOW_ONE), u, node)?;
        self.ir(node, |b| b.binary(BinaryOp::Min, u, below_one))
    }

    /// `randn`'s Box–Muller map of two random words to a standard normal.
    fn normal(&mut self, w1: Value, w2: Value, node: &dyn ToTokens) -> syn::Result<Value> {
        let u1 = self.unit_float(w1, node)?;
        let u2 = self.unit_float(w2, node)?;
        let floor = self.splat(Scalar::F32(1.0e-7), u1, node)?;
        let u1 = self.ir(node, |b| b.binary(BinaryOp::Max, u1, floor))?;
        let theta = self.mul_const(u2, std::f32::consts::TAU, node)?;
        let ln = self.ir(node, |b| b.unary(UnaryOp::Log, u1))?;
        let square = self.mul_const(ln, -2.0, node)?;
        let r = self.ir(node, |b| b.unary(UnaryOp::Sqrt, square))?;
        let cos = self.ir(node, |b| b.unary(UnaryOp::Cos, theta))?;
        self.ir(node, |b| b.binary(BinaryOp::Mul, r, cos))
    }

    /// `x * k` for an `f32` value `x`.
    fn mul_const(&mut self, x: Value, k: f32, node: &dyn ToTokens) -> syn::Result<Value> {
        let k = self.splat(Scalar::F32(k), x, node)?;
        self.ir(node, |b| b.binary(BinaryOp::Mul, x, k))
    }

    /// The constant `value` in the shape of `like`: a scalar or a full tile.
    fn splat(&mut self, value: Scalar, like: Value, node: &dyn ToTokens) -> syn::Result<Value> {
        match self.ty(like).tile_shape() {
            Some(shape) => self.ir(node, |b| b.full(value, shape.dims())),
            None => self.ir(node, |b| b.constant(value)),
        }
    }

    /// The scalar `x` broadcast to the shape of `like` (as is if `like` is a
    /// scalar).
    fn like(&mut self, x: Value, like: Value, node: &dyn ToTokens) -> syn::Result<Value> {
        match self.ty(like).tile_shape() {
            Some(shape) => self.broadcast_to_shape(x, shape, node),
            None => Ok(x),
        }
    }
}

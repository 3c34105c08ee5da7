//! Rotary position embedding, forward, as Liger-Kernel computes it
//! (`liger_kernel/ops/rope.py`, `_triton_rope`): one program per token
//! rotates every query and key head in place, the first half of each head
//! against the second, `(x₁, x₂) → (x₁ cos − x₂ sin, x₂ cos + x₁ sin)`, in
//! the dtype of `cos` and `sin` (bf16). The tiles are the head counts and
//! half the head size, padded to powers of two (32 query heads, 8 key
//! heads, head 128: LLaMA-3-8B's), with Triton's default 4 warps.

use super::{bf16s, widen};
use crate::common::{max_error, timed, Inputs, Row};
use tile::{bf16, tile_kernel, Device, Error};

#[tile_kernel(
    configs(QH = 32, KH = 8, HALF = 64),
    aligned(q, k, cos, sin),
    approx_math,
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn rope<const QH: usize, const KH: usize, const HALF: usize>(
    q: &mut Tensor<bf16, 3>,
    k: &mut Tensor<bf16, 3>,
    cos: &Tensor<bf16, 2>,
    sin: &Tensor<bf16, 2>,
) {
    #[tile_fn]
    fn rotate(view: View, token: Scalar, c: Tile, s: Tile) {
        let first = view.load_masked(token, 0, 0);
        let second = view.load_masked(token, 0, 1);
        view.store_masked(first * c - second * s, token, 0, 0);
        view.store_masked(second * c + first * s, token, 0, 1);
    }
    let token = program_id(0);
    let position = token % cos.dim(0);
    let c = partition_view(cos, [1, HALF]).load_masked(position, 0);
    let s = partition_view(sin, [1, HALF]).load_masked(position, 0);
    rotate(partition_view(q, [1, QH, HALF]), token, c, s);
    rotate(partition_view(k, [1, KH, HALF]), token, c, s);
}

/// The rotation in f64 of one token's heads, the first half of each head
/// against the second; the inputs and the result are bf16.
fn reference(x: &[f32], heads: usize, hd: usize, seq: usize, cos: &[f32], sin: &[f32]) -> Vec<f64> {
    let half = hd / 2;
    let mut out = vec![0.0; x.len()];
    for (t, token) in x.chunks(heads * hd).enumerate() {
        let (c, s) = (&cos[(t % seq) * hd..], &sin[(t % seq) * hd..]);
        for h in 0..heads {
            for j in 0..half {
                let (a, b) = (
                    f64::from(token[h * hd + j]),
                    f64::from(token[h * hd + half + j]),
                );
                let (cj, sj) = (f64::from(c[j]), f64::from(s[j]));
                out[t * heads * hd + h * hd + j] = a * cj - b * sj;
                out[t * heads * hd + h * hd + half + j] = b * cj + a * sj;
            }
        }
    }
    out
}

/// Queries and keys of two sequences of 5 tokens, rotated in place.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (batch, seq, qh, kh, hd) = (2, 5, 32, 8, 128);
    let tokens = batch * seq;
    let (qs, ks) = (
        bf16s(&rng.take(tokens * qh * hd)),
        bf16s(&rng.take(tokens * kh * hd)),
    );
    let angles: Vec<f32> = rng.take(seq * hd).iter().map(|v| v * 3.0).collect();
    let cos_in = bf16s(&angles.iter().map(|a| a.cos()).collect::<Vec<f32>>());
    let sin_in = bf16s(&angles.iter().map(|a| a.sin()).collect::<Vec<f32>>());
    let cos = dev.tensor_from_slice(&cos_in, &[seq, hd])?;
    let sin = dev.tensor_from_slice(&sin_in, &[seq, hd])?;
    let fresh = |v: &[bf16], heads: usize| dev.tensor_from_slice(v, &[tokens, heads, hd]);
    let (mut q, mut k) = (fresh(&qs, qh)?, fresh(&ks, kh)?);
    let grid = [tokens as u32];
    rope::<32, 8, 64>::launch(dev, grid, (&mut q, &mut k, &cos, &sin))?;
    let (cf, sf) = (widen(&cos_in), widen(&sin_in));
    let want_q = reference(&widen(&qs), qh, hd, seq, &cf, &sf);
    let want_k = reference(&widen(&ks), kh, hd, seq, &cf, &sf);
    // In place: the timed launches rotate copies.
    let err =
        max_error(&widen(&q.to_vec()?), &want_q).max(max_error(&widen(&k.to_vec()?), &want_k));
    let (mut q2, mut k2) = (fresh(&qs, qh)?, fresh(&ks, kh)?);
    let time = timed(|| rope::<32, 8, 64>::launch(dev, grid, (&mut q2, &mut k2, &cos, &sin)))?;
    Ok(vec![Row {
        kernel: "rope".into(),
        code: dev.kernel_code(&rope::<32, 8, 64>::kernel_spec())?,
        shape: format!("{tokens} tokens, {qh}+{kh} heads of {hd} bf16"),
        // Both products and their sum rounded to bf16: 2⁻⁹ of values up
        // to 4 each.
        max_error: err,
        tolerance: 1e-2,
        time,
    }])
}

//! The seeded dropout of Triton's tutorial
//! (`python/tutorials/04-low-memory-dropout.py`, `_seeded_dropout`, read at
//! <https://github.com/triton-lang/triton/blob/7fd4724371b3a1ab786c0610df19c7683cb6a23b/python/tutorials/04-low-memory-dropout.py>):
//! no mask in memory, only a seed: element `i` is kept where
//! `rand(seed, i) > p` and scaled by `1 / (1 − p)`, zeroed elsewhere.
//! `rand` is Triton's `tl.rand`, Philox 4x32-10 of the counter `(i, 0, 0,
//! 0)` under the key of the seed, its first word mapped to `[0, 1)` (the
//! guide, "Random numbers"). Block 1024 and Triton's default 4 warps, as the
//! tutorial launches it.

use crate::common::{max_error, timed, Inputs, Row};
use tile::{tile_kernel, Device, Error};

#[tile_kernel(
    configs(BLOCK = 1024),
    num_warps = 4,
    aligned(x, output),
    approx_math,
    targets = "sm_80,sm_90a,gfx942,host"
)]
pub fn seeded_dropout<const BLOCK: usize>(
    x: &Tensor<f32>,
    output: &mut Tensor<f32>,
    p: f32,
    seed: i32,
) {
    let pid = program_id(0);
    let offsets = pid * BLOCK as i32 + iota::<i32>([BLOCK]);
    let xs = partition_view(x, [BLOCK]).load_masked(pid);
    let keep = rand(seed, offsets) > p;
    partition_view(output, [BLOCK]).store_masked(select(keep, xs / (1.0 - p), 0.0), pid);
}

/// Philox 4x32-10 (Salmon et al., SC'11) of `counter` under `key`: ten
/// rounds of two 32 × 32 → 64-bit products, the key bumped by the golden
/// ratio and `√3 − 1` after each.
pub fn philox(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (mut c, [mut k0, mut k1]) = (counter, key);
    for _ in 0..10 {
        let p0 = u64::from(0xD251_1F53u32) * u64::from(c[0]);
        let p2 = u64::from(0xCD9E_8D57u32) * u64::from(c[2]);
        c = [
            (p2 >> 32) as u32 ^ c[1] ^ k0,
            p2 as u32,
            (p0 >> 32) as u32 ^ c[3] ^ k1,
            p0 as u32,
        ];
        k0 = k0.wrapping_add(0x9E37_79B9);
        k1 = k1.wrapping_add(0xBB67_AE85);
    }
    c
}

/// `tl.rand(seed, offset)`: the first Philox word of `(offset, 0, 0, 0)`
/// under the seed sign-extended to 64 bits (low word, high word), read as
/// an `i32`, complemented when negative and scaled by 2⁻³¹ in f32.
pub fn uniform(seed: i32, offset: u32) -> f32 {
    let key = i64::from(seed) as u64;
    let word = philox([offset, 0, 0, 0], [key as u32, (key >> 32) as u32])[0] as i32;
    let magnitude = if word < 0 { !word } else { word };
    magnitude as f32 * 2f32.powi(-31)
}

/// The plain-Rust reference in f64: the kept elements scaled, the others
/// zero.
pub fn reference(x: &[f32], p: f32, seed: i32) -> Vec<f64> {
    let scale = 1.0 / (1.0 - f64::from(p));
    x.iter()
        .enumerate()
        .map(|(i, &v)| {
            let keep = uniform(seed, i as u32) > p;
            if keep {
                f64::from(v) * scale
            } else {
                0.0
            }
        })
        .collect()
}

/// Dropout of a vector that ends inside its last block, with the tutorial's
/// `p` and seed.
pub fn run(dev: &Device, rng: &mut Inputs) -> Result<Vec<Row>, Error> {
    let (n, p, seed) = (5000, 0.5f32, 123);
    let xs = rng.take(n);
    let x = dev.tensor_from_slice(&xs, &[n])?;
    let mut out = dev.zeros::<f32>(&[n])?;
    let grid = [n.div_ceil(1024) as u32];
    let time = timed(|| seeded_dropout::<1024>::launch(dev, grid, (&x, &mut out, p, seed)))?;
    Ok(vec![Row {
        kernel: "seeded_dropout".into(),
        code: dev.kernel_code(&seeded_dropout::<1024>::kernel_spec())?,
        shape: format!("[{n}] f32, p {p}, seed {seed}"),
        // A number kept or dropped otherwise than Philox says is an error of
        // the element's size (up to 4); the scaling is one approximate
        // division.
        max_error: max_error(&out.to_vec()?, &reference(&xs, p, seed)),
        tolerance: 1e-6,
        time,
    }])
}

#[cfg(test)]
mod tests {
    /// The reference is Philox 4x32-10: Random123's known-answer vectors
    /// (`kat_vectors`, philox4x32_10).
    #[test]
    fn the_reference_philox_gives_random123s_answers() {
        assert_eq!(
            super::philox([0; 4], [0; 2]),
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]
        );
        assert_eq!(
            super::philox([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]
        );
        assert_eq!(
            super::philox(
                [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
                [0xa409_3822, 0x299f_31d0]
            ),
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1]
        );
    }
}

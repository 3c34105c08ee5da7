//! Liger-Kernel's Qwen2-VL M-RoPE (`liger_kernel/ops/qwen2vl_mrope.py`,
//! `_triton_qwen2vl_mrope`, forward): the query and key heads rotated in
//! place in bf16, with cos and sin assembled from the temporal, height and
//! width sections.

use crate::{bf16s, check, expect_code, wide_bf16, Rng};
use tile::{bf16, tile_kernel, Device};

// ---------------------------------------------------------------------------
// Liger-Kernel Qwen2-VL M-RoPE (`liger_kernel/ops/qwen2vl_mrope.py`,
// `_triton_qwen2vl_mrope`, forward): one program per token; the cos and
// sin rows are assembled from the three sections (temporal, height,
// width) of `cos[3, tokens, hd]` with masked gathers, and every query
// and key head rotated in place in bf16, the heads padded to powers of
// two (Qwen2-VL-7B: 28 query heads → 32, 4 key heads, head 128,
// mrope_section [16, 24, 24]; and an odd case: 5 → 8 query heads, 3 → 4
// key heads, head 80 → padded 128, sections [8, 16, 16]). 4 warps.
// ---------------------------------------------------------------------------

#[tile_kernel(
    configs(QH = 32, KH = 4, HALF = 64, MT = 16, MH = 24),
    configs(QH = 8, KH = 4, HALF = 64, MT = 8, MH = 16),
    approx_math,
    targets = "sm_80,gfx942,host"
)]
fn qwen2vl_mrope<
    const QH: usize,
    const KH: usize,
    const HALF: usize,
    const MT: usize,
    const MH: usize,
>(
    q: &mut Tensor<bf16, 3>,
    k: &mut Tensor<bf16, 3>,
    cos: &Tensor<bf16, 3>,
    sin: &Tensor<bf16, 3>,
) {
    #[tile_fn]
    fn rotate(first: View, second: View, c: Tile, s: Tile) {
        let a = first.load_masked(0, 0, 0);
        let b = second.load_masked(0, 0, 0);
        first.store_masked(a * c - b * s, 0, 0, 0);
        second.store_masked(b * c + a * s, 0, 0, 0);
    }
    let token = program_id(0);
    let half = q.dim(2) / 2;
    let cols = iota::<i32>([1, HALF]);
    let t_mask = cols < MT;
    let h_mask = (cols >= MT) & (cols < MT + MH);
    let w_mask = (cols >= MT + MH) & (cols < half);
    let c = gather(cos, [0, token, cols], t_mask)
        + gather(cos, [1, token, cols], h_mask)
        + gather(cos, [2, token, cols], w_mask);
    let s = gather(sin, [0, token, cols], t_mask)
        + gather(sin, [1, token, cols], h_mask)
        + gather(sin, [2, token, cols], w_mask);
    let (nq, nk) = (q.dim(1), k.dim(1));
    rotate(
        partition_view(q.window([token, 0, 0], [1, nq, half]), [1, QH, HALF]),
        partition_view(q.window([token, 0, half], [1, nq, half]), [1, QH, HALF]),
        c,
        s,
    );
    rotate(
        partition_view(k.window([token, 0, 0], [1, nk, half]), [1, KH, HALF]),
        partition_view(k.window([token, 0, half], [1, nk, half]), [1, KH, HALF]),
        c,
        s,
    );
}

fn qwen2vl_mrope_run(dev: &Device) {
    // (batch, seq, query heads, key heads, head dim, sections)
    let cases = [
        (2usize, 3usize, 28usize, 4usize, 128usize, [16usize, 24, 24]),
        (1, 5, 5, 3, 80, [8, 16, 16]),
    ];
    for (case, &(bs, sl, nq, nk, hd, sec)) in cases.iter().enumerate() {
        let tokens = bs * sl;
        let mut rng = Rng::new(31 + case as u64);
        let qs = bf16s(&rng.take(tokens * nq * hd));
        let ks = bf16s(&rng.take(tokens * nk * hd));
        // cos and sin of [3, tokens, hd], the right half a copy of the left.
        let mut angles = Vec::with_capacity(3 * tokens * hd);
        for _ in 0..3 * tokens {
            let left: Vec<f32> = rng.take(hd / 2).iter().map(|v| v * 3.0).collect();
            angles.extend_from_slice(&left);
            angles.extend_from_slice(&left);
        }
        let cos_in = bf16s(&angles.iter().map(|a| a.cos()).collect::<Vec<_>>());
        let sin_in = bf16s(&angles.iter().map(|a| a.sin()).collect::<Vec<_>>());
        let cos = dev.tensor_from_slice(&cos_in, &[3, tokens, hd]).unwrap();
        let sin = dev.tensor_from_slice(&sin_in, &[3, tokens, hd]).unwrap();
        let mut q = dev.tensor_from_slice(&qs, &[tokens, nq, hd]).unwrap();
        let mut k = dev.tensor_from_slice(&ks, &[tokens, nk, hd]).unwrap();
        let grid = [tokens as u32];
        if case == 0 {
            expect_code(dev, &qwen2vl_mrope::<32, 4, 64, 16, 24>::kernel_spec());
            qwen2vl_mrope::<32, 4, 64, 16, 24>::launch(dev, grid, (&mut q, &mut k, &cos, &sin))
                .unwrap();
        } else {
            expect_code(dev, &qwen2vl_mrope::<8, 4, 64, 8, 16>::kernel_spec());
            qwen2vl_mrope::<8, 4, 64, 8, 16>::launch(dev, grid, (&mut q, &mut k, &cos, &sin))
                .unwrap();
        }
        let (cf, sf) = (wide_bf16(&cos_in), wide_bf16(&sin_in));
        let rotate = |x: &[bf16], heads: usize| -> Vec<f64> {
            let x = wide_bf16(x);
            let mut out = x.clone();
            let half = hd / 2;
            for t in 0..tokens {
                for j in 0..half {
                    let section = if j < sec[0] {
                        0
                    } else if j < sec[0] + sec[1] {
                        1
                    } else {
                        2
                    };
                    let (c, s) = (
                        cf[(section * tokens + t) * hd + j],
                        sf[(section * tokens + t) * hd + j],
                    );
                    for h in 0..heads {
                        let at = (t * heads + h) * hd + j;
                        let (a, b) = (x[at], x[at + half]);
                        out[at] = a * c - b * s;
                        out[at + half] = b * c + a * s;
                    }
                }
            }
            out
        };
        // In bf16 as Liger computes: two rounded products and a rounded
        // difference, 2⁻⁹ each, of terms ≤ 2: ≲ 1.2e-2 absolute.
        let what = format!("qwen2vl_mrope case {case}");
        check(
            &format!("{what} q"),
            dev,
            &wide_bf16(&q.to_vec().unwrap()),
            &rotate(&qs, nq),
            1.5e-2,
        );
        check(
            &format!("{what} k"),
            dev,
            &wide_bf16(&k.to_vec().unwrap()),
            &rotate(&ks, nk),
            1.5e-2,
        );
    }
}

probe!(
    qwen2vl_mrope_probe,
    qwen2vl_mrope_run,
    [qwen2vl_mrope<32, 4, 64, 16, 24>]
);

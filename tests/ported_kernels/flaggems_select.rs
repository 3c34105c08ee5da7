//! FlagGems' gathers and selects: `index_select` along the last dimension
//! (`index_select_kernel`) and `masked_fill` (`masked_fill_kernel`), each
//! from its module of `flag_gems.ops`.

use crate::{check, expect_code, f16s, wide, wide_f16, Rng};
use tile::{f16, tile_kernel, Device};

// ---------------------------------------------------------------------------
// FlagGems `index_select` along the last dimension
// (`flag_gems/ops/index_select.py`, `index_select_kernel`): a 2-D grid of
// [BLOCK_M, BLOCK_N] tiles, the i64 indices loaded per column block and
// the rows gathered at them (masked by rows). Heuristics: BLOCK_M =
// min(4, next_power_of_2(cdiv(256, N))), BLOCK_N = max(16,
// min(512, next_power_of_2(cdiv(N, 16)))); 4 warps.
// ---------------------------------------------------------------------------

#[tile_kernel(
    configs(BM = 1, BN = 32),
    configs(BM = 4, BN = 16),
    targets = "sm_80,gfx942,host"
)]
fn index_select<const BM: usize, const BN: usize>(
    inp: &Tensor<f32, 2>,
    out: &mut Tensor<f32, 2>,
    index: &Tensor<i64>,
) {
    let pid_x = program_id(0);
    let pid_y = program_id(1);
    let rows = iota::<i32>([BM, 1]) + pid_x * BM;
    let at = partition_view(index, [BN])
        .load_masked(pid_y)
        .reshape([1, BN]);
    let picked = gather(inp, [rows, at], rows < inp.dim(0));
    partition_view(out, [BM, BN]).store_masked(picked, pid_x, pid_y);
}

fn index_select_run(dev: &Device) {
    // (rows M, selected extent N, indices): N = 300 gives blocks (1, 32),
    // N = 50 gives (4, 16).
    for (case, &(m, n, len)) in [(37usize, 300usize, 77usize), (10, 50, 19)]
        .iter()
        .enumerate()
    {
        let mut rng = Rng::new(61 + case as u64);
        let xs = rng.take(m * n);
        let mut picks: Vec<i64> = (0..len).map(|_| rng.below(n) as i64).collect();
        picks[0] = (n - 1) as i64;
        picks[len - 1] = picks[1];
        let inp = dev.tensor_from_slice(&xs, &[m, n]).unwrap();
        let index = dev.tensor_from_slice(&picks, &[len]).unwrap();
        let mut out = dev.zeros::<f32>(&[m, len]).unwrap();
        let (bm, bn) = if n == 300 { (1, 32) } else { (4, 16) };
        let grid = [m.div_ceil(bm) as u32, len.div_ceil(bn) as u32];
        if bm == 1 {
            expect_code(dev, &index_select::<1, 32>::kernel_spec());
            index_select::<1, 32>::launch(dev, grid, (&inp, &mut out, &index)).unwrap();
        } else {
            expect_code(dev, &index_select::<4, 16>::kernel_spec());
            index_select::<4, 16>::launch(dev, grid, (&inp, &mut out, &index)).unwrap();
        }
        let want: Vec<f64> = (0..m)
            .flat_map(|r| picks.iter().map(move |&p| (r, p)))
            .map(|(r, p)| f64::from(xs[r * n + p as usize]))
            .collect();
        // A copy: exact.
        check(
            &format!("index_select [{m}, {n}] by {len}"),
            dev,
            &wide(&out.to_vec().unwrap()),
            &want,
            0.0,
        );
    }
}

probe!(index_select_probe, index_select_run, [index_select<1, 32>]);

// ---------------------------------------------------------------------------
// FlagGems `masked_fill` (`flag_gems/ops/masked_fill.py`,
// `masked_fill_kernel`): a bool mask tensor loaded beside the input,
// the value where it holds, the input elsewhere (Triton's two
// complementary masked stores are one `select` here). One of the
// tuning configurations: BLOCK_SIZE 1024, 4 warps.
// ---------------------------------------------------------------------------

#[tile_kernel(configs(BLOCK = 1024), targets = "sm_80,gfx942,host")]
fn masked_fill<const BLOCK: usize>(
    inp: &Tensor<f16>,
    expand_mask: &Tensor<bool>,
    value: f32,
    out: &mut Tensor<f16>,
) {
    let pid = program_id(0);
    let fill = partition_view(expand_mask, [BLOCK]).load_masked(pid);
    let cur = partition_view(inp, [BLOCK]).load_masked(pid);
    partition_view(out, [BLOCK]).store_masked(select(fill, value.cast::<f16>(), cur), pid);
}

fn masked_fill_run(dev: &Device) {
    let n = 3001usize;
    let mut rng = Rng::new(141);
    let xs = f16s(&rng.take(n));
    let mask: Vec<bool> = (0..n).map(|_| rng.below(3) == 0).collect();
    let inp = dev.tensor_from_slice(&xs, &[n]).unwrap();
    let m = dev.tensor_from_slice(&mask, &[n]).unwrap();
    let mut out = dev.zeros::<f16>(&[n]).unwrap();
    expect_code(dev, &masked_fill::<1024>::kernel_spec());
    masked_fill::<1024>::launch(
        dev,
        [n.div_ceil(1024) as u32],
        (&inp, &m, -7.25f32, &mut out),
    )
    .unwrap();
    let want: Vec<f64> = (0..n)
        .map(|i| {
            if mask[i] {
                -7.25
            } else {
                f64::from(xs[i].to_f32())
            }
        })
        .collect();
    // A copy or an exact constant.
    check(
        "masked_fill",
        dev,
        &wide_f16(&out.to_vec().unwrap()),
        &want,
        0.0,
    );
}

probe!(masked_fill_probe, masked_fill_run, [masked_fill<1024>]);

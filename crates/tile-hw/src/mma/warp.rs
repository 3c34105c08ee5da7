//! One warp's (MFMA: one wave's) tensor-core step as the emulators run it:
//! the lanes' fragments placed in matrices by the instruction's layouts
//! ([`MmaKind::element`], [`MmaKind::scale_holder`]), multiplied with the
//! arithmetic of the module docs, and D handed back by the same layouts.

use super::{Fragment, MmaKind};

/// The value a tensor-core instruction (of any emulated family) reads from
/// an operand element of `dtype` with bits `bits`: a 16-, 8-, 6- or 4-bit
/// float in the low bits, or for `f32` a TF32 value (its low 13 bits not
/// read).
pub fn operand_value(dtype: tile_ir::DType, bits: u32) -> f32 {
    use tile_ir::f8::{F8E4M3, F8E5M2};
    use tile_ir::mx::{F4E2M1, F6E2M3, F6E3M2};
    match dtype {
        tile_ir::DType::F6E2M3 => F6E2M3::from_bits(bits as u8).to_f64() as f32,
        tile_ir::DType::F6E3M2 => F6E3M2::from_bits(bits as u8).to_f64() as f32,
        tile_ir::DType::F4E2M1 => F4E2M1::from_bits(bits as u8).to_f64() as f32,
        tile_ir::DType::BF16 => half::bf16::from_bits(bits as u16).to_f32(),
        tile_ir::DType::F32 => f32::from_bits(bits & !0x1fff),
        tile_ir::DType::F8E4M3 => F8E4M3::from_bits(bits as u8).to_f32(),
        tile_ir::DType::F8E5M2 => F8E5M2::from_bits(bits as u8).to_f32(),
        _ => half::f16::from_bits(bits as u16).to_f32(),
    }
}

/// One element of a step's `D`, with the arithmetic of the module docs:
/// `c` and the `products` (`a·b` pairs, in ascending `k`) summed in `f64`
/// and rounded once to `f32`, a NaN result the canonical `f32` NaN. Every
/// tensor-core instruction the emulators model (this module's and
/// `wgmma`'s) computes its steps with it.
pub fn step_sum(c: f32, products: impl IntoIterator<Item = (f32, f32)>) -> f32 {
    rounded_sum(
        c,
        products
            .into_iter()
            .map(|(x, y)| f64::from(x) * f64::from(y)),
    )
}

/// `c` and the exact `products`, in order, summed in `f64` and rounded once
/// to `f32`; a NaN result the canonical `f32` NaN.
fn rounded_sum(c: f32, products: impl Iterator<Item = f64>) -> f32 {
    let rounded = products.fold(f64::from(c), |acc, p| acc + p) as f32;
    if rounded.is_nan() {
        f32::NAN
    } else {
        rounded
    }
}

/// One element of a block-scaled step's `D` whose `k` share one scale per
/// side: [`step_sum`] with each product times both E8M0 `scales` (bits in
/// the low byte, each `2^(e − 127)`, `0xFF` NaN), exactly, before the sum.
pub fn scaled_step_sum(
    c: f32,
    products: impl IntoIterator<Item = (f32, f32)>,
    scales: [u32; 2],
) -> f32 {
    let scale = scale_factor(scales[0]) * scale_factor(scales[1]);
    rounded_sum(
        c,
        products
            .into_iter()
            .map(|(x, y)| f64::from(x) * f64::from(y) * scale),
    )
}

/// The factor an E8M0 scale with bits `bits` (its low byte) stands for:
/// `2^(bits − 127)`, or NaN for `0xFF`.
fn scale_factor(bits: u32) -> f64 {
    match bits & 0xFF {
        0xFF => f64::NAN,
        e => 2f64.powi(e as i32 - 127),
    }
}

/// One warp's (MFMA: one wave's) instruction, from the fragments of its
/// [`MmaKind::lanes`] lanes: the `D` fragment of each lane. `a[l]`, `b[l]`
/// and `c[l]` are lane `l`'s elements (operand bits as
/// [`MmaKind::unpack`] gives them, `f32` accumulators). Fragments of
/// another count than the instruction's, an operand element that two
/// lanes hold with different bits (WMMA's replication broken), and a
/// block-scaled instruction (which takes [`warp_mma_scaled`]) are errors.
pub fn warp_mma(
    kind: MmaKind,
    a: &[Vec<u32>],
    b: &[Vec<u32>],
    c: &[Vec<f32>],
) -> Result<Vec<Vec<f32>>, String> {
    if kind.is_block_scaled() {
        return Err(format!("{} takes scales", kind.name()));
    }
    let (ma, mb, mc) = matrices(kind, a, b, c)?;
    let d = kind.step(&ma, &mb, &mc);
    Ok(fragments_of(kind, &d))
}

/// [`warp_mma`] for a block-scaled instruction: `scales[l]` is lane `l`'s
/// E8M0 scale for A and for B (the low byte of each), which scale the row
/// and the column, in the group of 32 `k`, that [`MmaKind::scale_holder`]
/// gives. Two lanes holding one scale with different bits, and an
/// instruction without block scales, are errors too.
pub fn warp_mma_scaled(
    kind: MmaKind,
    a: &[Vec<u32>],
    b: &[Vec<u32>],
    c: &[Vec<f32>],
    scales: &[[u32; 2]],
) -> Result<Vec<Vec<f32>>, String> {
    if !kind.is_block_scaled() {
        return Err(format!("{} takes no scales", kind.name()));
    }
    let (m, n, k) = kind.shape();
    let lanes = kind.lanes();
    if scales.len() != lanes {
        return Err(format!("scales of {} lanes, not {lanes}", scales.len()));
    }
    let (ma, mb, mc) = matrices(kind, a, b, c)?;
    // Each row's (column's) scale of each group of 32 `k`.
    let groups = k / 32;
    let mut held = [vec![None; m * groups], vec![None; n * groups]];
    for (lane, pair) in scales.iter().enumerate() {
        for (which, fragment) in [Fragment::A, Fragment::B].into_iter().enumerate() {
            let (at, group) = kind.scale_holder(fragment, lane);
            let bits = pair[which] & 0xFF;
            match held[which][at * groups + group] {
                Some(other) if other != bits => {
                    return Err(format!(
                        "lane {lane} holds the scale of {} {at} (group {group}) as {bits:#04x}, \
                         another lane as {other:#04x}",
                        ["row", "column"][which]
                    ))
                }
                _ => held[which][at * groups + group] = Some(bits),
            }
        }
    }
    let factor = |s: &Option<u32>| scale_factor(s.unwrap_or(127));
    let (row_scale, col_scale): (Vec<f64>, Vec<f64>) = (
        held[0].iter().map(factor).collect(),
        held[1].iter().map(factor).collect(),
    );
    let mut d = Vec::with_capacity(m * n);
    for row in 0..m {
        for col in 0..n {
            let products = (0..k).map(|kk| {
                let scale = row_scale[row * groups + kk / 32] * col_scale[col * groups + kk / 32];
                f64::from(ma[row * k + kk]) * f64::from(mb[kk * n + col]) * scale
            });
            d.push(rounded_sum(mc[row * n + col], products));
        }
    }
    Ok(fragments_of(kind, &d))
}

/// Row-major A, B and C matrices.
type Matrices = (Vec<f32>, Vec<f32>, Vec<f32>);

/// The row-major A, B and C matrices a warp's fragments hold, operands
/// read as the instruction reads them; the errors of [`warp_mma`].
fn matrices(
    kind: MmaKind,
    a: &[Vec<u32>],
    b: &[Vec<u32>],
    c: &[Vec<f32>],
) -> Result<Matrices, String> {
    let (m, n, k) = kind.shape();
    let lanes = kind.lanes();
    for (what, fragment, counts) in [
        ("A", Fragment::A, a.iter().map(Vec::len).collect::<Vec<_>>()),
        ("B", Fragment::B, b.iter().map(Vec::len).collect()),
        ("C", Fragment::C, c.iter().map(Vec::len).collect()),
    ] {
        let want = kind.elements(fragment);
        if counts.len() != lanes || counts.iter().any(|&n| n != want) {
            return Err(format!(
                "{what} fragments of {counts:?} elements, not {lanes} lanes of {want}"
            ));
        }
    }
    let mut ma: Vec<Option<u32>> = vec![None; m * k];
    let mut mb: Vec<Option<u32>> = vec![None; k * n];
    let mut mc = vec![0.0f32; m * n];
    let place = |matrix: &mut [Option<u32>], at: usize, bits: u32, lane: usize, what: &str| {
        match matrix[at] {
            Some(held) if held != bits => Err(format!(
                "lane {lane} holds {what} element {at} as {bits:#06x}, another lane as {held:#06x}"
            )),
            _ => {
                matrix[at] = Some(bits);
                Ok(())
            }
        }
    };
    for lane in 0..lanes {
        for (i, &bits) in a[lane].iter().enumerate() {
            let (row, col) = kind.element(Fragment::A, lane, i);
            place(&mut ma, row * k + col, bits, lane, "A")?;
        }
        for (i, &bits) in b[lane].iter().enumerate() {
            let (row, col) = kind.element(Fragment::B, lane, i);
            place(&mut mb, row * n + col, bits, lane, "B")?;
        }
        for (i, &v) in c[lane].iter().enumerate() {
            let (row, col) = kind.element(Fragment::C, lane, i);
            mc[row * n + col] = v;
        }
    }
    let widen = |matrix: Vec<Option<u32>>| -> Vec<f32> {
        matrix
            .into_iter()
            .map(|b| kind.operand_value(b.unwrap_or(0)))
            .collect()
    };
    Ok((widen(ma), widen(mb), mc))
}

/// Each lane's D fragment of the row-major `d`.
fn fragments_of(kind: MmaKind, d: &[f32]) -> Vec<Vec<f32>> {
    let (_, n, _) = kind.shape();
    (0..kind.lanes())
        .map(|lane| {
            (0..kind.elements(Fragment::C))
                .map(|i| {
                    let (row, col) = kind.element(Fragment::C, lane, i);
                    d[row * n + col]
                })
                .collect()
        })
        .collect()
}

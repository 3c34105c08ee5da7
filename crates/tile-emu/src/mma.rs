//! Tensor-core steps of a warp (MFMA: a 64-lane wave): the lanes'
//! registers unpacked into fragment elements (two 16-bit elements per
//! `b32` register, the lower element in the low half, or one TF32) and
//! multiplied by
//! [`tile_hw::mma::warp_mma`], which places each element by the
//! instruction set's lane layouts.

use tile_abi::emulation::{MMA_MAX_RESULTS, MMA_MAX_WORDS};
use tile_hw::mma::{warp_mma, warp_mma_scaled, Fragment, MmaKind};

/// The D registers (`f32` bits) of each lane of a warp whose lanes passed
/// `words` (A, B and C registers, then a block-scaled instruction's two
/// scale registers: [`MmaKind::words`] of them), or why the instruction
/// has no result (WMMA operands not replicated, scales that disagree).
pub(crate) fn complete(
    kind: MmaKind,
    words: &[[u32; MMA_MAX_WORDS]],
) -> Result<Vec<[u32; MMA_MAX_RESULTS]>, String> {
    let per_register = kind.per_register();
    let (ra, rb) = (
        kind.elements(Fragment::A) / per_register,
        kind.elements(Fragment::B) / per_register,
    );
    let a: Vec<Vec<u32>> = words.iter().map(|w| kind.unpack(&w[..ra])).collect();
    let b: Vec<Vec<u32>> = words.iter().map(|w| kind.unpack(&w[ra..ra + rb])).collect();
    let nc = kind.elements(Fragment::C);
    let c: Vec<Vec<f32>> = words
        .iter()
        .map(|w| {
            w[ra + rb..ra + rb + nc]
                .iter()
                .map(|&x| f32::from_bits(x))
                .collect()
        })
        .collect();
    let d = if kind.is_block_scaled() {
        let at = ra + rb + nc;
        let scales: Vec<[u32; 2]> = words.iter().map(|w| [w[at], w[at + 1]]).collect();
        warp_mma_scaled(kind, &a, &b, &c, &scales)?
    } else {
        warp_mma(kind, &a, &b, &c)?
    };
    Ok(d.into_iter()
        .map(|d| {
            let mut out = [0u32; MMA_MAX_RESULTS];
            for (o, v) in out.iter_mut().zip(d) {
                *o = v.to_bits();
            }
            out
        })
        .collect())
}

//! Tensor-core steps: each warp's fragments gathered into matrices by the
//! lane layouts of the instruction set ([`tile_abi::mma`]), multiplied, and
//! handed back by the same layouts.

use crate::program::{MmaKind, WARP_SIZE};
use tile_abi::mma::{warp_mma, Fragment};
use tile_ir::Scalar;

/// The results of `mma` for every thread of a block of `threads` threads
/// (a whole number of warps): one `Vec` per result register. `operands`
/// holds, per operand register, every thread's value.
pub(super) fn run(kind: MmaKind, operands: &[Vec<Scalar>], threads: usize) -> Vec<Vec<Scalar>> {
    let (na, nb) = (kind.elements(Fragment::A), kind.elements(Fragment::B));
    let nc = kind.elements(Fragment::C);
    let bits = |reg: &[Scalar], t: usize| reg[t].to_bits() as u16;
    let mut results = vec![vec![Scalar::F32(0.0); threads]; nc];
    let warp = WARP_SIZE as usize;
    for first in (0..threads).step_by(warp) {
        let lanes = first..first + warp;
        let a: Vec<Vec<u16>> = lanes
            .clone()
            .map(|t| operands[..na].iter().map(|r| bits(r, t)).collect())
            .collect();
        let b: Vec<Vec<u16>> = lanes
            .clone()
            .map(|t| operands[na..na + nb].iter().map(|r| bits(r, t)).collect())
            .collect();
        let c: Vec<Vec<f32>> = lanes
            .clone()
            .map(|t| {
                operands[na + nb..]
                    .iter()
                    .map(|r| f32::from_bits(r[t].to_bits() as u32))
                    .collect()
            })
            .collect();
        for (lane, d) in warp_mma(kind, &a, &b, &c).into_iter().enumerate() {
            for (i, v) in d.into_iter().enumerate() {
                results[i][first + lane] = Scalar::F32(v);
            }
        }
    }
    results
}

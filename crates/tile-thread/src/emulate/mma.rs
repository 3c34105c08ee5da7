//! Tensor-core steps and matrix loads: each warp's (MFMA: each 64-lane
//! wave's) fragments gathered into matrices by the lane layouts of the
//! instruction set ([`tile_abi::mma`]), multiplied, and handed back by the
//! same layouts; `ldmatrix` rows read from the lanes that supply them and
//! handed out by its layout.

use super::{address, EmuError, EmuFault, Emulator};
use crate::program::{LdMatrix, MmaKind, OpId, SharedId, WARP_SIZE};
use tile_abi::mma::{warp_mma, Fragment};
use tile_ir::Scalar;

impl Emulator<'_> {
    /// The results of `ldmatrix` of `shape` from `alloc` for every thread,
    /// each lane's row index in `index`: one `Vec` per result register.
    pub(super) fn ldmatrix(
        &mut self,
        id: OpId,
        alloc: SharedId,
        shape: LdMatrix,
        index: &[Scalar],
    ) -> Result<Vec<Vec<Scalar>>, EmuError> {
        let dtype = self.program.shared[alloc].dtype;
        // A row is 16 bytes: 8 16-bit elements, or 4 32-bit ones, which the
        // instruction moves as pairs of 16-bit halves (low half first).
        let per_row = 16 / dtype.size_bytes();
        let per_register = per_row / 4;
        let threads = self.threads as usize;
        let count = usize::from(shape.count);
        let mut results = vec![vec![Scalar::zero(dtype); threads]; per_register * count];
        let bytes = self.shared_bytes(alloc.index());
        for first in (0..threads).step_by(WARP_SIZE as usize) {
            let mut rows = vec![[0u16; 8]; WARP_SIZE as usize];
            for (lane, row) in rows.iter_mut().enumerate().take(shape.address_lanes()) {
                let t = (first + lane) as u32;
                let start = address(index[first + lane]);
                if start.rem_euclid(per_row as i64) != 0 {
                    let fault = EmuFault::MisalignedMatrixRow {
                        alloc: alloc.index(),
                        index: start,
                    };
                    return Err(self.error(Some(id), Some(t), fault));
                }
                let halves_per_element = 8 / per_row;
                for c in 0..per_row {
                    let i = start + c as i64;
                    let v = self
                        .shared
                        .load(alloc.index(), i, t, id)
                        .map_err(|c| self.race(id, alloc.index(), i, t, false, c))?;
                    let bits = v.to_bits();
                    for h in 0..halves_per_element {
                        row[c * halves_per_element + h] = (bits >> (16 * h)) as u16;
                    }
                }
            }
            // One phase per matrix: its 8 rows of 16 bytes.
            for m in 0..count {
                let starts: Vec<i64> = (0..8).map(|r| address(index[first + 8 * m + r])).collect();
                self.stats.access(
                    bytes,
                    starts
                        .iter()
                        .flat_map(|&s| (0..per_row as i64).map(move |c| s + c)),
                );
            }
            for (lane, regs) in shape.distribute(&rows).into_iter().enumerate() {
                for (j, word) in regs.into_iter().enumerate() {
                    if per_register == 1 {
                        results[j][first + lane] = Scalar::from_bits(dtype, u64::from(word));
                        continue;
                    }
                    let half =
                        |h: u32| Scalar::from_bits(dtype, u64::from((word >> (16 * h)) & 0xffff));
                    results[2 * j][first + lane] = half(0);
                    results[2 * j + 1][first + lane] = half(1);
                }
            }
        }
        Ok(results)
    }
}

/// The results of `mma` for every thread of a block of `threads` threads
/// (a whole number of the instruction's warps or waves): one `Vec` per
/// result register. `operands` holds, per operand register, every thread's
/// value.
pub(super) fn run(
    kind: MmaKind,
    operands: &[Vec<Scalar>],
    threads: usize,
) -> Result<Vec<Vec<Scalar>>, String> {
    let (na, nb) = (kind.elements(Fragment::A), kind.elements(Fragment::B));
    let nc = kind.elements(Fragment::C);
    let bits = |reg: &[Scalar], t: usize| reg[t].to_bits() as u32;
    let mut results = vec![vec![Scalar::F32(0.0); threads]; nc];
    let warp = kind.lanes();
    for first in (0..threads).step_by(warp) {
        let lanes = first..first + warp;
        let a: Vec<Vec<u32>> = lanes
            .clone()
            .map(|t| operands[..na].iter().map(|r| bits(r, t)).collect())
            .collect();
        let b: Vec<Vec<u32>> = lanes
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
        for (lane, d) in warp_mma(kind, &a, &b, &c)?.into_iter().enumerate() {
            for (i, v) in d.into_iter().enumerate() {
                results[i][first + lane] = Scalar::F32(v);
            }
        }
    }
    Ok(results)
}

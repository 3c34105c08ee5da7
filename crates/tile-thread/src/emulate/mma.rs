//! Tensor-core steps and matrix loads: each warp's (MFMA: each 64-lane
//! wave's) fragments gathered into matrices by the lane layouts of the
//! instruction set ([`tile_hw::mma`]), multiplied, and handed back by the
//! same layouts; `ldmatrix` rows read from the lanes that supply them and
//! handed out by its layout.

use super::{address, Emulator, LockstepError, LockstepFault};
use crate::program::{LdMatrix, MmaKind, OpId, SharedId, WARP_SIZE};
use tile_hw::mma::{warp_mma, warp_mma_scaled, Fragment};
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
    ) -> Result<Vec<Vec<Scalar>>, LockstepError> {
        let dtype = self.program.shared[alloc].dtype;
        // A row is 16 bytes: 16 8-bit elements, 8 16-bit ones or 4 32-bit
        // ones, which the instruction moves as 16-bit units, little-endian.
        let size = dtype.size_bytes();
        let per_row = 16 / size;
        let per_register = 4 / size;
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
                    let fault = LockstepFault::MisalignedMatrixRow {
                        alloc: alloc.index(),
                        index: start,
                    };
                    return Err(self.error(Some(id), Some(t), fault));
                }
                let mut row_bytes = [0u8; 16];
                for c in 0..per_row {
                    let i = start + c as i64;
                    let v = self
                        .shared
                        .load(alloc.index(), i, t, id)
                        .map_err(|c| self.race(id, alloc.index(), i, t, false, c))?;
                    let le = v.to_bits().to_le_bytes();
                    row_bytes[c * size..(c + 1) * size].copy_from_slice(&le[..size]);
                }
                for (unit, pair) in row.iter_mut().zip(row_bytes.chunks_exact(2)) {
                    *unit = u16::from_le_bytes([pair[0], pair[1]]);
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
            let bits = 8 * size as u32;
            let mask = u32::MAX >> (32 - bits);
            for (lane, regs) in shape.distribute(&rows).into_iter().enumerate() {
                for (j, word) in regs.into_iter().enumerate() {
                    for e in 0..per_register {
                        let element = (word >> (bits * e as u32)) & mask;
                        results[per_register * j + e][first + lane] =
                            Scalar::from_bits(dtype, u64::from(element));
                    }
                }
            }
        }
        Ok(results)
    }
}

/// The results of `mma` for every thread of a block of `threads` threads
/// (a whole number of the instruction's warps or waves): one `Vec` per
/// result register. `operands` holds, per operand register, every thread's
/// value (A, B, C, then a block-scaled kind's two scales); each A and B
/// element goes to the instruction in its container
/// ([`MmaKind::contained`]), as the GPU emitters place it.
pub(super) fn run(
    kind: MmaKind,
    operands: &[Vec<Scalar>],
    threads: usize,
) -> Result<Vec<Vec<Scalar>>, String> {
    let (na, nb) = (kind.elements(Fragment::A), kind.elements(Fragment::B));
    let nc = kind.elements(Fragment::C);
    let bits = |reg: &[Scalar], t: usize| reg[t].to_bits() as u32;
    let element = |reg: &[Scalar], t: usize| kind.contained(bits(reg, t));
    let mut results = vec![vec![Scalar::F32(0.0); threads]; nc];
    let warp = kind.lanes();
    for first in (0..threads).step_by(warp) {
        let lanes = first..first + warp;
        let a: Vec<Vec<u32>> = lanes
            .clone()
            .map(|t| operands[..na].iter().map(|r| element(r, t)).collect())
            .collect();
        let b: Vec<Vec<u32>> = lanes
            .clone()
            .map(|t| {
                operands[na..na + nb]
                    .iter()
                    .map(|r| element(r, t))
                    .collect()
            })
            .collect();
        let c: Vec<Vec<f32>> = lanes
            .clone()
            .map(|t| {
                operands[na + nb..na + nb + nc]
                    .iter()
                    .map(|r| f32::from_bits(r[t].to_bits() as u32))
                    .collect()
            })
            .collect();
        let d = if kind.is_block_scaled() {
            let s = &operands[na + nb + nc..];
            let scales: Vec<[u32; 2]> = lanes.map(|t| [bits(&s[0], t), bits(&s[1], t)]).collect();
            warp_mma_scaled(kind, &a, &b, &c, &scales)?
        } else {
            warp_mma(kind, &a, &b, &c)?
        };
        for (lane, d) in d.into_iter().enumerate() {
            for (i, v) in d.into_iter().enumerate() {
                results[i][first + lane] = Scalar::F32(v);
            }
        }
    }
    Ok(results)
}

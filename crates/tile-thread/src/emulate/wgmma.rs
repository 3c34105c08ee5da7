//! Hopper's `wgmma`: each warpgroup's operands read from shared memory
//! through the canonical 128-byte-swizzled layouts of
//! [`tile_hw::wgmma`] (A K-major, B N-major, 1024 bytes between 8-row
//! groups, from the element indices the threads pass), multiplied with the
//! model's arithmetic, and handed back by the accumulator layout. The reads
//! are the warpgroup's first thread's (for the race checks), and each must
//! follow a `fence.proxy.async` of its writer.

use super::{address, Emulator, LockstepError, LockstepFault};
use crate::program::{OpId, SharedId, WgmmaKind};
use tile_hw::wgmma::{operand_descriptor, warpgroup_mma, Major, K, M, WARPGROUP};
use tile_ir::Scalar;

impl Emulator<'_> {
    /// The results of `wgmma` of `kind` on `a` and `b` for every thread:
    /// `x` holds the operand registers (the indices of A and B, then the
    /// accumulators) of every thread.
    pub(super) fn wgmma(
        &mut self,
        id: OpId,
        (kind, a, b): (WgmmaKind, SharedId, SharedId),
        x: &[Vec<Scalar>],
    ) -> Result<Vec<Vec<Scalar>>, LockstepError> {
        let threads = self.threads as usize;
        let fault = |s: &Self, what: String| s.error(Some(id), None, LockstepFault::Wgmma(what));
        if !threads.is_multiple_of(WARPGROUP) || x.len() != 2 + kind.accumulators() {
            return Err(fault(
                self,
                "not whole warpgroups, or not its operands".into(),
            ));
        }
        let mut results = vec![vec![Scalar::F32(0.0); threads]; kind.accumulators()];
        for first in (0..threads).step_by(WARPGROUP) {
            let group = first..first + WARPGROUP;
            let [ia, ib] = [&x[0], &x[1]].map(|r| address(r[first]));
            if group
                .clone()
                .any(|t| address(x[0][t]) != ia || address(x[1][t]) != ib)
            {
                return Err(fault(
                    self,
                    format!("the warpgroup of thread {first} passes different operand indices"),
                ));
            }
            let matrix_a = self.operand(id, (a, ia), (M, K), Major::K, first as u32)?;
            let matrix_b = self.operand(id, (b, ib), (kind.n, K), Major::Mn, first as u32)?;
            // B is read as (n, k): transpose it to row-major K × N.
            let b_rows: Vec<u16> = (0..K * kind.n)
                .map(|e| matrix_b[(e % kind.n) * K + e / kind.n])
                .collect();
            let c: Vec<Vec<f32>> = group
                .clone()
                .map(|t| {
                    x[2..]
                        .iter()
                        .map(|r| f32::from_bits(r[t].to_bits() as u32))
                        .collect()
                })
                .collect();
            let d = warpgroup_mma(kind, &widen(kind, &matrix_a), &widen(kind, &b_rows), &c)
                .map_err(|what| fault(self, what))?;
            for (offset, regs) in d.into_iter().enumerate() {
                for (i, v) in regs.into_iter().enumerate() {
                    results[i][first + offset] = Scalar::F32(v);
                }
            }
        }
        Ok(results)
    }

    /// The `rows × cols` elements `(mn, k)` (row-major by `mn`) of the
    /// operand laid out as `major` from element `start` of `alloc`, read by
    /// `thread`, as bits.
    fn operand(
        &mut self,
        id: OpId,
        (alloc, start): (SharedId, i64),
        (rows, cols): (usize, usize),
        major: Major,
        thread: u32,
    ) -> Result<Vec<u16>, LockstepError> {
        let fault = |s: &Self, f: LockstepFault| s.error(Some(id), Some(thread), f);
        let size = self.program.shared[alloc].dtype.size_bytes();
        let descriptor =
            operand_descriptor(u32::try_from(start * size as i64).map_err(|_| {
                fault(self, LockstepFault::Wgmma(format!("operand index {start}")))
            })?);
        let mut bits = Vec::with_capacity(rows * cols);
        for mn in 0..rows {
            for k in 0..cols {
                let byte = descriptor
                    .element_address(major, size, (mn, k))
                    .map_err(|what| fault(self, LockstepFault::Wgmma(what)))?;
                let i = i64::from(byte) / size as i64;
                if let Some(writer) = self.shared.unfenced_writer(alloc.index(), i) {
                    let index = i as usize;
                    let alloc = alloc.index();
                    return Err(fault(
                        self,
                        LockstepFault::UnfencedAsyncRead {
                            alloc,
                            index,
                            writer,
                        },
                    ));
                }
                let v = self
                    .shared
                    .load(alloc.index(), i, thread, id)
                    .map_err(|c| self.race(id, alloc.index(), i, thread, false, c))?;
                bits.push(v.to_bits() as u16);
            }
        }
        Ok(bits)
    }
}

/// The `f32` values of operand bits of `kind`.
fn widen(kind: WgmmaKind, bits: &[u16]) -> Vec<f32> {
    bits.iter().map(|&b| kind.widen(b)).collect()
}

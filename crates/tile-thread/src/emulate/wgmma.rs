//! Hopper's `wgmma`: each warpgroup's operands read from shared memory
//! through the canonical swizzled layouts of [`tile_hw::wgmma`] (A K-major
//! with the op's swizzle, B with [`tile_hw::wgmma::b_swizzle`]'s, atoms of
//! 8 rows stacked, from the element indices the threads pass) or A from the
//! threads' registers, multiplied with the
//! model's arithmetic, and handed back by the accumulator layout. The reads
//! are the warpgroup's first thread's (for the race checks), and each must
//! follow a `fence.proxy.async` of its writer.

use super::{address, Emulator, LockstepError, LockstepFault, Operands};
use crate::program::{DescriptorSwizzle, OpId, SharedId, WgmmaKind};
use tile_hw::wgmma::{
    b_swizzle, operand_descriptor, register_a_element, warpgroup_mma, Major, K, M,
    REGISTER_A_ELEMENTS, WARPGROUP,
};
use tile_ir::Scalar;

/// Where a `wgmma` finds A.
#[derive(Clone, Copy, Debug)]
pub(super) enum WgmmaA {
    /// In this allocation, laid out with this swizzle, from the element
    /// index of the op's first operand.
    Shared(SharedId, DescriptorSwizzle),
    /// In the op's first [`REGISTER_A_ELEMENTS`] operands of every thread.
    Registers,
}

impl Emulator<'_> {
    /// The results of `wgmma` of `kind` on `a` and `b` for every thread,
    /// from its operands `x` (A's index or elements, B's index, the
    /// accumulators) by role.
    pub(super) fn wgmma(
        &mut self,
        id: OpId,
        (kind, a, b): (WgmmaKind, WgmmaA, SharedId),
        x: &Operands<'_>,
    ) -> Result<Vec<Vec<Scalar>>, LockstepError> {
        let threads = self.threads as usize;
        let fault = |s: &Self, what: String| s.error(Some(id), None, LockstepFault::Wgmma(what));
        let (a_registers, accumulators) = (x.list("a"), x.list("accumulators"));
        let ib = self.role(id, x, "ib")?;
        let indices: Vec<&[Scalar]> = match a {
            WgmmaA::Shared(..) => vec![self.role(id, x, "ia")?, ib],
            WgmmaA::Registers => vec![ib],
        };
        let a_count = match a {
            WgmmaA::Shared(..) => 0,
            WgmmaA::Registers => REGISTER_A_ELEMENTS,
        };
        if !threads.is_multiple_of(WARPGROUP)
            || a_registers.len() != a_count
            || accumulators.len() != kind.accumulators()
        {
            return Err(fault(
                self,
                "not whole warpgroups, or not its operands".into(),
            ));
        }
        let mut results = vec![vec![Scalar::F32(0.0); threads]; kind.accumulators()];
        for first in (0..threads).step_by(WARPGROUP) {
            let group = first..first + WARPGROUP;
            if indices
                .iter()
                .any(|r| group.clone().any(|t| address(r[t]) != address(r[first])))
            {
                return Err(fault(
                    self,
                    format!("the warpgroup of thread {first} passes different operand indices"),
                ));
            }
            let (b_index, step) = (address(ib[first]), kind.k());
            let matrix_a = match a {
                WgmmaA::Shared(alloc, swizzle) => {
                    let at = (alloc, address(indices[0][first]));
                    let layout = (swizzle, Major::K);
                    let bits = self.operand(id, at, (M, step), layout, first as u32)?;
                    widen(kind, &bits)
                }
                WgmmaA::Registers => {
                    let mut matrix = vec![0.0f32; M * K];
                    for (t, thread) in group.clone().enumerate() {
                        for (i, r) in a_registers.iter().enumerate() {
                            let (row, col) = register_a_element(t, i);
                            matrix[row * K + col] = kind.widen(r[thread].to_bits() as u32);
                        }
                    }
                    matrix
                }
            };
            let b_layout = match a {
                WgmmaA::Shared(_, swizzle) => (b_swizzle(swizzle, kind.b_major), kind.b_major),
                // B is staged under the 128-byte swizzle: a product takes
                // A from registers only then (`chained_wgmma_fragments`).
                WgmmaA::Registers => (DescriptorSwizzle::B128, kind.b_major),
            };
            let matrix_b =
                self.operand(id, (b, b_index), (kind.n, step), b_layout, first as u32)?;
            // B is read as (n, k): transpose it to row-major K × N.
            let b_rows: Vec<u32> = (0..step * kind.n)
                .map(|e| matrix_b[(e % kind.n) * step + e / kind.n])
                .collect();
            let c: Vec<Vec<f32>> = group
                .clone()
                .map(|t| {
                    accumulators
                        .iter()
                        .map(|r| f32::from_bits(r[t].to_bits() as u32))
                        .collect()
                })
                .collect();
            let d = warpgroup_mma(kind, &matrix_a, &widen(kind, &b_rows), &c)
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
    /// operand laid out as `major` with `swizzle` from element `start` of
    /// `alloc`, read by `thread`, as bits.
    pub(super) fn operand(
        &mut self,
        id: OpId,
        (alloc, start): (SharedId, i64),
        (rows, cols): (usize, usize),
        (swizzle, major): (DescriptorSwizzle, Major),
        thread: u32,
    ) -> Result<Vec<u32>, LockstepError> {
        let fault = |s: &Self, f: LockstepFault| s.error(Some(id), Some(thread), f);
        let size = self.program.shared[alloc].dtype.size_bytes();
        let start = u32::try_from(start * size as i64)
            .map_err(|_| fault(self, LockstepFault::Wgmma(format!("operand index {start}"))))?;
        let descriptor = operand_descriptor(start, swizzle);
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
                bits.push(v.to_bits() as u32);
            }
        }
        Ok(bits)
    }
}

/// The `f32` values of operand bits of `kind`.
fn widen(kind: WgmmaKind, bits: &[u32]) -> Vec<f32> {
    bits.iter().map(|&b| kind.widen(b)).collect()
}

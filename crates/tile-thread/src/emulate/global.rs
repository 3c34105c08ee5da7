//! Global loads and stores of the emulator: per thread, per vector element,
//! touching memory only where the element's mask is true.

use super::{address, EmuError, EmuFault, Emulator, Touch};
use crate::program::OpId;
use tile_ir::{eval, AtomicOp, Scalar};

impl Emulator<'_> {
    // Indexing by thread across the operand columns reads clearer than zips.
    #[allow(clippy::needless_range_loop)]
    pub(super) fn load_global(
        &mut self,
        id: OpId,
        param: usize,
        width: usize,
        x: &[Vec<Scalar>],
    ) -> Result<Vec<Vec<Scalar>>, EmuError> {
        let g = self.global(id, param)?;
        if x.len() != 1 + 2 * width {
            return Err(self.error(
                Some(id),
                None,
                EmuFault::Malformed("ld.global operands".into()),
            ));
        }
        let block = self.block_linear();
        let mut out = vec![Vec::with_capacity(self.threads as usize); width];
        for t in 0..self.threads as usize {
            let masks = x[1..=width].iter().map(|m| m[t]);
            self.aligned_vector(id, g, (width, "load"), t, address(x[0][t]), masks)?;
            for (i, column) in out.iter_mut().enumerate() {
                let v = if x[1 + i][t] == Scalar::Bool(true) {
                    let at = address(x[0][t]) + i as i64;
                    let loaded = match self.globals[g].as_mut() {
                        Some(global) => global
                            .touch(at, block, Touch::Read)
                            .and_then(|()| global.load(at)),
                        None => Err(EmuFault::Malformed("no tensor".into())),
                    };
                    loaded.map_err(|e| self.error(Some(id), Some(t as u32), e))?
                } else {
                    x[1 + width + i][t]
                };
                column.push(v);
            }
        }
        Ok(out)
    }

    #[allow(clippy::needless_range_loop)]
    pub(super) fn store_global(
        &mut self,
        id: OpId,
        param: usize,
        width: usize,
        x: &[Vec<Scalar>],
    ) -> Result<(), EmuError> {
        let g = self.global(id, param)?;
        if x.len() != 1 + 2 * width {
            return Err(self.error(
                Some(id),
                None,
                EmuFault::Malformed("st.global operands".into()),
            ));
        }
        let block = self.block_linear();
        for t in 0..self.threads as usize {
            let masks = x[1 + width..].iter().map(|m| m[t]);
            self.aligned_vector(id, g, (width, "store"), t, address(x[0][t]), masks)?;
            for i in 0..width {
                if x[1 + width + i][t] != Scalar::Bool(true) {
                    continue;
                }
                let at = address(x[0][t]) + i as i64;
                let result = match self.globals[g].as_mut() {
                    Some(global) => global
                        .touch(at, block, Touch::Write)
                        .and_then(|()| global.store(at, x[1 + i][t])),
                    None => Err(EmuFault::Malformed("no tensor".into())),
                };
                result.map_err(|e| self.error(Some(id), Some(t as u32), e))?;
            }
        }
        Ok(())
    }
}

impl Emulator<'_> {
    /// Checks that thread `t`'s vector of `width` elements from element
    /// offset `at` of global `g` is aligned to its size (buffers are
    /// 256-byte aligned, `Global::base_address`), when any of its
    /// `masks` holds: hardware faults on a misaligned vector access.
    fn aligned_vector(
        &self,
        id: OpId,
        g: usize,
        (width, access): (usize, &'static str),
        t: usize,
        at: i64,
        mut masks: impl Iterator<Item = Scalar>,
    ) -> Result<(), EmuError> {
        if width < 2 || !masks.any(|m| m == Scalar::Bool(true)) {
            return Ok(());
        }
        let Some(global) = self.globals[g].as_ref() else {
            return Ok(());
        };
        let (dtype, _, _) = global.layout();
        let bytes = width * dtype.size_bytes();
        let first = global.base_address() as i64 + at * dtype.size_bytes() as i64;
        if first.rem_euclid(bytes as i64) == 0 {
            return Ok(());
        }
        let fault = EmuFault::MisalignedVector {
            access,
            param: global.name.clone(),
            width,
            address: at,
            bytes,
        };
        Err(self.error(Some(id), Some(t as u32), fault))
    }

    /// `atom.global`: the threads' updates one after another, in thread
    /// order (any order is a valid execution of the block's atomics).
    pub(super) fn atomic_global(
        &mut self,
        id: OpId,
        param: usize,
        op: AtomicOp,
        x: &[Vec<Scalar>],
    ) -> Result<Vec<Vec<Scalar>>, EmuError> {
        let g = self.global(id, param)?;
        let cas = op == AtomicOp::Cas;
        let malformed = |s: &Self| {
            s.error(
                Some(id),
                None,
                EmuFault::Malformed("atom.global operands".into()),
            )
        };
        let (addr, rest) = x.split_first().ok_or_else(|| malformed(self))?;
        let (cmp, value, mask) = match (rest, cas) {
            ([cmp, value, mask], true) => (Some(cmp), value, mask),
            ([value, mask], false) => (None, value, mask),
            _ => return Err(malformed(self)),
        };
        let block = self.block_linear();
        let mut out = Vec::with_capacity(self.threads as usize);
        for t in 0..self.threads as usize {
            if mask[t] != Scalar::Bool(true) {
                out.push(Scalar::zero(value[t].dtype()));
                continue;
            }
            let at = address(addr[t]);
            let result = match self.globals[g].as_mut() {
                Some(global) => global
                    .touch(at, block, Touch::Atomic)
                    .and_then(|()| global.load(at))
                    .and_then(|old| {
                        let new = eval::atomic(op, old, value[t], cmp.map(|c| c[t]))
                            .map_err(EmuFault::Eval)?;
                        global.store(at, new).map(|()| old)
                    }),
                None => Err(EmuFault::Malformed("no tensor".into())),
            };
            out.push(result.map_err(|e| self.error(Some(id), Some(t as u32), e))?);
        }
        Ok(vec![out])
    }
}

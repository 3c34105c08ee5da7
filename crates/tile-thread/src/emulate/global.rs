//! Global loads and stores of the emulator: per thread, per vector element,
//! touching memory only where the element's mask is true.

use super::{address, Emulator, LockstepError, LockstepFault, Operands, Touch};
use crate::program::{GlobalOperands, OpId};
use tile_hw::happens::AtomicSync;
use tile_ir::{eval, AtomicOp, MemOrder, MemScope, Scalar};

/// The key of global element `at` (in the buffer) of global `g`, for the
/// release sequences of `tile_hw::happens::Sync`.
fn location(g: usize, at: usize) -> u64 {
    ((g as u64) << 40) | at as u64
}

impl Emulator<'_> {
    /// `ld.global`: per thread, the elements its masks enable, as one
    /// vector access or element by element ([`GlobalOperands`]); `other`
    /// where masked off.
    pub(super) fn load_global(
        &mut self,
        id: OpId,
        param: usize,
        width: usize,
        x: &[Vec<Scalar>],
    ) -> Result<Vec<Vec<Scalar>>, LockstepError> {
        let g = self.global(id, param)?;
        let o = GlobalOperands::load(x, width).ok_or_else(|| {
            self.error(
                Some(id),
                None,
                LockstepFault::Malformed("ld.global operands".into()),
            )
        })?;
        let mut out = vec![Vec::with_capacity(self.threads as usize); width];
        for t in 0..self.threads as usize {
            let who = self.who(t as u32);
            let at = self.element_offsets(id, g, (&o, "load"), t)?;
            for (i, column) in out.iter_mut().enumerate() {
                let v = match at[i] {
                    Some(at) => {
                        let loaded = match self.globals[g].as_mut() {
                            Some(global) => global
                                .touch(at, (&self.sync, who), Touch::Read)
                                .and_then(|_| global.load(at)),
                            None => Err(LockstepFault::Malformed("no tensor".into())),
                        };
                        loaded.map_err(|e| self.error(Some(id), Some(t as u32), e))?
                    }
                    None => o.others[i][t],
                };
                column.push(v);
            }
        }
        Ok(out)
    }

    /// `st.global`: per thread, the values its masks enable, addressed as
    /// `ld.global`'s.
    pub(super) fn store_global(
        &mut self,
        id: OpId,
        param: usize,
        width: usize,
        x: &[Vec<Scalar>],
    ) -> Result<(), LockstepError> {
        let g = self.global(id, param)?;
        let o = GlobalOperands::store(x, width).ok_or_else(|| {
            self.error(
                Some(id),
                None,
                LockstepFault::Malformed("st.global operands".into()),
            )
        })?;
        for t in 0..self.threads as usize {
            let who = self.who(t as u32);
            let at = self.element_offsets(id, g, (&o, "store"), t)?;
            for (i, at) in at.into_iter().enumerate() {
                let Some(at) = at else { continue };
                let result = match self.globals[g].as_mut() {
                    Some(global) => global
                        .touch(at, (&self.sync, who), Touch::Write)
                        .and_then(|place| global.store(at, o.values[i][t]).map(|()| place)),
                    None => Err(LockstepFault::Malformed("no tensor".into())),
                };
                let place = result.map_err(|e| self.error(Some(id), Some(t as u32), e))?;
                self.sync.plain_store(location(g, place));
            }
        }
        Ok(())
    }

    /// `red.global.add`: per thread, a relaxed atomic add of each value its
    /// masks enable, addressed as `st.global`'s, in thread order (any
    /// order is a valid execution of the block's atomics). No results.
    pub(super) fn add_global(
        &mut self,
        id: OpId,
        (param, scope, width): (usize, MemScope, usize),
        x: &[Vec<Scalar>],
    ) -> Result<Vec<Vec<Scalar>>, LockstepError> {
        let g = self.global(id, param)?;
        let o = GlobalOperands::store(x, width).ok_or_else(|| {
            self.error(
                Some(id),
                None,
                LockstepFault::Malformed("red.global operands".into()),
            )
        })?;
        for t in 0..self.threads as usize {
            let who = self.who(t as u32);
            let at = self.element_offsets(id, g, (&o, "reduction"), t)?;
            for (i, at) in at.into_iter().enumerate() {
                let Some(at) = at else { continue };
                let value = o.values[i][t];
                let result = match self.globals[g].as_mut() {
                    Some(global) => global
                        .touch(at, (&self.sync, who), Touch::Atomic)
                        .and_then(|place| Ok((place, global.load(at)?)))
                        .and_then(|(place, old)| {
                            let new = eval::atomic(AtomicOp::Add, old, value, None)
                                .map_err(LockstepFault::Eval)?;
                            global.store(at, new).map(|()| place)
                        }),
                    None => Err(LockstepFault::Malformed("no tensor".into())),
                };
                let place = result.map_err(|e| self.error(Some(id), Some(t as u32), e))?;
                let sync = AtomicSync {
                    order: MemOrder::Relaxed,
                    scope,
                    wrote: true,
                };
                self.sync.atomic(who, location(g, place), sync);
            }
        }
        Ok(Vec::new())
    }

    /// The element offset each element of thread `t`'s access touches
    /// (`None` where masked off). A vector access (the vector condition
    /// true) must be aligned to its size, as hardware faults on a
    /// misaligned one; every mask must hold and its lanes must be the
    /// consecutive offsets from its address, or the lowering broke the
    /// access's rule and the kernel is malformed.
    fn element_offsets(
        &self,
        id: OpId,
        g: usize,
        (o, access): (&GlobalOperands<'_, Vec<Scalar>>, &'static str),
        t: usize,
    ) -> Result<Vec<Option<i64>>, LockstepError> {
        let enabled = |m: &Vec<Scalar>| m[t] == Scalar::Bool(true);
        if !o.vector_ok.is_some_and(enabled) {
            return Ok(o
                .lanes
                .iter()
                .zip(o.masks)
                .map(|(lane, m)| enabled(m).then(|| address(lane[t])))
                .collect());
        }
        let at = address(o.addr[t]);
        let width = o.lanes.len();
        self.aligned_vector(id, g, (width, access), t, at)?;
        if let Some(i) = (0..width).find(|&i| !enabled(&o.masks[i])) {
            let message = format!("{access} lane {i} masked off in a vector access at {at}");
            return Err(self.error(Some(id), Some(t as u32), LockstepFault::Malformed(message)));
        }
        if let Some(i) = (0..width).find(|&i| address(o.lanes[i][t]) != at + i as i64) {
            let message = format!(
                "{access} lane {i} at offset {} in a vector access at {at}",
                address(o.lanes[i][t])
            );
            return Err(self.error(Some(id), Some(t as u32), LockstepFault::Malformed(message)));
        }
        Ok((0..width).map(|i| Some(at + i as i64)).collect())
    }

    /// Checks that thread `t`'s vector of `width` elements from element
    /// offset `at` of global `g` is aligned to its size (buffers are
    /// 256-byte aligned, `Global::base_address`): hardware faults on a
    /// misaligned vector access.
    fn aligned_vector(
        &self,
        id: OpId,
        g: usize,
        (width, access): (usize, &'static str),
        t: usize,
        at: i64,
    ) -> Result<(), LockstepError> {
        let Some(global) = self.globals[g].as_ref() else {
            return Ok(());
        };
        let (dtype, _, _) = global.layout();
        let bytes = width * dtype.size_bytes();
        let first = global.base_address() as i64 + at * dtype.size_bytes() as i64;
        if first.rem_euclid(bytes as i64) == 0 {
            return Ok(());
        }
        let fault = LockstepFault::MisalignedVector {
            access,
            param: global.name.clone(),
            width,
            address: at,
            bytes,
        };
        Err(self.error(Some(id), Some(t as u32), fault))
    }
    /// `atom.global`: the threads' updates one after another, in thread
    /// order (any order is a valid execution of the block's atomics), each
    /// acquiring and releasing as its order and scope say.
    pub(super) fn atomic_global(
        &mut self,
        id: OpId,
        param: usize,
        (op, order, scope): (AtomicOp, MemOrder, MemScope),
        x: &Operands<'_>,
    ) -> Result<Vec<Vec<Scalar>>, LockstepError> {
        let g = self.global(id, param)?;
        let cas = op == AtomicOp::Cas;
        let malformed = |s: &Self| {
            s.error(
                Some(id),
                None,
                LockstepFault::Malformed("atom.global operands".into()),
            )
        };
        let [addr, mask] = self.roles(id, x, ["addr", "mask"])?;
        let (cmp, value) = match (x.list("values"), cas) {
            ([cmp, value], true) => (Some(cmp), value),
            ([value], false) => (None, value),
            _ => return Err(malformed(self)),
        };
        let mut out = Vec::with_capacity(self.threads as usize);
        for t in 0..self.threads as usize {
            if mask[t] != Scalar::Bool(true) {
                out.push(Scalar::zero(value[t].dtype()));
                continue;
            }
            let who = self.who(t as u32);
            let at = address(addr[t]);
            let compared = cmp.map(|c| c[t]);
            let result = match self.globals[g].as_mut() {
                Some(global) => global
                    .touch(at, (&self.sync, who), Touch::Atomic)
                    .and_then(|place| Ok((place, global.load(at)?)))
                    .and_then(|(place, old)| {
                        let new = eval::atomic(op, old, value[t], compared)
                            .map_err(LockstepFault::Eval)?;
                        global.store(at, new).map(|()| (place, old))
                    }),
                None => Err(LockstepFault::Malformed("no tensor".into())),
            };
            let (place, old) = result.map_err(|e| self.error(Some(id), Some(t as u32), e))?;
            // A compare-and-swap that finds another value only reads.
            let wrote = compared.is_none_or(|c| c.to_bits() == old.to_bits());
            let sync = AtomicSync {
                order,
                scope,
                wrote,
            };
            self.sync.atomic(who, location(g, place), sync);
            out.push(old);
        }
        Ok(vec![out])
    }
}

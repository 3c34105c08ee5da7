//! `cp.async`: copies from global to shared memory that land only when a
//! `cp.async.wait` completes their group. Until then the destination keeps
//! whatever it held, so a program that reads before waiting reads
//! uninitialized or stale elements, which the shadow reports or the oracle
//! comparison catches.

use super::{address, Emulator, LockstepError, LockstepFault, Operands, Touch};
use crate::program::{OpId, SharedId};
use tile_ir::Scalar;

/// One thread's copy in flight: the elements to write from `index` on.
#[derive(Clone, Debug)]
pub(super) struct Pending {
    alloc: SharedId,
    index: i64,
    values: Vec<Scalar>,
    op: OpId,
}

/// Each thread's groups of copies: the open one last.
#[derive(Clone, Debug, Default)]
pub(super) struct Groups {
    closed: Vec<Vec<Pending>>,
    open: Vec<Pending>,
}

impl Emulator<'_> {
    /// Issues each thread's `cp.async` of `alloc` from tensor `param`
    /// (operands by role, per thread). Where the mask
    /// holds, the `count` elements are read now (and checked) and the copy
    /// queued in the open group.
    pub(super) fn copy_async(
        &mut self,
        id: OpId,
        param: usize,
        alloc: SharedId,
        x: &Operands<'_>,
    ) -> Result<(), LockstepError> {
        let [index, addr, count, mask] = self.roles(id, x, ["index", "addr", "count", "mask"])?;
        let g = self.global(id, param)?;
        let dtype = self.program.shared[alloc].dtype;
        let elements = 16 / dtype.size_bytes().max(1);
        for t in 0..self.threads as usize {
            if mask[t] != Scalar::Bool(true) {
                continue;
            }
            let (at, start, n) = (address(addr[t]), address(index[t]), address(count[t]));
            let thread = Some(t as u32);
            if !(0..=elements as i64).contains(&n) {
                let fault = LockstepFault::Malformed(format!("cp.async of {n} elements"));
                return Err(self.error(Some(id), thread, fault));
            }
            if start.rem_euclid(elements as i64) != 0 {
                let fault = LockstepFault::MisalignedCopy {
                    alloc: alloc.index(),
                    index: start,
                };
                return Err(self.error(Some(id), thread, fault));
            }
            let mut values = vec![Scalar::zero(dtype); elements];
            let who = self.who(t as u32);
            for (i, v) in values.iter_mut().enumerate().take(n as usize) {
                let element = at + i as i64;
                *v = match self.globals[g].as_mut() {
                    Some(global) => global
                        .touch(element, (&self.sync, who), Touch::Read)
                        .and_then(|_| global.load(element)),
                    None => Err(LockstepFault::Malformed("no tensor".into())),
                }
                .map_err(|e| self.error(Some(id), thread, e))?;
            }
            for i in 0..elements as i64 {
                self.shared
                    .start_copy(alloc.index(), start + i, t as u32, id)
                    .map_err(|c| self.race(id, alloc.index(), start + i, t as u32, true, c))?;
            }
            self.copies[t].open.push(Pending {
                alloc,
                index: start,
                values,
                op: id,
            });
        }
        Ok(())
    }

    /// `cp.async.commit` in every thread.
    pub(super) fn commit_async(&mut self) {
        for groups in &mut self.copies {
            let open = std::mem::take(&mut groups.open);
            groups.closed.push(open);
        }
    }

    /// `cp.async.wait pending` in every thread: the older groups land.
    pub(super) fn wait_async(&mut self, pending: usize) -> Result<(), LockstepError> {
        for t in 0..self.copies.len() {
            let closed = self.copies[t].closed.len();
            let landing: Vec<Vec<Pending>> = self.copies[t]
                .closed
                .drain(..closed.saturating_sub(pending))
                .collect();
            for copy in landing.into_iter().flatten() {
                for (i, &v) in copy.values.iter().enumerate() {
                    let at = copy.index + i as i64;
                    self.shared
                        .land_copy(copy.alloc.index(), at, v, t as u32, copy.op)
                        .map_err(|c| {
                            self.race(copy.op, copy.alloc.index(), at, t as u32, true, c)
                        })?;
                }
            }
        }
        Ok(())
    }
}

//! Shared memory as the emulator's ops touch it: loads and stores of one
//! element per thread, counted for bank conflicts, and the race a shadow
//! access reports as an error naming both threads.

use super::memory::Conflict;
use super::{address, Emulator, LockstepError, LockstepFault};
use crate::program::{OpId, WARP_SIZE};
use tile_ir::Scalar;

impl Emulator<'_> {
    /// The element size in bytes of a shared allocation.
    pub(super) fn shared_bytes(&self, alloc: usize) -> usize {
        self.program
            .shared
            .iter()
            .nth(alloc)
            .map_or(4, |(_, a)| a.dtype.size_bytes().max(1))
    }

    /// Every thread's element of allocation `alloc` at its `index`.
    pub(super) fn load_shared(
        &mut self,
        id: OpId,
        alloc: usize,
        index: &[Scalar],
    ) -> Result<Vec<Scalar>, LockstepError> {
        let mut out = Vec::with_capacity(self.threads as usize);
        for t in 0..self.threads {
            let i = address(index[t as usize]);
            let v = self
                .shared
                .load(alloc, i, t, id)
                .map_err(|c| self.race(id, alloc, i, t, false, c))?;
            out.push(v);
        }
        let bytes = self.shared_bytes(alloc);
        for lanes in index.chunks(WARP_SIZE as usize) {
            self.stats.access(bytes, lanes.iter().map(|&i| address(i)));
        }
        Ok(out)
    }

    /// Stores each thread's `value` at its `index` of allocation `alloc`
    /// where its `mask` holds.
    pub(super) fn store_shared(
        &mut self,
        id: OpId,
        alloc: usize,
        (index, value, mask): (&[Scalar], &[Scalar], &[Scalar]),
    ) -> Result<(), LockstepError> {
        for t in 0..self.threads as usize {
            if mask[t] != Scalar::Bool(true) {
                continue;
            }
            let i = address(index[t]);
            self.shared
                .store(alloc, i, value[t], t as u32, id)
                .map_err(|c| self.race(id, alloc, i, t as u32, true, c))?;
        }
        let bytes = self.shared_bytes(alloc);
        for (lanes, masks) in index
            .chunks(WARP_SIZE as usize)
            .zip(mask.chunks(WARP_SIZE as usize))
        {
            let active = lanes.iter().zip(masks);
            let active = active.filter(|(_, m)| **m == Scalar::Bool(true));
            self.stats.access(bytes, active.map(|(&i, _)| address(i)));
        }
        Ok(())
    }

    /// The error of an access of `index` in allocation `alloc` by `thread`
    /// that the shadow refused: a race with an earlier access, or a copy
    /// still in flight.
    pub(super) fn race(
        &self,
        id: OpId,
        alloc: usize,
        index: i64,
        thread: u32,
        write: bool,
        c: Result<Conflict, LockstepFault>,
    ) -> LockstepError {
        let fault = match c {
            Ok(c) if c.in_flight => LockstepFault::CopyInFlight {
                alloc,
                index: index as usize,
                access: if write { "write" } else { "read" },
                thread: c.thread,
                op: self.program.op_text(c.op),
            },
            Ok(c) => LockstepFault::SharedRace {
                alloc,
                index: index as usize,
                access: if write { "write" } else { "read" },
                earlier_access: if c.was_write { "write" } else { "read" },
                earlier_thread: c.thread,
                earlier_op: self.program.op_text(c.op),
            },
            Err(fault) => fault,
        };
        self.error(Some(id), Some(thread), fault)
    }
}

//! Shared memory as the emulator's ops touch it: loads and stores of one
//! element or one vector per thread, counted for bank conflicts, a thread's
//! TF32 rounding of its own elements in place, and the race a shadow
//! access reports as an error naming both threads.

use super::memory::Conflict;
use super::{address, Emulator, LockstepError, LockstepFault};
use crate::program::{OpId, WARP_SIZE};
use tile_ir::{eval, Scalar, UnaryOp};

impl Emulator<'_> {
    /// The element size in bytes of a shared allocation.
    pub(super) fn shared_bytes(&self, alloc: usize) -> usize {
        self.program
            .shared
            .iter()
            .nth(alloc)
            .map_or(4, |(_, a)| a.dtype.size_bytes().max(1))
    }

    /// Every thread's `width` elements of allocation `alloc` from its
    /// `index` (one result per element), in one access.
    pub(super) fn load_shared(
        &mut self,
        id: OpId,
        (alloc, width): (usize, usize),
        index: &[Scalar],
    ) -> Result<Vec<Vec<Scalar>>, LockstepError> {
        let mut out = vec![Vec::with_capacity(self.threads as usize); width];
        for t in 0..self.threads {
            let first = self.vector_start(id, width, index[t as usize], t)?;
            for (e, values) in out.iter_mut().enumerate() {
                let i = first + e as i64;
                let v = self
                    .shared
                    .load(alloc, i, t, id)
                    .map_err(|c| self.race(id, alloc, i, t, false, c))?;
                values.push(v);
            }
        }
        let bytes = self.shared_bytes(alloc) * width;
        for lanes in index.chunks(WARP_SIZE as usize) {
            let vectors = lanes.iter().map(|&i| Some(address(i) / width as i64));
            self.stats.access_by_lanes(bytes, vectors);
        }
        Ok(out)
    }

    /// Where each thread's `mask` holds (and only there), reads its `width`
    /// `f32`s from its `index` of allocation `alloc` and writes them back
    /// rounded to TF32: one thread's rewrite of its own elements.
    pub(super) fn round_shared_tf32(
        &mut self,
        id: OpId,
        (alloc, width): (usize, usize),
        (index, mask): (&[Scalar], &[Scalar]),
    ) -> Result<(), LockstepError> {
        for t in 0..self.threads {
            if mask[t as usize] != Scalar::Bool(true) {
                continue;
            }
            let first = self.vector_start(id, width, index[t as usize], t)?;
            for i in first..first + width as i64 {
                let v = self
                    .shared
                    .load(alloc, i, t, id)
                    .map_err(|c| self.race(id, alloc, i, t, false, c))?;
                let rounded = eval::unary(UnaryOp::RoundTf32, v)
                    .map_err(|e| self.error(Some(id), Some(t), e.into()))?;
                self.shared
                    .store(alloc, i, rounded, t, id)
                    .map_err(|c| self.race(id, alloc, i, t, true, c))?;
            }
        }
        Ok(())
    }

    /// Stores each thread's `width` values from its `index` of allocation
    /// `alloc` where its `mask` holds, in one access.
    pub(super) fn store_shared(
        &mut self,
        id: OpId,
        (alloc, width): (usize, usize),
        (index, values, mask): (&[Scalar], &[&[Scalar]], &[Scalar]),
    ) -> Result<(), LockstepError> {
        for t in 0..self.threads as usize {
            if mask[t] != Scalar::Bool(true) {
                continue;
            }
            let first = self.vector_start(id, width, index[t], t as u32)?;
            for (e, value) in values.iter().enumerate() {
                let i = first + e as i64;
                self.shared
                    .store(alloc, i, value[t], t as u32, id)
                    .map_err(|c| self.race(id, alloc, i, t as u32, true, c))?;
            }
        }
        let bytes = self.shared_bytes(alloc) * width;
        for (lanes, masks) in index
            .chunks(WARP_SIZE as usize)
            .zip(mask.chunks(WARP_SIZE as usize))
        {
            let vectors = lanes
                .iter()
                .zip(masks)
                .map(|(&i, m)| (*m == Scalar::Bool(true)).then(|| address(i) / width as i64));
            self.stats.access_by_lanes(bytes, vectors);
        }
        Ok(())
    }

    /// The first element of a thread's access of `width` elements at
    /// `index`: an error unless a vector's index is a multiple of its
    /// width (a GPU faults on a misaligned vector).
    fn vector_start(
        &self,
        id: OpId,
        width: usize,
        index: Scalar,
        thread: u32,
    ) -> Result<i64, LockstepError> {
        let first = address(index);
        if width > 1 && first.rem_euclid(width as i64) != 0 {
            let fault = LockstepFault::Malformed(format!(
                "a shared vector of {width} elements at index {first}, not a multiple of {width}"
            ));
            return Err(self.error(Some(id), Some(thread), fault));
        }
        Ok(first)
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

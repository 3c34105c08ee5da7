//! The TMA's bulk tensor copies and the mbarriers they complete on (sm_90a),
//! modelled from the PTX ISA ("mbarrier", "cp.async.bulk.tensor"):
//!
//! * `mbarrier.init` gives the barrier its arrival count; its phase is 0.
//!   Initializing a barrier that is already valid is an error (undefined in
//!   the PTX ISA, which invalidates an mbarrier before it is reused).
//!   The init is a shared-memory write of its thread: other threads use the
//!   barrier only after a block barrier (the shadow checks it).
//! * `mbarrier.expect_tx` is one arrival, and adds the bytes the phase also
//!   waits for (the phases are `tile_hw::mbarrier`'s, shared with the
//!   emulation target).
//! * `tma.load` reads its box now (through the tensor map the runtime would
//!   build, `tile_abi::tma`, which must exist for the tensor) and starts
//!   writing it: every element is in flight, so any access before it lands
//!   is an error, as for `cp.async`.
//! * `mbarrier.wait` of parity `p` returns at once when the phase of parity
//!   `p` is over; otherwise the current phase must be able to finish: no
//!   arrival missing and its copies exactly the bytes expected. Then they
//!   land, the phase advances, and (every thread waiting together) the
//!   landed elements are visible to all threads: the wait counts as a
//!   block barrier. A phase that could never finish is an error: on a GPU
//!   the block would hang.

use super::{address, Emulator, LockstepError, LockstepFault, Operands, Touch};
use crate::program::{OpId, SharedId};
use std::collections::HashMap;
use tile_abi::tma::{TensorMap, TmaBox};
use tile_hw::mbarrier::{InFlight, Mbarrier, NeverReturns, Wait};
use tile_ir::Scalar;

/// A bulk copy in flight: the elements it writes, with their values.
#[derive(Clone, Debug)]
pub(super) struct Landing {
    alloc: SharedId,
    elements: Vec<(i64, Scalar)>,
    bytes: u64,
    thread: u32,
    op: OpId,
}

impl InFlight for Landing {
    fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// The block's mbarriers, by allocation and element.
pub(super) type Mbarriers = HashMap<(usize, i64), Mbarrier<Landing>>;

impl Emulator<'_> {
    /// Whether thread `t`'s mask holds.
    fn masked(mask: &[Scalar], t: usize) -> bool {
        mask[t] == Scalar::Bool(true)
    }

    /// `mbarrier.init` where the mask holds.
    pub(super) fn mbarrier_init(
        &mut self,
        id: OpId,
        alloc: SharedId,
        x: &Operands<'_>,
    ) -> Result<(), LockstepError> {
        let [index, count, mask] = self.roles(id, x, ["index", "count", "mask"])?;
        for t in 0..self.threads as usize {
            if !Self::masked(mask, t) {
                continue;
            }
            let (index, count) = (address(index[t]), address(count[t]));
            if self.mbarriers.contains_key(&(alloc.index(), index)) {
                let what = format!(
                    "@s{}[{index}] is initialized again while valid (the PTX ISA makes that undefined: an mbarrier is invalidated first)",
                    alloc.index()
                );
                return Err(self.error(Some(id), Some(t as u32), LockstepFault::Mbarrier(what)));
            }
            self.shared
                .store(alloc.index(), index, Scalar::U64(0), t as u32, id)
                .map_err(|c| self.race(id, alloc.index(), index, t as u32, true, c))?;
            let count = u64::try_from(count).map_err(|_| {
                let what = format!("@s{}[{index}] is given {count} arrivals", alloc.index());
                self.error(Some(id), Some(t as u32), LockstepFault::Malformed(what))
            })?;
            self.mbarriers
                .insert((alloc.index(), index), Mbarrier::new(count));
        }
        Ok(())
    }

    /// The barrier at `index` of `alloc` as thread `t` sees it: initialized,
    /// and the init ordered before this use.
    pub(super) fn barrier_of(
        &mut self,
        id: OpId,
        (alloc, index): (SharedId, i64),
        t: u32,
    ) -> Result<&mut Mbarrier<Landing>, LockstepError> {
        self.shared
            .load(alloc.index(), index, t, id)
            .map_err(|c| self.race(id, alloc.index(), index, t, false, c))?;
        let key = (alloc.index(), index);
        if !self.mbarriers.contains_key(&key) {
            let what = format!("@s{}[{index}] is used before its init", alloc.index());
            return Err(self.error(Some(id), Some(t), LockstepFault::Mbarrier(what)));
        }
        Ok(self.mbarriers.get_mut(&key).expect("checked above"))
    }

    /// `mbarrier.expect_tx` where the mask holds.
    pub(super) fn mbarrier_expect_tx(
        &mut self,
        id: OpId,
        alloc: SharedId,
        x: &Operands<'_>,
    ) -> Result<(), LockstepError> {
        let [index, bytes, mask] = self.roles(id, x, ["index", "bytes", "mask"])?;
        for t in 0..self.threads as usize {
            if !Self::masked(mask, t) {
                continue;
            }
            let (index, bytes) = (address(index[t]), address(bytes[t]));
            let bytes = u64::try_from(bytes).map_err(|_| {
                let what = format!("@s{}[{index}] expects {bytes} bytes", alloc.index());
                self.error(Some(id), Some(t as u32), LockstepFault::Malformed(what))
            })?;
            let barrier = self.barrier_of(id, (alloc, index), t as u32)?;
            if barrier.arrive_expect_tx(bytes).is_err() {
                let fault = LockstepFault::Mbarrier(format!(
                    "@s{}[{index}] arrived at more often than its count",
                    alloc.index()
                ));
                return Err(self.error(Some(id), Some(t as u32), fault));
            }
        }
        Ok(())
    }

    /// `tma.load` of boxes of `rows` rows from tensor `param` into `alloc`,
    /// completing on `bar`, where the mask holds.
    pub(super) fn tma_load(
        &mut self,
        id: OpId,
        (param, rows): (usize, u16),
        (alloc, bar): (SharedId, SharedId),
        x: &Operands<'_>,
    ) -> Result<(), LockstepError> {
        let g = self.global(id, param)?;
        let dtype = self.program.shared[alloc].dtype;
        let size = dtype.size_bytes() as u64;
        let malformed = |what: String| LockstepFault::Malformed(what);
        let tma_box = TmaBox::new(dtype, usize::from(rows)).ok_or_else(|| {
            self.error(Some(id), None, malformed(format!("a box of {rows} rows")))
        })?;
        let map = {
            let global = self.globals[g].as_ref().expect("checked by `global`");
            TensorMap::new(global.base_address(), global.layout(), tma_box).map_err(|e| {
                let fault = LockstepFault::TensorMap {
                    param: global.name.clone(),
                    reason: e.to_string(),
                };
                self.error(Some(id), None, fault)
            })?
        };
        let [index, c0, c1, b, mask] =
            self.roles(id, x, ["index", "c0", "c1", "bar_index", "mask"])?;
        for t in 0..self.threads as usize {
            if !Self::masked(mask, t) {
                continue;
            }
            let thread = Some(t as u32);
            let [index, c0, c1, b] = [index, c0, c1, b].map(|r| address(r[t]));
            if !(index as u64 * size).is_multiple_of(1024) {
                let fault = malformed(format!(
                    "a box into @s{}[{index}], off a 1024-byte boundary",
                    alloc.index()
                ));
                return Err(self.error(Some(id), thread, fault));
            }
            let mut elements = Vec::with_capacity(tma_box.rows * tma_box.cols);
            for (at, source) in map.box_elements(c0, c1) {
                let value = match source {
                    Some(offset) => {
                        let who = self.who(t as u32);
                        let global = self.globals[g].as_mut().expect("checked by `global`");
                        let element = (offset / size) as i64;
                        global
                            .touch(element, (&self.sync, who), Touch::Read)
                            .and_then(|_| global.load(element))
                            .map_err(|e| self.error(Some(id), thread, e))?
                    }
                    None => Scalar::zero(dtype),
                };
                let i = index + (at as u64 / size) as i64;
                self.shared
                    .start_copy(alloc.index(), i, t as u32, id)
                    .map_err(|c| self.race(id, alloc.index(), i, t as u32, true, c))?;
                elements.push((i, value));
            }
            let landing = Landing {
                alloc,
                elements,
                bytes: tma_box.bytes() as u64,
                thread: t as u32,
                op: id,
            };
            self.barrier_of(id, (bar, b), t as u32)?
                .complete_on(landing);
        }
        Ok(())
    }

    /// `mbarrier.wait` in every thread: its index and parity the same in
    /// every thread.
    pub(super) fn mbarrier_wait(
        &mut self,
        id: OpId,
        alloc: SharedId,
        x: &Operands<'_>,
    ) -> Result<(), LockstepError> {
        let index = address(self.uniform(id, "the mbarrier", self.role(id, x, "index")?)?);
        let parity = address(self.uniform(id, "the parity", self.role(id, x, "parity")?)?);
        for t in 0..self.threads {
            self.barrier_of(id, (alloc, index), t)?;
        }
        let barrier = self
            .mbarriers
            .get_mut(&(alloc.index(), index))
            .expect("checked above");
        let landing = match barrier.wait(parity as u64) {
            Ok(Wait::Over) => return Ok(()),
            Ok(Wait::Finished(landing)) => landing,
            Err(NeverReturns {
                pending,
                expected,
                copied,
            }) => {
                let fault = LockstepFault::Mbarrier(format!(
                    "the wait on @s{}[{index}] for phase parity {parity} never returns: {pending} arrivals missing, {expected} bytes expected and {copied} copied",
                    alloc.index(),
                ));
                return Err(self.error(Some(id), None, fault));
            }
        };
        for copy in landing {
            for (i, v) in copy.elements {
                self.shared
                    .land_async_copy(copy.alloc.index(), i, v, copy.thread, copy.op)
                    .map_err(|c| self.race(copy.op, copy.alloc.index(), i, copy.thread, true, c))?;
            }
        }
        self.shared.barrier();
        Ok(())
    }
}

//! The TMA's bulk tensor copies and the mbarriers they complete on, as the
//! lockstep emulator models them (`tile_thread::emulate`), on the running
//! block:
//!
//! * `mbarrier.init` is a shared-memory store of its thread (other threads
//!   use the barrier after a block barrier, or race); `expect_tx` and
//!   `try_wait` read it.
//! * `cp.async.bulk.tensor` reads the 128-byte tensor map at its address
//!   (this workspace's encoding, `tile_abi::tma`: what the driver
//!   stand-ins and the launchers of emulation images pass), reads the box
//!   now (every element inside the tensor checked as a global load), and
//!   marks its destination in flight: any access before it lands races.
//! * `try_wait.parity` follows the phases of `tile_hw::mbarrier`: a phase
//!   already over succeeds; otherwise the current one must finish now, its
//!   copies then land, as writes of the asynchronous proxy.

use crate::block::{race, Block};
use crate::error::EmuError;
use crate::memory;
use tile_abi::emulation::Access;
use tile_abi::tma::{TensorMap, MAP_BYTES};
use tile_hw::mbarrier::{InFlight, Mbarrier, NeverReturns, Wait};

/// A box in flight: its bytes, in destination order, from `dst` on.
#[derive(Clone, Debug)]
pub(crate) struct BoxCopy {
    dst: u64,
    bytes: Vec<u8>,
    thread: u32,
}

impl InFlight for BoxCopy {
    fn bytes(&self) -> u64 {
        self.bytes.len() as u64
    }
}

impl Block {
    /// The error of a broken rule at the current thread.
    fn tma_error(&self, what: String) -> EmuError {
        EmuError::Tma {
            place: self.place(Some(self.current)),
            what,
        }
    }

    /// `mbarrier.init` of the barrier at `address` with `count` arrivals;
    /// a barrier already valid may not be initialized again.
    pub(crate) fn mbarrier_init(&mut self, address: u64, count: u64) -> Result<(), EmuError> {
        if let Some(error) = self.check_access(address, 8, 8, Access::SHARED | Access::STORE) {
            return Err(error);
        }
        if self.mbarriers.contains_key(&address) {
            return Err(self.tma_error(format!(
                "the mbarrier at {address:#x} is initialized again while valid (the PTX ISA makes that undefined: an mbarrier is invalidated first)"
            )));
        }
        self.mbarriers.insert(address, Mbarrier::new(count));
        Ok(())
    }

    /// The barrier at `address`, read by the current thread.
    fn barrier(&mut self, address: u64) -> Result<&mut Mbarrier<BoxCopy>, EmuError> {
        if let Some(error) = self.check_access(address, 8, 8, Access::SHARED) {
            return Err(error);
        }
        if !self.mbarriers.contains_key(&address) {
            return Err(self.tma_error(format!(
                "the mbarrier at {address:#x} is used before its init"
            )));
        }
        Ok(self.mbarriers.get_mut(&address).expect("checked above"))
    }

    /// `mbarrier.arrive.expect_tx` of `bytes` at the barrier at `address`.
    pub(crate) fn mbarrier_expect_tx(&mut self, address: u64, bytes: u64) -> Result<(), EmuError> {
        if self.barrier(address)?.arrive_expect_tx(bytes).is_err() {
            return Err(self.tma_error(format!(
                "the mbarrier at {address:#x} is arrived at more often than its count"
            )));
        }
        Ok(())
    }

    /// `cp.async.bulk.tensor.2d` of the box at `(c0, c1)` through the map
    /// at `map` into shared `dst`, completing on the barrier at `bar`.
    ///
    /// # Safety
    ///
    /// `map` must be the address of the `MAP_BYTES` bytes of a by-value
    /// kernel parameter, alive while the block runs.
    pub(crate) unsafe fn tma_load(
        &mut self,
        dst: u64,
        map: u64,
        (c0, c1): (i64, i64),
        bar: u64,
    ) -> Result<(), EmuError> {
        let mut encoded = [0u8; MAP_BYTES];
        // SAFETY: the caller's contract.
        unsafe { std::ptr::copy_nonoverlapping(map as *const u8, encoded.as_mut_ptr(), MAP_BYTES) };
        let Some(map) = TensorMap::from_bytes(&encoded) else {
            return Err(self.tma_error(format!(
                "the tensor map at {map:#x} is not one of tile_abi::tma's encoding"
            )));
        };
        let tma_box = map.tma_box;
        let size = tma_box.dtype.size_bytes();
        let total = tma_box.bytes() as u64;
        if let Some(error) = self.check_access(dst, total, 1024, Access::SHARED | Access::STORE) {
            return Err(error);
        }
        let mut bytes = vec![0u8; tma_box.bytes()];
        for (at, source) in map.box_elements(c0, c1) {
            let Some(offset) = source else { continue };
            let address = map.base + offset;
            if !memory::reachable(address, size as u64) {
                return Err(EmuError::OutOfBounds {
                    place: self.place(Some(self.current)),
                    kind: "load",
                    address,
                    bytes: size as u64,
                });
            }
            // SAFETY: `reachable` checked that the element lies in memory a
            // launch registered, which stays alive while the block runs.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    address as *const u8,
                    bytes[at..at + size].as_mut_ptr(),
                    size,
                )
            };
        }
        let thread = self.current;
        let (region, offset) = self.shared.locate(dst, total).ok_or_else(|| {
            self.tma_error(format!("a box into {dst:#x} off the block's shared memory"))
        })?;
        self.shared
            .start_copy(region, offset, tma_box.bytes(), thread);
        let copy = BoxCopy { dst, bytes, thread };
        self.barrier(bar)?.complete_on(copy);
        Ok(())
    }

    /// `mbarrier.try_wait.parity` of the barrier at `address` for parity
    /// `parity`: 1 once that phase is over (see the module docs).
    pub(crate) fn mbarrier_try_wait(&mut self, address: u64, parity: u64) -> Result<u64, EmuError> {
        let landing = match self.barrier(address)?.wait(parity) {
            Ok(Wait::Over) => return Ok(1),
            Ok(Wait::Finished(landing)) => landing,
            Err(NeverReturns {
                pending,
                expected,
                copied,
            }) => {
                return Err(self.tma_error(format!(
                    "the wait on the mbarrier at {address:#x} for phase parity {parity} never returns: {pending} arrivals missing, {expected} bytes expected and {copied} copied"
                )))
            }
        };
        for copy in landing {
            // SAFETY: the destination was checked as a store into the
            // block's shared memory when the copy was issued.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    copy.bytes.as_ptr(),
                    copy.dst as *mut u8,
                    copy.bytes.len(),
                )
            };
            if let Err(conflict) =
                self.shared
                    .land_async_copy(copy.dst, copy.bytes.len(), copy.thread)
            {
                let place = self.place(Some(copy.thread));
                return Err(race(place, "store", copy.dst, conflict));
            }
        }
        Ok(1)
    }
}

//! Races in global memory between the threads of a launch, by byte, under
//! the rule of `tile_hw::races` and the happens-before of
//! `tile_hw::happens`.

use std::collections::HashMap;
use tile_hw::happens::{AtomicSync, MemOrder, MemScope, Sync, ThreadId};
pub(crate) use tile_hw::races::Touch;
use tile_hw::races::{Earlier, Place};

/// The bytes of global memory a launch touched, by whom and when, and the
/// launch's happens-before.
#[derive(Debug, Default)]
pub(crate) struct GlobalShadow {
    bytes: HashMap<u64, Place>,
    sync: Sync,
}

impl GlobalShadow {
    /// Records `touch` of `[address, address + len)` by `who`; the first
    /// earlier access it races with, if any (the launch stops there, with
    /// the bytes before it recorded).
    pub(crate) fn touch(
        &mut self,
        address: u64,
        len: u64,
        who: ThreadId,
        touch: Touch,
    ) -> Result<(), Earlier> {
        let bytes = address..address.saturating_add(len);
        let sync = &self.sync;
        for byte in bytes.clone() {
            self.bytes
                .entry(byte)
                .or_default()
                .access(sync, who, touch)?;
        }
        if touch == Touch::Write {
            for byte in bytes {
                self.sync.plain_store(byte);
            }
        }
        Ok(())
    }

    /// An atomic access of `who` at `address` has happened.
    pub(crate) fn atomic(&mut self, who: ThreadId, address: u64, sync: AtomicSync) {
        self.sync.atomic(who, address, sync);
    }

    /// A fence of `who`.
    pub(crate) fn fence(&mut self, who: ThreadId, order: MemOrder, scope: MemScope) {
        self.sync.fence(who, order, scope);
    }

    /// A barrier of every thread of `block`.
    pub(crate) fn barrier(&mut self, block: u64) {
        self.sync.barrier(block);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(block: u64) -> ThreadId {
        ThreadId { block, thread: 0 }
    }

    #[test]
    fn only_atomics_of_unordered_threads_meet_at_a_byte() {
        let mut g = GlobalShadow::default();
        g.touch(0x100, 4, at(0), Touch::Atomic).unwrap();
        g.touch(0x100, 4, at(1), Touch::Atomic).unwrap();
        let read = g.touch(0x102, 1, at(2), Touch::Read).unwrap_err();
        assert_eq!((read.touch, read.who), (Touch::Atomic, at(0)));
        g.touch(0x200, 8, at(3), Touch::Read).unwrap();
        g.touch(0x200, 8, at(4), Touch::Read).unwrap();
        g.touch(0x200, 8, at(3), Touch::Read).unwrap();
        let write = g.touch(0x204, 4, at(4), Touch::Write).unwrap_err();
        assert_eq!((write.touch, write.who), (Touch::Read, at(3)));
        // A thread meets its own accesses freely; a neighbour's bytes are
        // another element.
        g.touch(0x300, 4, at(5), Touch::Write).unwrap();
        g.touch(0x300, 4, at(5), Touch::Read).unwrap();
        g.touch(0x304, 4, at(6), Touch::Write).unwrap();
        let atomic = g.touch(0x300, 2, at(7), Touch::Atomic).unwrap_err();
        assert_eq!((atomic.touch, atomic.who), (Touch::Write, at(5)));
    }

    #[test]
    fn a_lock_orders_the_bytes_it_protects() {
        let acq_rel = AtomicSync {
            order: MemOrder::AcqRel,
            scope: MemScope::Gpu,
            wrote: true,
        };
        let mut g = GlobalShadow::default();
        g.touch(0x400, 4, at(0), Touch::Write).unwrap();
        g.atomic(at(0), 0x10, acq_rel);
        g.atomic(at(1), 0x10, acq_rel);
        g.touch(0x400, 4, at(1), Touch::Read).unwrap();
        g.touch(0x400, 4, at(1), Touch::Write).unwrap();
        // Block 2 took no lock.
        g.touch(0x400, 4, at(2), Touch::Read).unwrap_err();
    }
}

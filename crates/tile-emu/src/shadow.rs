//! Shared memory of a block: its allocations, poisoned before the block
//! runs, and a shadow of every byte that tells which thread last wrote or
//! read it in the current barrier interval.
//!
//! Threads of a block run one after another, so a missing barrier rarely
//! shows as a wrong value; it shows here: a thread that reads a byte another
//! thread wrote since the last barrier, or writes a byte another thread
//! read or wrote since then, races (on a GPU the order is not defined).
//!
//! Reading a byte no thread wrote in this block is not an error: LLVM may
//! hoist a load above the branch that guards it (shared memory cannot
//! trap), and such a load's value goes unused. A kernel that does use it
//! computes with the poison, all ones bits (NaN, or -1), which the
//! comparison with the interpreter shows.

/// The byte every shared allocation holds before a block writes it.
pub(crate) const POISON: u8 = 0xff;

/// What a racing access found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Conflict {
    /// Another thread wrote the byte since the last barrier.
    Written(u32),
    /// Another thread read the byte since the last barrier.
    Read(u32),
    /// A `cp.async` of this thread is writing the byte: it may land at any
    /// moment until its thread's `cp.async.wait_group` completes it.
    InFlight(u32),
}

#[derive(Clone, Copy, Default)]
struct Byte {
    /// The last writer and the interval it wrote in.
    writer: Option<(u32, u64)>,
    /// A reader in the interval, and whether more than one thread read.
    reader: Option<(u32, u64)>,
    shared_read: bool,
    /// The thread whose `cp.async` into the byte has not landed yet.
    in_flight: Option<u32>,
}

/// A shared allocation of a loaded image: its symbol, address and size.
#[derive(Clone, Debug)]
pub(crate) struct Allocation {
    pub(crate) symbol: String,
    pub(crate) start: u64,
    pub(crate) len: usize,
}

/// One shared allocation of the block, with the shadow of its bytes.
struct Region {
    allocation: Allocation,
    bytes: Vec<Byte>,
}

/// The block's shared memory and barrier interval.
pub(crate) struct SharedMemory {
    regions: Vec<Region>,
    interval: u64,
}

impl SharedMemory {
    /// `allocations`, all unwritten.
    pub(crate) fn new(allocations: &[Allocation]) -> SharedMemory {
        SharedMemory {
            regions: allocations
                .iter()
                .map(|a| Region {
                    allocation: a.clone(),
                    bytes: vec![Byte::default(); a.len],
                })
                .collect(),
            interval: 0,
        }
    }

    /// A barrier: later accesses do not race with earlier ones.
    pub(crate) fn barrier(&mut self) {
        self.interval += 1;
    }

    /// The region holding `[address, address + bytes)`, and the offset.
    pub(crate) fn locate(&self, address: u64, bytes: u64) -> Option<(usize, usize)> {
        self.regions
            .iter()
            .position(|r| {
                let start = r.allocation.start;
                address >= start && address.saturating_add(bytes) <= start + r.bytes.len() as u64
            })
            .map(|i| (i, (address - self.regions[i].allocation.start) as usize))
    }

    /// `address` relative to the allocation it is closest to:
    /// `` `shared0` + 1448 (of 1440 bytes) ``.
    pub(crate) fn describe(&self, address: u64) -> String {
        let distance = |a: &Allocation| {
            let end = a.start + a.len as u64;
            if address < a.start {
                a.start - address
            } else {
                address.saturating_sub(end)
            }
        };
        self.regions
            .iter()
            .map(|r| &r.allocation)
            .min_by_key(|a| distance(a))
            .map_or("the block has no shared memory".to_string(), |a| {
                let offset = i128::from(address) - i128::from(a.start);
                let sign = if offset < 0 { "-" } else { "+" };
                format!(
                    "`{}` {sign} {} (of {} bytes)",
                    a.symbol,
                    offset.unsigned_abs(),
                    a.len
                )
            })
    }

    /// Records an access of `bytes` at `offset` of region `region` by
    /// `thread`; the first conflict, if any.
    pub(crate) fn access(
        &mut self,
        region: usize,
        offset: usize,
        bytes: usize,
        thread: u32,
        store: bool,
    ) -> Result<(), Conflict> {
        let interval = self.interval;
        let cells = &mut self.regions[region].bytes[offset..offset + bytes];
        for cell in cells.iter() {
            if let Some(copier) = cell.in_flight {
                return Err(Conflict::InFlight(copier));
            }
            let now = |at: Option<(u32, u64)>| at.filter(|&(t, i)| t != thread && i == interval);
            if let Some((other, _)) = now(cell.writer) {
                return Err(Conflict::Written(other));
            }
            if store {
                if let Some((other, _)) = now(cell.reader) {
                    return Err(Conflict::Read(other));
                }
                if cell.shared_read && cell.reader.is_some_and(|(_, i)| i == interval) {
                    return Err(Conflict::Read(cell.reader.map_or(0, |(t, _)| t)));
                }
            }
        }
        for cell in cells.iter_mut() {
            if store {
                cell.writer = Some((thread, interval));
            } else {
                cell.shared_read = match cell.reader {
                    Some((t, i)) if i == interval => cell.shared_read || t != thread,
                    _ => false,
                };
                cell.reader = Some((thread, interval));
            }
        }
        Ok(())
    }

    /// A `cp.async` of `thread` into `bytes` at `offset` of `region`,
    /// checked as a store already (it may land at once): in flight from
    /// now on, so that every access before it lands is a conflict.
    pub(crate) fn start_copy(&mut self, region: usize, offset: usize, bytes: usize, thread: u32) {
        for cell in &mut self.regions[region].bytes[offset..offset + bytes] {
            cell.in_flight = Some(thread);
        }
    }

    /// The copy of `thread` into `[address, address + bytes)` lands: no
    /// longer in flight, a store of `thread` in the current interval.
    pub(crate) fn land_copy(
        &mut self,
        address: u64,
        bytes: usize,
        thread: u32,
    ) -> Result<(), Conflict> {
        let Some((region, offset)) = self.locate(address, bytes as u64) else {
            return Ok(());
        };
        for cell in &mut self.regions[region].bytes[offset..offset + bytes] {
            cell.in_flight = None;
        }
        self.access(region, offset, bytes, thread, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_barrier_separates_writer_and_reader() {
        let mut shared = SharedMemory::new(&[Allocation {
            symbol: "shared0".into(),
            start: 0x100,
            len: 16,
        }]);
        assert_eq!(shared.locate(0x104, 4), Some((0, 4)));
        assert_eq!(shared.locate(0x10e, 4), None);
        assert_eq!(shared.describe(0x112), "`shared0` + 18 (of 16 bytes)");
        assert_eq!(shared.describe(0xf8), "`shared0` - 8 (of 16 bytes)");
        // A read of unwritten bytes is not a conflict.
        shared.access(0, 0, 4, 1, false).unwrap();
        shared.access(0, 0, 4, 1, true).unwrap();
        // The writer may read its own bytes; another thread may not yet.
        shared.access(0, 0, 4, 1, false).unwrap();
        assert_eq!(shared.access(0, 0, 4, 2, false), Err(Conflict::Written(1)));
        shared.barrier();
        shared.access(0, 0, 4, 2, false).unwrap();
        shared.access(0, 0, 4, 3, false).unwrap();
        // A write after two readers in the same interval races with them.
        assert!(matches!(
            shared.access(0, 0, 4, 2, true),
            Err(Conflict::Read(_))
        ));
        shared.barrier();
        shared.access(0, 0, 4, 2, true).unwrap();
        assert_eq!(shared.access(0, 0, 4, 4, true), Err(Conflict::Written(2)));
    }

    /// Bytes a `cp.async` is writing are off limits to every thread, its
    /// own included and across barriers, until the copy lands; then they
    /// are its thread's store in the landing interval.
    #[test]
    fn a_copy_in_flight_is_off_limits_until_it_lands() {
        let mut shared = SharedMemory::new(&[Allocation {
            symbol: "shared0".into(),
            start: 0x100,
            len: 32,
        }]);
        shared.access(0, 0, 16, 1, true).unwrap();
        shared.start_copy(0, 0, 16, 1);
        shared.barrier();
        assert_eq!(shared.access(0, 4, 4, 2, false), Err(Conflict::InFlight(1)));
        assert_eq!(shared.access(0, 0, 4, 1, false), Err(Conflict::InFlight(1)));
        assert_eq!(shared.access(0, 8, 4, 3, true), Err(Conflict::InFlight(1)));
        // Bytes beside it are free.
        shared.access(0, 16, 16, 2, true).unwrap();
        shared.land_copy(0x100, 16, 1).unwrap();
        shared.access(0, 0, 4, 1, false).unwrap();
        assert_eq!(shared.access(0, 0, 4, 2, false), Err(Conflict::Written(1)));
        shared.barrier();
        shared.access(0, 0, 4, 2, false).unwrap();
    }
}

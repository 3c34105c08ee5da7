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
//!
//! A byte written by a thread's ordinary store (or landed `cp.async`)
//! reaches `wgmma`'s operand reads, which go through the asynchronous
//! proxy, only after that thread's `fence.proxy.async`: each write records
//! how many fences its thread had issued, and the byte is *unfenced* until
//! the writer issues one more.

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
    /// The writer's count of `fence.proxy.async` when it wrote.
    fences: u64,
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
    /// Each thread's count of `fence.proxy.async`, by thread index.
    fences: Vec<u64>,
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
            fences: Vec::new(),
        }
    }

    /// `fence.proxy.async` of `thread`: its writes so far are visible to
    /// the asynchronous proxy.
    pub(crate) fn fence_proxy(&mut self, thread: u32) {
        let t = thread as usize;
        if self.fences.len() <= t {
            self.fences.resize(t + 1, 0);
        }
        self.fences[t] += 1;
    }

    /// The thread whose write of byte `offset` of `region` no
    /// `fence.proxy.async` of its own has followed yet, if any.
    pub(crate) fn unfenced_writer(&self, region: usize, offset: usize) -> Option<u32> {
        let cell = self.regions[region].bytes[offset];
        let (writer, _) = cell.writer?;
        let fences = self.fences.get(writer as usize).copied().unwrap_or(0);
        (fences == cell.fences).then_some(writer)
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

    /// The address of the block's shared memory whose low 18 bits are
    /// `low` (a `wgmma` descriptor's start), or why there is none or more
    /// than one.
    pub(crate) fn resolve(&self, low: u32) -> Result<u64, String> {
        const WINDOW: u64 = 1 << 18;
        let low = u64::from(low) % WINDOW;
        let found: Vec<u64> = self
            .regions
            .iter()
            .filter_map(|r| {
                let start = r.allocation.start;
                let mut candidate = (start & !(WINDOW - 1)) | low;
                if candidate < start {
                    candidate += WINDOW;
                }
                (candidate < start + r.bytes.len() as u64).then_some(candidate)
            })
            .collect();
        match found.as_slice() {
            [address] => Ok(*address),
            [] => Err(format!(
                "a descriptor's start {low:#x} names no byte of the block's shared memory"
            )),
            _ => Err(format!(
                "a descriptor's start {low:#x} names a byte of {} shared allocations",
                found.len()
            )),
        }
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
        let fences = self.fences.get(thread as usize).copied().unwrap_or(0);
        for cell in cells.iter_mut() {
            if store {
                cell.writer = Some((thread, interval));
                cell.fences = fences;
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

impl SharedMemory {
    /// The TMA's copy of `thread` into `[address, address + bytes)` lands:
    /// as [`SharedMemory::land_copy`], but a write of the asynchronous
    /// proxy, which `wgmma` reads with no `fence.proxy.async` between.
    pub(crate) fn land_async_copy(
        &mut self,
        address: u64,
        bytes: usize,
        thread: u32,
    ) -> Result<(), Conflict> {
        self.land_copy(address, bytes, thread)?;
        if let Some((region, offset)) = self.locate(address, bytes as u64) {
            for cell in &mut self.regions[region].bytes[offset..offset + bytes] {
                cell.fences = u64::MAX;
            }
        }
        Ok(())
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

    /// A descriptor's 18 address bits name the one byte of the block's
    /// shared memory that has them.
    #[test]
    fn descriptor_starts_resolve_within_one_allocation() {
        let shared = SharedMemory::new(&[
            Allocation {
                symbol: "shared0".into(),
                start: 0x7_fffc_0400,
                len: 0x800,
            },
            Allocation {
                symbol: "shared1".into(),
                start: 0x9_0000_0000,
                len: 0x100,
            },
        ]);
        assert_eq!(shared.resolve(0x0410), Ok(0x7_fffc_0410));
        assert_eq!(shared.resolve(0x0050), Ok(0x9_0000_0050));
        assert!(shared.resolve(0x2000).is_err());
        let both = SharedMemory::new(&[
            Allocation {
                symbol: "shared0".into(),
                start: 0x1_0000_0000,
                len: 0x100,
            },
            Allocation {
                symbol: "shared1".into(),
                start: 0x2_0000_0000,
                len: 0x100,
            },
        ]);
        assert!(both
            .resolve(0x10)
            .unwrap_err()
            .contains("2 shared allocations"));
    }

    /// A write stays unfenced, across barriers, until its own thread's
    /// next `fence.proxy.async`; another thread's fence does not cover it.
    #[test]
    fn a_write_is_unfenced_until_its_writer_fences() {
        let mut shared = SharedMemory::new(&[Allocation {
            symbol: "shared0".into(),
            start: 0x400,
            len: 8,
        }]);
        assert_eq!(shared.unfenced_writer(0, 0), None);
        shared.access(0, 0, 4, 3, true).unwrap();
        shared.barrier();
        assert_eq!(shared.unfenced_writer(0, 2), Some(3));
        assert_eq!(shared.unfenced_writer(0, 4), None);
        shared.fence_proxy(5);
        assert_eq!(shared.unfenced_writer(0, 2), Some(3));
        shared.fence_proxy(3);
        assert_eq!(shared.unfenced_writer(0, 2), None);
        shared.barrier();
        shared.access(0, 0, 2, 3, true).unwrap();
        assert_eq!(shared.unfenced_writer(0, 0), Some(3));
        assert_eq!(shared.unfenced_writer(0, 2), None);
    }
}

//! Running every program instance of a grid on all cores, with the CPU
//! device's persistent workers (`pool.rs`).
//!
//! Workers claim runs of consecutive program ids (in the interpreter's
//! order, x fastest), a share of what is left each time (guided
//! scheduling: long runs first, single ids at the end), so that each core
//! walks memory in long ascending stretches — hardware prefetchers follow
//! those, not ids dealt out one by one to alternate cores — and the cores
//! still finish together.

use super::pool;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tile_abi::host::HostEntry;
use tile_abi::Status;

/// A worker claims `1 / (SHARE · workers)` of the ids not yet claimed.
const SHARE: usize = 4;

/// Runs `entry` for every program instance of `grid` (each axis at least 1
/// and at most `i32::MAX`), spread over the available cores (the workers of
/// `pool.rs` and the calling thread), each worker with its own frame of
/// `frame_bytes`. Returns the first failing instance in the interpreter's
/// order (x fastest, then y, then z) and its status; instances after it may
/// or may not have run.
///
/// # Safety
/// `entry` must be a compiled kernel that, given `packet`, reads and writes
/// only memory the packet's pointers are valid for, needs at most
/// `frame_bytes` of frame, and may run on several threads at once.
pub(super) unsafe fn run_grid(
    entry: HostEntry,
    frame_bytes: usize,
    grid: [u32; 3],
    packet: &[u64],
) -> Option<([u32; 3], Status)> {
    let [gx, gy, gz] = grid.map(|g| g as usize);
    let programs = gx * gy * gz;
    let workers = pool::threads().min(programs);
    let run = Arc::new(GridRun {
        entry,
        frame_bytes,
        grid: [gx, gy, gz],
        programs,
        workers,
        packet: packet.to_vec(),
        next: AtomicUsize::new(0),
        failed: AtomicUsize::new(usize::MAX),
        first: Mutex::new(None),
    });
    let shared = run.clone();
    // `broadcast` returns once no thread runs the grid any more, so every
    // call of `entry` happens while the caller's guarantee holds.
    pool::broadcast(workers - 1, move || shared.work());
    let first = run.first.lock().unwrap_or_else(|e| e.into_inner()).take();
    first.map(|(p, status)| {
        let program = [p % gx, p / gx % gy, p / (gx * gy)].map(|v| v as u32);
        (program, status)
    })
}

/// One launch's grid, shared by the threads that run it.
struct GridRun {
    entry: HostEntry,
    frame_bytes: usize,
    grid: [usize; 3],
    programs: usize,
    workers: usize,
    /// A copy of the packet: the addresses of the caller's memory.
    packet: Vec<u64>,
    /// The first id not yet claimed.
    next: AtomicUsize,
    /// The lowest failing id so far: ids above it need not run, every id
    /// below it does (runs are claimed in ascending order, and each is run
    /// in order up to it), so the lowest failing id of all is the one found.
    failed: AtomicUsize,
    /// The lowest failing id and its status.
    first: Mutex<Option<(usize, Status)>>,
}

impl GridRun {
    /// The next run of ids (empty when all are claimed).
    fn claim(&self) -> Range<usize> {
        let mut start = self.next.load(Ordering::Relaxed);
        loop {
            let len = ((self.programs.saturating_sub(start)) / (SHARE * self.workers)).max(1);
            match self.next.compare_exchange_weak(
                start,
                start + len,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return start..(start + len).min(self.programs),
                Err(now) => start = now,
            }
        }
    }

    /// One thread's share: runs of ids until none is left or one failed.
    fn work(&self) {
        let [gx, gy, gz] = self.grid;
        // Eight-byte words, so that every frame place is aligned.
        let mut frame = vec![0u64; self.frame_bytes.div_ceil(8).max(1)];
        'claims: loop {
            let run = self.claim();
            if run.is_empty() {
                break;
            }
            for p in run {
                if p > self.failed.load(Ordering::Relaxed) {
                    break 'claims;
                }
                let ids = [p % gx, p / gx % gy, p / (gx * gy), gx, gy, gz].map(|v| v as i32);
                let mut status = Status::default();
                // SAFETY: `run_grid`'s caller guarantees `entry` stays within
                // the memory of the packet's pointers (copied here, and alive
                // until `run_grid` returns, which waits for this call) and of
                // a frame of `frame_bytes`, which `frame` provides to this
                // thread alone; `ids` and `status` are live locals of the
                // types the entry takes.
                let code = unsafe {
                    (self.entry)(
                        self.packet.as_ptr(),
                        ids.as_ptr(),
                        frame.as_mut_ptr().cast::<u8>(),
                        &mut status,
                    )
                };
                if code != 0 {
                    self.failed.fetch_min(p, Ordering::Relaxed);
                    let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner());
                    if first.as_ref().is_none_or(|(q, _)| p < *q) {
                        *first = Some((p, status));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU8;

    /// A kernel over a packet of one slot, the address of a `[AtomicU8]`
    /// with one flag per program of a 1-D grid: it marks its flag and fails
    /// (code 1, its id in `index[0]`) where the id is a multiple of 7 above 0.
    unsafe extern "C" fn marker(
        packet: *const u64,
        ids: *const i32,
        _frame: *mut u8,
        status: *mut Status,
    ) -> u32 {
        // SAFETY: the test passes a packet whose slot 0 is the address of
        // a live flag array with one flag per program, ids of 6 values and
        // a live status record.
        unsafe {
            let flags = *packet as *const AtomicU8;
            let p = *ids as usize;
            (*flags.add(p)).store(1, Ordering::Relaxed);
            if p > 0 && p.is_multiple_of(7) {
                (*status).code = 1;
                (*status).index[0] = p as i64;
                return 1;
            }
        }
        0
    }

    #[test]
    fn runs_claimed_in_order_find_the_first_failure_and_run_all_before_it() {
        for programs in [1usize, 6, 7, 50, 1000] {
            let flags: Vec<AtomicU8> = (0..programs).map(|_| AtomicU8::new(0)).collect();
            let packet = [flags.as_ptr() as u64];
            // SAFETY: `marker` touches only the flags the packet points to
            // (one per program, alive for the call) and needs no frame.
            let failed = unsafe { run_grid(marker, 0, [programs as u32, 1, 1], &packet) };
            let ran: Vec<bool> = flags
                .iter()
                .map(|f| f.load(Ordering::Relaxed) == 1)
                .collect();
            if programs > 7 {
                let (program, status) = failed.expect("a failure");
                assert_eq!((program, status.index[0]), ([7, 0, 0], 7), "{programs}");
                assert!(ran[..=7].iter().all(|&r| r), "{programs}: {ran:?}");
            } else {
                assert!(failed.is_none(), "{programs}");
                assert!(ran.iter().all(|&r| r), "{programs}");
            }
        }
    }
}

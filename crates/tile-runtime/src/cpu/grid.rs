//! Running every program instance of a grid on all cores.

use super::abi::{HostEntry, Status};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs `entry` for every program instance of `grid` (each axis at least 1
/// and at most `i32::MAX`), spread over the available cores, each worker
/// with its own frame of `frame_bytes`. Returns the first failing instance
/// in the interpreter's order (x fastest, then y, then z) and its status;
/// instances after it may or may not have run.
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
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(programs);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let first: Mutex<Option<(usize, Status)>> = Mutex::new(None);
    let worker = || {
        // Eight-byte words, so that every frame place is aligned.
        let mut frame = vec![0u64; frame_bytes.div_ceil(8).max(1)];
        while !stop.load(Ordering::Relaxed) {
            let p = next.fetch_add(1, Ordering::Relaxed);
            if p >= programs {
                break;
            }
            let ids = [p % gx, p / gx % gy, p / (gx * gy), gx, gy, gz].map(|v| v as i32);
            let mut status = Status::default();
            // SAFETY: the caller guarantees `entry` stays within the memory
            // of `packet`'s pointers and of a frame of `frame_bytes`, which
            // `frame` provides to this thread alone; `ids` and `status` are
            // live locals of the types the entry takes.
            let code = unsafe {
                entry(
                    packet.as_ptr(),
                    ids.as_ptr(),
                    frame.as_mut_ptr().cast::<u8>(),
                    &mut status,
                )
            };
            if code != 0 {
                stop.store(true, Ordering::Relaxed);
                let mut first = first.lock().unwrap_or_else(|e| e.into_inner());
                if first.as_ref().is_none_or(|(q, _)| p < *q) {
                    *first = Some((p, status));
                }
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 1..workers {
            s.spawn(worker);
        }
        worker();
    });
    let first = first.into_inner().unwrap_or_else(|e| e.into_inner());
    first.map(|(p, status)| {
        let program = [p % gx, p / gx % gy, p / (gx * gy)].map(|v| v as u32);
        (program, status)
    })
}

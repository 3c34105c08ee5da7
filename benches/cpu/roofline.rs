//! The machine's own copy bandwidth on all cores: the roofline the memory-bound
//! kernels of `benches/cpu.rs` are measured against, timed alternately with them.

use std::time::{Duration, Instant};
use tile::ir::interp::HostBuffer;
use tile::runtime::cpu::huge_page_buffer;

/// The number of worker threads the CPU device and the copy use.
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The machine's copy on all cores, between two buffers of the kind the CPU
/// device gives tensors (on a line boundary, huge pages where large): the
/// roofline of the memory-bound kernels, timed alternately with each of them
/// so that a busy moment of a shared machine slows both.
pub(crate) struct CopyProbe {
    src: HostBuffer,
    dst: HostBuffer,
    /// GB/s of every copy run so far.
    runs: Vec<f64>,
}

impl CopyProbe {
    /// Two buffers of `bytes`, written once.
    pub(crate) fn new(bytes: usize) -> Self {
        let mut src = huge_page_buffer(bytes);
        src.as_mut_slice().fill(1);
        let mut dst = huge_page_buffer(bytes);
        dst.as_mut_slice().fill(0);
        CopyProbe {
            src,
            dst,
            runs: Vec::new(),
        }
    }

    /// One copy, in GB/s (bytes read + written).
    pub(crate) fn run(&mut self) -> f64 {
        let chunk = self.src.len().div_ceil(cores());
        let start = Instant::now();
        std::thread::scope(|s| {
            let pairs = self.dst.as_mut_slice().chunks_mut(chunk);
            for (d, from) in pairs.zip(self.src.as_slice().chunks(chunk)) {
                s.spawn(move || d.copy_from_slice(from));
            }
        });
        let rate = gbps(2 * self.src.len(), start.elapsed());
        std::hint::black_box(&self.dst);
        self.runs.push(rate);
        rate
    }

    /// The median of the copies run so far.
    pub(crate) fn median(&self) -> f64 {
        let mut runs = self.runs.clone();
        runs.sort_by(f64::total_cmp);
        runs.get(runs.len() / 2).copied().unwrap_or(f64::NAN)
    }
}

/// Times `kernel`, which moves `bytes`, `runs` times after a warm-up call,
/// each time right after a copy: the kernel's median time, and the median
/// over the rounds of its bandwidth over the copy's of the same round.
pub(crate) fn against_copy(
    copy: &mut CopyProbe,
    runs: usize,
    bytes: usize,
    mut kernel: impl FnMut(),
) -> (Duration, f64) {
    kernel();
    let (mut times, mut ratios) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let roof = copy.run();
        let start = Instant::now();
        kernel();
        let t = start.elapsed();
        times.push(t);
        ratios.push(gbps(bytes, t) / roof);
    }
    times.sort();
    ratios.sort_by(f64::total_cmp);
    (times[runs / 2], ratios[runs / 2])
}

/// GB/s of `bytes` moved in `t`.
pub(crate) fn gbps(bytes: usize, t: Duration) -> f64 {
    bytes as f64 / t.as_secs_f64() / 1e9
}

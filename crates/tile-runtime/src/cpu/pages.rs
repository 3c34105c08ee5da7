//! Transparent huge pages for large CPU-device tensors.
//!
//! Compiled host kernels stream through tensor buffers, often along a strided
//! axis: a 32x32 tile of a 4096x4096 `f32` transpose reads 32 rows 16 KiB
//! apart and writes 32 more, 64 distinct 4 KiB pages (64 TLB entries) per
//! tile, where 2 MiB pages put a whole 128-row band of the matrix in one.
//!
//! [`huge_page_buffer`] makes the zeroed buffer of a CPU-device tensor. A
//! buffer of at least [`HUGE_PAGE_THRESHOLD`] bytes gets, on Linux, the
//! advice `madvise(MADV_HUGEPAGE)` over its 2 MiB-aligned interior, while it
//! is still untouched ([`HostBuffer::zeroed`] does not write it), so the
//! first write faults in huge pages rather than 4 KiB ones. The ragged ends
//! stay on 4 KiB pages.
//!
//! The advice is best effort and never an error: the kernel may lack
//! transparent huge pages, have them set to `never`
//! (`/sys/kernel/mm/transparent_hugepage/enabled`), or have no free 2 MiB
//! page at fault time, and a buffer that the allocator reused from freed
//! heap memory is already touched (then only `khugepaged`, slowly, collapses
//! it). A refusal is logged with `tracing` at debug level. Other systems get
//! no advice.

use tile_ir::interp::HostBuffer;

/// The smallest buffer, in bytes, advised to use huge pages: 4 MiB.
///
/// From 4 MiB on, a buffer holds at least one whole 2 MiB-aligned page
/// wherever it starts (and one of 6 MiB or more has most of its bytes in
/// them); a smaller one may hold none, and gains little next to what the
/// advice costs: a system call, and a split of the allocation's mapping in
/// up to three.
pub const HUGE_PAGE_THRESHOLD: usize = 4 << 20;

/// The size of a transparent huge page on x86-64 and on aarch64 with 4 KiB
/// base pages.
const HUGE_PAGE: usize = 2 << 20;

/// What [`advise_huge_pages`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Advice {
    /// Nothing: the buffer is under [`HUGE_PAGE_THRESHOLD`], or this is not
    /// Linux.
    Skipped,
    /// The kernel took the advice for the buffer's 2 MiB-aligned interior.
    Taken,
    /// The kernel refused it (the `madvise` error, logged at debug level).
    Refused,
}

/// A zeroed buffer of `bytes`, as a CPU-device tensor's: on a line boundary,
/// and advised to use huge pages when it is large (see the module docs).
/// The caller fills it. Public so that other code (the CPU bench's copy, the
/// roofline) can work on the same kind of memory.
pub fn huge_page_buffer(bytes: usize) -> HostBuffer {
    let mut buffer = HostBuffer::zeroed(bytes);
    advise_huge_pages(&mut buffer);
    buffer
}

/// Advises the kernel to back the 2 MiB-aligned interior of `buffer` with
/// transparent huge pages if it has at least [`HUGE_PAGE_THRESHOLD`] bytes.
/// Only pages faulted in later are affected, so call it before the first
/// write. The contents are not changed.
pub(crate) fn advise_huge_pages(buffer: &mut [u8]) -> Advice {
    if buffer.len() < HUGE_PAGE_THRESHOLD {
        return Advice::Skipped;
    }
    let start = buffer.as_ptr().addr();
    let first = start.next_multiple_of(HUGE_PAGE);
    let end = (start + buffer.len()) / HUGE_PAGE * HUGE_PAGE;
    // At least one huge page lies inside a buffer of 4 MiB or more.
    debug_assert!(first < end);
    let interior = &mut buffer[first - start..end - start];
    advise(interior)
}

#[cfg(target_os = "linux")]
fn advise(interior: &mut [u8]) -> Advice {
    // SAFETY: `interior` is a live, exclusively borrowed range of mapped
    // memory starting on a page boundary (2 MiB). MADV_HUGEPAGE only marks
    // the mapping for huge pages: it neither unmaps memory nor changes its
    // contents, so no Rust reference to it is invalidated.
    let status = unsafe {
        libc::madvise(
            interior.as_mut_ptr().cast(),
            interior.len(),
            libc::MADV_HUGEPAGE,
        )
    };
    if status == 0 {
        Advice::Taken
    } else {
        tracing::debug!(
            bytes = interior.len(),
            error = %std::io::Error::last_os_error(),
            "the kernel refused huge pages for a tensor buffer (madvise MADV_HUGEPAGE)"
        );
        Advice::Refused
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_interior: &mut [u8]) -> Advice {
    Advice::Skipped
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether this kernel has transparent huge pages not set to `never`
    /// (then `madvise(MADV_HUGEPAGE)` must succeed).
    #[cfg(target_os = "linux")]
    fn huge_pages_available() -> bool {
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .is_ok_and(|mode| !mode.contains("[never]"))
    }

    /// The `VmFlags` of the mapping of this process that contains `address`
    /// (from `/proc/self/smaps`), if any.
    #[cfg(target_os = "linux")]
    fn vm_flags(address: usize) -> Option<Vec<String>> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let range = line.split_whitespace().next().unwrap_or("");
            if let Some((low, high)) = range.split_once('-') {
                if let (Ok(low), Ok(high)) = (
                    usize::from_str_radix(low, 16),
                    usize::from_str_radix(high, 16),
                ) {
                    inside = (low..high).contains(&address);
                    continue;
                }
            }
            if let (true, Some(flags)) = (inside, line.strip_prefix("VmFlags:")) {
                return Some(flags.split_whitespace().map(str::to_string).collect());
            }
        }
        None
    }

    #[test]
    fn small_buffers_are_not_advised() {
        for bytes in [0, 1, 4096, HUGE_PAGE, HUGE_PAGE_THRESHOLD - 1] {
            let mut b = HostBuffer::zeroed(bytes);
            assert_eq!(advise_huge_pages(&mut b), Advice::Skipped, "{bytes} bytes");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn large_buffers_are_advised_before_their_first_write() {
        for bytes in [HUGE_PAGE_THRESHOLD, HUGE_PAGE_THRESHOLD + 12345, 9 << 20] {
            let mut b = HostBuffer::zeroed(bytes);
            let advice = advise_huge_pages(&mut b);
            if huge_pages_available() {
                assert_eq!(advice, Advice::Taken, "{bytes} bytes");
                // The kernel marks the interior's mapping `hg` (advised for
                // huge pages), whether or not it finds huge pages later.
                let interior = b.as_ptr().addr().next_multiple_of(HUGE_PAGE);
                if let Some(flags) = vm_flags(interior) {
                    assert!(flags.iter().any(|f| f == "hg"), "{bytes} bytes: {flags:?}");
                }
            } else {
                assert_ne!(advice, Advice::Skipped, "{bytes} bytes");
            }
            // The advice changes nothing the program sees.
            assert!(b.iter().all(|&x| x == 0));
            b.fill(7);
            assert!(b.iter().all(|&x| x == 7));
        }
    }

    /// Every way the CPU device makes a large tensor advises its buffer: the
    /// kernel marks the interior's mapping `hg`.
    #[cfg(target_os = "linux")]
    #[test]
    fn cpu_device_tensors_are_advised() {
        use crate::tensor::{Storage, Tensor};
        use crate::Device;
        if !huge_pages_available() {
            return;
        }
        let dev = Device::cpu();
        let n = HUGE_PAGE_THRESHOLD / 4 + 3;
        let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let from_slice = dev.tensor_from_slice(&data, &[n]).unwrap();
        let made: [(&str, Tensor<f32>); 4] = [
            ("zeros", dev.zeros(&[n]).unwrap()),
            ("clone", from_slice.clone()),
            ("from_slice", from_slice),
            (
                "with_strides",
                dev.tensor_with_strides(&data, &[n], &[-1], n - 1).unwrap(),
            ),
        ];
        for (how, tensor) in &made {
            let Storage::Host(h) = &tensor.storage else {
                panic!("{how}: a CPU tensor in host memory");
            };
            let start = h.data().as_ptr().addr();
            assert_eq!(start % HostBuffer::ALIGN, 0, "{how}");
            let Some(flags) = vm_flags(start.next_multiple_of(HUGE_PAGE)) else {
                return; // no /proc/self/smaps to read
            };
            assert!(flags.iter().any(|f| f == "hg"), "{how}: {flags:?}");
        }
    }

    #[test]
    fn huge_page_buffers_are_zeroed_and_aligned() {
        for bytes in [0, 100, HUGE_PAGE_THRESHOLD + 1] {
            let b = huge_page_buffer(bytes);
            assert_eq!(b.len(), bytes);
            assert_eq!(b.as_ptr().addr() % HostBuffer::ALIGN, 0);
            assert!(b.iter().all(|&x| x == 0));
        }
    }
}

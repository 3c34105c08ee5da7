//! GPU streams and the per-stream slab of status records.
//!
//! Each launch needs a status record (and, for a kernel that prints, a
//! print area after it) that the kernel writes and the host reads once the
//! launch is done. They come from pinned host memory mapped into the
//! device's address space, owned by the stream and reused: a record is
//! zero when taken (and a print area's header written), read and zeroed
//! again when its launch is finished. So a launch in the steady state
//! allocates and copies nothing: it is one launch call. Memory is
//! allocated only when more launches are in flight on the stream than it
//! has records for.

use super::backend::Raw;
use super::Context;
use crate::error::Error;
use std::sync::{Arc, Mutex, PoisonError};
use tile_abi::device_print;
use tile_abi::status::STATUS_BYTES;

/// The bytes a status record takes in the slab (a cache line, so no two
/// records share one).
const RECORD_BYTES: usize = 64;
/// Records per pinned allocation.
const RECORDS_PER_CHUNK: usize = 256;

/// A status record, or a status record with a print area after it, in
/// pinned mapped memory.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slot {
    host: *mut u8,
    /// Its device address, passed to the kernel.
    pub(crate) device: u64,
    /// Its size: [`RECORD_BYTES`], or the status record and a print area.
    bytes: usize,
}

// SAFETY: the slot's memory is pinned host memory owned by its queue's
// slab, which outlives every slot taken from it; a slot has one user at a
// time (taken from and returned to the slab's free lists under its lock).
unsafe impl Send for Slot {}

impl Slot {
    /// Whether the slot holds a print area.
    fn prints(&self) -> bool {
        self.bytes > RECORD_BYTES
    }

    /// The slot's bytes, once its launch is done.
    pub(crate) fn read(&self) -> Vec<u8> {
        let mut bytes = vec![0u8; self.bytes];
        // SAFETY: the slot's `bytes` bytes are live pinned memory (its
        // slab's), and its launch is done, so nothing writes them.
        unsafe { std::ptr::copy_nonoverlapping(self.host, bytes.as_mut_ptr(), self.bytes) };
        bytes
    }

    /// Makes the slot ready for a launch: a zero status record, and an
    /// empty print area after it.
    pub(crate) fn reset(&self) {
        // SAFETY: as in `read`; no launch uses the slot.
        unsafe { std::ptr::write_bytes(self.host, 0, STATUS_BYTES.min(self.bytes)) };
        if self.prints() {
            let area = device_print::empty_area(device_print::DEFAULT_CAPACITY);
            let at = device_print::GPU_AREA_OFFSET as usize;
            debug_assert!(at + area.len() <= self.bytes);
            // SAFETY: as above; the area fits the slot (sized for it).
            unsafe { std::ptr::copy_nonoverlapping(area.as_ptr(), self.host.add(at), area.len()) };
        }
    }
}

/// Pinned allocations and the slots not in use.
#[derive(Debug, Default)]
struct Slab {
    /// Host addresses of the pinned allocations, freed with the queue.
    chunks: Vec<*mut u8>,
    records: Vec<Slot>,
    print_areas: Vec<Slot>,
    /// Staging buffers of asynchronous copies not in use.
    staging: Vec<Staging>,
}

/// Pinned host memory an asynchronous copy goes through, owned by its
/// queue's slab and reused.
#[derive(Debug)]
pub(crate) struct Staging {
    host: *mut u8,
    bytes: usize,
}

// SAFETY: as for `Slot`: memory of the slab, one user at a time.
unsafe impl Send for Staging {}

impl Staging {
    /// Its host address, of at least the bytes asked for.
    pub(crate) fn host(&self) -> *mut u8 {
        self.host
    }
}

/// The smallest staging buffer, so small copies share sizes.
const MIN_STAGING: usize = 64 * 1024;

/// A stream of one GPU: the runtime's own (non-blocking, destroyed on
/// drop) or one the caller lends.
#[derive(Debug)]
pub(crate) struct Queue {
    pub(crate) context: Arc<Context>,
    pub(crate) raw: Raw,
    /// Whether the runtime created the stream (and destroys it).
    owned: bool,
    slab: Mutex<Slab>,
    /// What keeps a borrowed stream alive (another library's handle).
    _keep: Option<super::Owner>,
}

// SAFETY: CUDA and HIP stream handles may be used from any thread; every
// call first makes the stream's context current on the calling thread.
// The slab's raw pointers are pinned memory only reached under its lock.
unsafe impl Send for Queue {}
// SAFETY: as above.
unsafe impl Sync for Queue {}

impl Queue {
    /// A new non-blocking stream on `context`.
    pub(crate) fn new(context: &Arc<Context>) -> Result<Queue, Error> {
        let raw = context.backend.stream_create()?;
        Ok(Self::with(context, raw, true))
    }

    /// A stream the caller owns.
    ///
    /// # Safety
    ///
    /// `raw` is a stream of `context`'s device (a null handle: the legacy
    /// default stream) that stays valid until the queue drops.
    pub(crate) unsafe fn borrowed(context: &Arc<Context>, raw: Raw) -> Queue {
        Self::with(context, raw, false)
    }

    /// The queue, keeping `owner` alive as long as it lives.
    #[cfg(feature = "cudarc")]
    pub(crate) fn keeping(mut self, owner: super::Owner) -> Queue {
        self._keep = Some(owner);
        self
    }

    fn with(context: &Arc<Context>, raw: Raw, owned: bool) -> Queue {
        Queue {
            context: Arc::clone(context),
            raw,
            owned,
            slab: Mutex::new(Slab::default()),
            _keep: None,
        }
    }

    /// Waits for everything queued so far.
    pub(crate) fn synchronize(&self) -> Result<(), Error> {
        self.context.backend.stream_synchronize(self.raw)
    }

    /// A ready slot: a status record, with a print area after it if
    /// `prints`.
    pub(crate) fn take(&self, prints: bool) -> Result<Slot, Error> {
        let mut slab = self.slab.lock().unwrap_or_else(PoisonError::into_inner);
        let free = if prints {
            &mut slab.print_areas
        } else {
            &mut slab.records
        };
        if let Some(slot) = free.pop() {
            return Ok(slot);
        }
        let (bytes, count) = if prints {
            let area = device_print::empty_area(device_print::DEFAULT_CAPACITY).len();
            (device_print::GPU_AREA_OFFSET as usize + area, 1)
        } else {
            (RECORD_BYTES, RECORDS_PER_CHUNK)
        };
        let (host, device) = self.context.backend.host_alloc(bytes * count)?;
        slab.chunks.push(host);
        let slots = (0..count).map(|i| Slot {
            // SAFETY: within the allocation of `bytes * count`.
            host: unsafe { host.add(i * bytes) },
            device: device + (i * bytes) as u64,
            bytes,
        });
        let mut slots: Vec<Slot> = slots.collect();
        for slot in &slots {
            slot.reset();
        }
        let slot = slots.pop().expect("a chunk holds a slot");
        let free = if prints {
            &mut slab.print_areas
        } else {
            &mut slab.records
        };
        free.extend(slots);
        Ok(slot)
    }

    /// A staging buffer of at least `bytes` (> 0), not in use: a free one
    /// large enough, or new pinned memory (a power of two of at least
    /// 64 KiB).
    pub(crate) fn staging(&self, bytes: usize) -> Result<Staging, Error> {
        let mut slab = self.slab.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(i) = slab.staging.iter().position(|s| s.bytes >= bytes) {
            return Ok(slab.staging.swap_remove(i));
        }
        let size = bytes.next_power_of_two().max(MIN_STAGING);
        let (host, _device) = self.context.backend.host_alloc(size)?;
        slab.chunks.push(host);
        Ok(Staging { host, bytes: size })
    }

    /// Returns a staging buffer whose copy is done.
    pub(crate) fn give_back_staging(&self, staging: Staging) {
        self.slab
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .staging
            .push(staging);
    }

    /// Returns a slot whose launch is done, reset for the next.
    pub(crate) fn give_back(&self, slot: Slot) {
        slot.reset();
        let mut slab = self.slab.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.prints() {
            slab.print_areas.push(slot);
        } else {
            slab.records.push(slot);
        }
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        let mut result = self.synchronize();
        if self.owned {
            result = result.and_then(|()| self.context.backend.stream_destroy(self.raw));
        }
        let slab = self.slab.get_mut().unwrap_or_else(PoisonError::into_inner);
        for &chunk in &slab.chunks {
            result = result.and_then(|()| self.context.backend.host_free(chunk));
        }
        if let Err(e) = result {
            tracing::warn!(device = %self.context, error = %e, "releasing a stream failed");
        }
    }
}

//! What the runtime asks of a GPU API, implemented for CUDA (`cuda/`) and
//! HIP (`hip/`): memory, pinned host memory mapped into the device's
//! address space, copies and fills queued on a stream, streams, events,
//! modules, launches and graph capture. Streams, events, modules and functions are the
//! APIs' opaque pointers ([`Raw`]); device memory is a
//! 64-bit device address. Every call makes the device current on the
//! calling thread first.

use crate::error::Error;
use std::ffi::c_void;
use std::fmt;
use tile_abi::Packet;

/// An API object: `CUstream`/`hipStream_t`, `CUevent`/`hipEvent_t`, a
/// module, a function, a graph. Null is the legacy default stream.
pub(crate) type Raw = *mut c_void;

/// What a fill writes: `count` copies of a byte, or of a 32-bit word (at
/// a 4-byte aligned address).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pattern {
    /// `count` bytes of `value`.
    Bytes { value: u8, count: usize },
    /// `count` words of `value`, little-endian.
    Words { value: u32, count: usize },
}

impl Pattern {
    /// The pattern that writes `bytes` bytes as repeats of `element` (1,
    /// 2, 4 or 8 bytes) starting at `address`, if a byte or word fill can.
    pub(crate) fn of(element: &[u8], bytes: usize, address: u64) -> Option<Pattern> {
        if element.iter().all(|&b| b == element[0]) {
            return Some(Pattern::Bytes {
                value: element[0],
                count: bytes,
            });
        }
        let word: Vec<u8> = element.iter().copied().cycle().take(4).collect();
        let periodic = element.len() <= 4 || element[..4] == element[4..];
        (periodic && bytes.is_multiple_of(4) && address.is_multiple_of(4)).then(|| Pattern::Words {
            value: u32::from_le_bytes([word[0], word[1], word[2], word[3]]),
            count: bytes / 4,
        })
    }
}

/// A kernel function loaded in a module.
#[derive(Debug)]
pub(crate) struct Function {
    /// The module, unloaded by [`Backend::unload`].
    pub(crate) module: Raw,
    /// The kernel in it.
    pub(crate) function: Raw,
    /// The dynamic shared memory each launch passes, in bytes.
    pub(crate) dynamic_shared: u32,
    /// Whether a launch may start before the one before it on its stream
    /// finishes (programmatic dependent launch: the kernel waits for it at
    /// `gdc_wait`, sm_90+).
    pub(crate) overlap: bool,
}

/// One GPU API driving one device.
pub(crate) trait Backend: fmt::Debug + Send + Sync {
    /// Allocates `bytes` (> 0) of device memory.
    fn alloc(&self, bytes: usize) -> Result<u64, Error>;
    /// Frees memory from [`Backend::alloc`].
    fn free(&self, pointer: u64) -> Result<(), Error>;
    /// Allocates `bytes` (> 0) of pinned host memory mapped into the
    /// device's address space: its host and its device address.
    fn host_alloc(&self, bytes: usize) -> Result<(*mut u8, u64), Error>;
    /// Frees memory from [`Backend::host_alloc`].
    fn host_free(&self, host: *mut u8) -> Result<(), Error>;
    /// Queues a copy of `bytes` from host memory at `from` to device
    /// memory at `to` on `stream`.
    ///
    /// # Safety
    ///
    /// `from` holds `bytes` readable bytes until the stream has run the
    /// copy; `to` is device memory of at least `bytes`.
    unsafe fn upload(
        &self,
        to: u64,
        from: *const u8,
        bytes: usize,
        stream: Raw,
    ) -> Result<(), Error>;
    /// Queues a copy of `bytes` from device memory at `from` to host memory
    /// at `to` on `stream`.
    ///
    /// # Safety
    ///
    /// `to` holds `bytes` writable bytes, not otherwise accessed until the
    /// stream has run the copy; `from` is device memory of at least
    /// `bytes`.
    unsafe fn download(
        &self,
        to: *mut u8,
        from: u64,
        bytes: usize,
        stream: Raw,
    ) -> Result<(), Error>;
    /// Queues a copy of `bytes` between device buffers of at least that
    /// size on `stream`.
    fn copy(&self, to: u64, from: u64, bytes: usize, stream: Raw) -> Result<(), Error>;
    /// Queues filling device memory at `to` with `pattern` on `stream`.
    fn fill(&self, to: u64, pattern: Pattern, stream: Raw) -> Result<(), Error>;
    /// A new stream that does not synchronize with the legacy default
    /// stream.
    fn stream_create(&self) -> Result<Raw, Error>;
    /// Waits until `stream` has run everything queued on it.
    fn stream_synchronize(&self, stream: Raw) -> Result<(), Error>;
    /// Destroys a stream from [`Backend::stream_create`].
    fn stream_destroy(&self, stream: Raw) -> Result<(), Error>;
    /// Makes `stream` wait for `event`'s last record.
    fn stream_wait(&self, stream: Raw, event: Raw) -> Result<(), Error>;
    /// A new event; `timing` makes it usable for elapsed times.
    fn event_create(&self, timing: bool) -> Result<Raw, Error>;
    /// Records `event` on `stream`.
    fn event_record(&self, event: Raw, stream: Raw) -> Result<(), Error>;
    /// Whether the work before `event`'s last record has run.
    fn event_done(&self, event: Raw) -> Result<bool, Error>;
    /// Waits until the work before `event`'s last record has run.
    fn event_synchronize(&self, event: Raw) -> Result<(), Error>;
    /// Milliseconds between two recorded, finished timing events.
    fn event_elapsed(&self, start: Raw, end: Raw) -> Result<f32, Error>;
    /// Destroys an event from [`Backend::event_create`].
    fn event_destroy(&self, event: Raw) -> Result<(), Error>;
    /// Waits until the device has run everything queued on it.
    fn synchronize(&self) -> Result<(), Error>;
    /// Loads `image` and finds kernel `name` in it, opted in to
    /// `dynamic_shared` bytes of dynamic shared memory; a refusal is the
    /// driver's message.
    fn load(&self, image: &[u8], name: &str, dynamic_shared: usize) -> Result<Function, String>;
    /// Unloads a module from [`Backend::load`].
    fn unload(&self, function: &Function) -> Result<(), Error>;
    /// Queues `function` on `stream` with `block` threads per block.
    ///
    /// # Safety
    ///
    /// The packet holds the kernel's parameters in its ABI (checked
    /// against its signature); every address in it is device memory
    /// covering what the kernel reaches, alive until the launch has run.
    unsafe fn launch(
        &self,
        function: &Function,
        grid: [u32; 3],
        block: u32,
        packet: &mut Packet,
        stream: Raw,
    ) -> Result<(), Error>;
    /// The CUDA context used (`None` for HIP).
    #[cfg(feature = "cudarc")]
    fn cuda_context(&self) -> Option<Raw> {
        None
    }
    /// Starts capturing `stream`'s work into a graph instead of running it
    /// (relaxed mode: other threads' calls are not affected).
    fn capture_begin(&self, stream: Raw) -> Result<(), Error>;
    /// Ends the capture of `stream`: the instantiated graph.
    fn capture_end(&self, stream: Raw) -> Result<Raw, Error>;
    /// Queues an instantiated graph on `stream`.
    fn graph_launch(&self, graph: Raw, stream: Raw) -> Result<(), Error>;
    /// Destroys an instantiated graph.
    fn graph_destroy(&self, graph: Raw) -> Result<(), Error>;
}

#[cfg(test)]
mod tests {
    use super::Pattern;

    #[test]
    fn a_fill_is_by_byte_or_by_word_where_one_writes_the_value() {
        let bytes = |value, count| Some(Pattern::Bytes { value, count });
        let words = |value, count| Some(Pattern::Words { value, count });
        assert_eq!(Pattern::of(&0f32.to_le_bytes(), 40, 0x100), bytes(0, 40));
        assert_eq!(Pattern::of(&[0xff; 8], 16, 0x100), bytes(0xff, 16));
        assert_eq!(
            Pattern::of(&1.5f32.to_le_bytes(), 40, 0x100),
            words(0x3fc0_0000, 10)
        );
        // An f16 pattern repeats in a word when the bytes are a whole number of words.
        assert_eq!(Pattern::of(&[0x00, 0x3c], 8, 0x100), words(0x3c00_3c00, 2));
        assert_eq!(Pattern::of(&[0x00, 0x3c], 6, 0x100), None);
        assert_eq!(Pattern::of(&[0x00, 0x3c], 8, 0x102), None);
        // An 8-byte value fills by words only when its halves agree.
        assert_eq!(Pattern::of(&1.5f64.to_le_bytes(), 16, 0x100), None);
        assert_eq!(
            Pattern::of(&[1, 2, 3, 4, 1, 2, 3, 4], 16, 0x100),
            words(0x0403_0201, 4)
        );
    }
}

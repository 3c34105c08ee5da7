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
    /// Queues zeroing `bytes` of device memory at `to` on `stream`.
    fn zero(&self, to: u64, bytes: usize, stream: Raw) -> Result<(), Error>;
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

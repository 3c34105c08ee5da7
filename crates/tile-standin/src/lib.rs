//! Stand-ins for the GPU driver libraries, for tests on machines without a
//! GPU: built as one shared library that a test puts on `LD_LIBRARY_PATH`
//! under the names `tile-runtime` opens (`libcuda.so`, `libamdhip64.so`,
//! ...), so the runtime's own CUDA and HIP code paths run unchanged.
//!
//! Each call checks its arguments as a real driver does and fails with the
//! code a real driver returns: device ordinals, handles, memory ranges of
//! copies against the allocations, a module's kernel names and target, and
//! at launch the block size against the kernel's launch bounds (`.reqntid`
//! in the PTX, `.max_flat_workgroup_size` in a code object's metadata), the
//! argument buffer against the kernel's arguments, the grid against the
//! device limits and the shared memory against the device's. Launches run
//! through the emulation target (`tile_codegen::emulation`, `tile-emu`):
//! the stand-in cannot compile PTX or a code object itself, so a test
//! builds the emulation image of each kernel beforehand and stores it in
//! the directory named by
//! [`IMAGES_ENV`], under the [`image_key`] of the device image it was made
//! with. A launch that the emulator stops (an access outside every
//! allocation, a misaligned access, threads that never meet) makes the
//! context's error sticky, as a faulting kernel does on hardware: the next
//! synchronization returns it, and the emulator's message goes to standard
//! error.
//!
//!
//! Streams and events are modelled as far as a runtime's correctness
//! depends on them: which streams are non-blocking, the events' records
//! and times, graph capture (`capture.rs`) and the implicit
//! synchronization rules, which [`calls`] reports for every call.
//!
//! * [`cuda`]: the CUDA driver API calls `tile-runtime` makes through its
//!   own bindings;
//! * [`hip`]: the HIP runtime API calls `tile-runtime` makes;
//! * [`calls`]: the log of every call, which the library exports;
//! * `ptx`, `hsaco` (with `msgpack`): what a driver reads from PTX text and
//!   from a code object (entries, arguments, launch bounds, shared memory,
//!   target);
//! * `driver`: handles, modules, the launch checks and the launch itself;
//! * `streams`: streams and events; `capture`: stream capture and graphs;
//! * `memory`: device and pinned host allocations (host memory registered
//!   with `tile-emu`);
//! * `images`: the emulation images, by key.

mod capture;
mod driver;
mod hsaco;
mod images;
mod memory;
mod msgpack;
mod ptx;
mod streams;

pub mod calls;
pub mod cuda;
pub mod hip;

pub use images::{image_key, IMAGES_ENV, LAUNCH_ENV};

//! Compiled host code for the CPU device: what `tile_codegen::host` builds
//! and this module loads and runs.
//!
//! A kernel compiled for the host is a shared object (ELF, linked by
//! lld's `-shared`) with three symbols (`tile_abi::host`):
//!
//! ```text
//! u32  tile_host_kernel(const u64 *packet, const i32 ids[6], u8 *frame, Status *status);
//! u64  tile_host_frame_bytes;        // scratch bytes one program instance needs
//! ptr  tile_host_math[9];            // exp, exp2, log, log2, sin, cos, tanh, erf, pow (f64)
//! ```
//!
//! * **The kernel** runs one program instance: `ids` is its program id then
//!   the grid, the packet holds the arguments (`packet.rs`), `frame` is scratch
//!   memory for its tiles and `status` receives a failed check.
//! * **The math table** is filled by [`HostLibrary::load`] with the oracle's
//!   own f64 functions (`tile_ir::eval`), so compiled code computes what the
//!   interpreter computes, bit for bit, without linking a math library.
//! * **The ISA** ([`HostIsa`]): each kernel is compiled for a few fixed
//!   instruction-set levels (x86-64-v3 and baseline x86-64, or aarch64), and
//!   the CPU device runs the best one this CPU supports, detected at run
//!   time, so a binary built on one machine runs correctly on another.
//! * **Streaming stores** (`cache.rs`): the packet's last slot is a size
//!   threshold; code for x86-64 stores an output tensor at least that large,
//!   which the kernel never reads, with non-temporal stores.
//!
//! * **Tensor buffers** (`pages.rs`): a CPU-device tensor's buffer starts on
//!   a 64-byte boundary (`tile_ir::interp::HostBuffer`), and one of at least
//!   [`HUGE_PAGE_THRESHOLD`] bytes is advised, on Linux, to use
//!   transparent huge pages before its first write.
//!
//! [`HostLibrary::run`] checks the arguments, packs them, runs every program
//! instance of the grid on all cores (`grid.rs`, on worker threads started
//! once per process, `pool.rs`) and turns the first failing instance's
//! status record into a [`RunError`].

mod cache;
mod fault;
mod grid;
mod library;
mod math;
mod packet;
pub(crate) mod pages;
mod pool;

pub use cache::default_stream_threshold;
pub use fault::{HostFault, RunError};
pub use library::{HostLibrary, LoadError};
pub use pages::{huge_page_buffer, HUGE_PAGE_THRESHOLD};
pub(crate) use pool::parallelism;
/// The instruction-set levels of host code, which the CPU device chooses
/// among (defined with the rest of the host ABI in `tile_abi`).
pub use tile_abi::HostIsa;

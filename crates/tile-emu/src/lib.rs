//! Runs GPU kernels on the CPU: the emulation images of
//! `tile_codegen::emulation`, which are the exact LLVM modules a GPU target
//! receives, moved to the host with their intrinsics calling this runtime.
//!
//! * Every GPU thread of a block is a stackful coroutine; threads run one
//!   at a time, in order, until each waits or ends, so a run is
//!   deterministic. A barrier completes when every thread of the block has
//!   arrived; a shuffle when every lane of the warp has, with PTX
//!   `shfl.sync`'s semantics; a permute when every lane of the wave has
//!   (wave64 on CDNA, wave32 on RDNA). Threads that wait at different
//!   points are reported as divergence, not left to hang.
//! * Blocks run one after another; each starts with its shared memory
//!   poisoned (all ones) and a shadow that reports races: two threads
//!   touching a byte between two barriers, one of them writing.
//! * Global memory is what [`register`] made reachable: an access outside
//!   every allocation, or not aligned as its instruction claims (a
//!   misaligned `ld.v4` faults on hardware), stops the launch before it
//!   touches memory. Two threads of different blocks that meet at one
//!   byte race unless both update it atomically or one's access happens
//!   before the other's (`global.rs`, `tile_hw::happens`: barriers, and
//!   acquire/release atomics and fences at `cta` or `gpu` scope, as the
//!   image reports them through `Op::Atomic` and `Op::Fence`): the launch
//!   stops there too.
//!
//! * `cp.async` copies are checked when issued and carried out when a
//!   `cp.async.wait_group` completes their group.
//! * A tensor-core step (`mma.sync`, WMMA) completes when every lane of
//!   the warp has arrived, an MFMA when every lane of the 64-lane wave
//!   has, multiplied by the instruction set's lane layouts
//!   (`tile_hw::mma`); a `wgmma` when every thread of the 128-thread
//!   warpgroup has, its operands read from shared memory through their
//!   descriptors (`tile_hw::wgmma`).
//! * A TMA copy reads its box when issued, through the tensor map's
//!   encoding of `tile_abi::tma`, and lands when a `try_wait` of its
//!   mbarrier completes the phase it completes on (`tma.rs`).
//!
//! `lanes.rs` holds the lane semantics, checked against independent
//! formulas; the rest of the ISA is the host's execution of the module.

mod block;
mod calls;
mod copies;
mod error;
mod global;
mod image;
mod lanes;
mod memory;
mod mma;
mod shadow;
mod tcgen05;
mod tma;
mod wgmma;

pub use error::{EmuError, Place};
pub use image::EmulatedKernel;
pub use memory::{register, unregister};

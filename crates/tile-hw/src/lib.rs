//! The GPU hardware as both of tile's emulators model it — the lockstep
//! emulator of thread-level programs (`tile_thread::emulate`) and the
//! emulation target's runtime (`tile-emu`) — and as the lowering and the
//! GPU emitter lay data out for it:
//!
//! * [`mma`]: the tensor-core instructions (`mma.sync`, WMMA, MFMA), their
//!   lane layouts (from the PTX ISA and AMD's matrix instruction
//!   calculator), the lanes that issue one, one arithmetic per step of the
//!   instruction's `K`, and [`ldmatrix`] the warp's loads of their
//!   fragments from shared memory;
//! * [`wgmma`]: Hopper's warpgroup instructions: shared-memory matrix
//!   descriptors, the swizzled operand layouts and the
//!   accumulator layout;
//! * [`tcgen05`]: Blackwell's tensor memory, its single-thread MMA with
//!   its instruction and shared-memory descriptors, and the warps' loads
//!   and stores of tensor memory;
//! * [`mbarrier`]: the phases of the barriers bulk copies complete on;
//! * [`happens`]: happens-before between a launch's threads (barriers,
//!   atomics and fences with their orders and scopes), and [`races`] the race
//!   rule of global memory built on it.
//!
//! What the compiler and the runtime agree on (status records, parameters,
//! tensor maps, the emulation image's runtime calls) is `tile-abi`'s.
#![warn(missing_docs)]

pub mod happens;
pub mod ldmatrix;
pub mod mbarrier;
pub mod mma;
pub mod races;
pub mod tcgen05;
pub mod wgmma;

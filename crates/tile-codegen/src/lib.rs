//! Code generation for tile kernels: lowering to a thread-level program, its lockstep emulator,
//! and LLVM code generation for NVPTX, AMDGPU and the host.
//!
//! * [`layout_assign`]: distributed layouts of tile values (blocked layouts and their slices,
//!   expressed with the CuTe layout algebra of `tile_ir::layout`);
//! * [`thread`]: the thread-level program — per-thread registers, global and shared memory,
//!   barriers, shuffles, uniform `for`/`if` — with its text form;
//! * [`lower`]: tile IR → thread-level program, one file per op family;
//! * [`emulate`]: runs a thread-level program on the CPU, all threads of a block in lockstep,
//!   reporting out-of-bounds accesses, uninitialized shared reads and shared-memory races;
//! * [`host`]: tile IR compiled for the CPU through LLVM's JIT, one function per program
//!   instance, run in parallel over the grid (not yet used by the CPU device);
//! * [`target`]: the targets (NVPTX `sm_*`, AMDGPU `gfx*`, host), their LLVM triples, CPUs and
//!   features, and LLVM 19 target machines that emit assembly and object files;
//! * [`tools`]: finding and running `ptxas`, `ld.lld` and `llvm-objdump`.
//!
//! `docs/lowering.md` describes the lowering and the emulator. LLVM 19 comes from Debian's
//! `llvm-19-dev` and `ptxas` from PyPI's `nvidia-cuda-nvcc`; `scripts/setup.sh` installs both
//! (see `docs/backends.md`).
#![warn(missing_docs)]

pub mod emit;
pub mod host;
pub mod target;
pub mod tools;

pub use inkwell;
pub use target::{default_targets, Gfx, Machine, Sm, Target, TargetError};
pub use tools::{assemble_ptx, link_shared_object, Tool, ToolError};

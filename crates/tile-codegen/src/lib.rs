//! LLVM code generation for tile kernels: the GPU emitter of thread-level
//! programs for NVPTX and AMDGPU, the host back end for the CPU device, and
//! the driver that takes a kernel through every stage for every target.
//!
//! * [`driver`]: the compile driver, a kernel's tile IR to every image it embeds: the pass
//!   pipeline, the thread-level program (`tile-thread`), each target's code
//!   (targets compiled concurrently), and the stage dumps of `TILE_DUMP`;
//! * [`cache`]: the kernel cache, each target's output on disk under the
//!   digest of what it depends on;
//! * [`gpu`]: thread-level programs to PTX and AMDGPU code objects;
//! * [`emulation`]: the module a GPU target receives, moved to the host so
//!   that it runs on the CPU (`tile-emu` runs it);
//! * [`host`]: tile IR compiled ahead of time for the CPU device, one shared
//!   object per instruction-set level;
//! * [`scalar`]: the scalar semantics of `tile_ir::eval` in LLVM IR, shared
//!   by both, with the exact and the fast math library;
//! * [`target`]: the targets (NVPTX `sm_*`, AMDGPU `gfx*`, host levels), their
//!   LLVM triples, CPUs and features, and LLVM target machines;
//! * [`tools`]: finding and running `ptxas` and `llvm-objdump`; assembling
//!   AMDGPU objects and linking shared objects with LLVM's assembler and lld,
//!   in this process.
//!
//! LLVM 22 comes from Debian's `llvm-22-dev` and `ptxas` from PyPI's
//! `nvidia-cuda-nvcc`; `scripts/setup.sh` installs both (see
//! `docs/backends.md`).
#![warn(missing_docs)]

pub mod cache;
mod diagnostics;
mod dominator_sink;
pub mod driver;
pub mod emulation;
mod error;
pub mod gpu;
pub mod host;
mod loop_sink;
mod module;
mod nans;
mod native;
mod options;
pub mod scalar;
mod sink;
pub mod target;
pub mod tools;
mod unroll;

pub use error::EmitError;
pub use inkwell;
pub use options::CodegenOptions;
pub use target::{
    default_targets, parse_targets, Gfx, Machine, SharedPointers, Sm, Target, TargetError,
};
pub use tools::{assemble_ptx, link_shared_object, Tool, ToolError};

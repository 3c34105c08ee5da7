//! LLVM code generation for tile kernels (work in progress).
//!
//! So far this crate holds the foundation that the code generator will stand on:
//!
//! * [`target`]: the targets (NVPTX `sm_*`, AMDGPU `gfx*`, host), their LLVM triples, CPUs and
//!   features, and LLVM 19 target machines that emit assembly and object files;
//! * [`tools`]: finding and running `ptxas`, `ld.lld` and `llvm-objdump`.
//!
//! LLVM 19 comes from Debian's `llvm-19-dev` and `ptxas` from PyPI's `nvidia-cuda-nvcc`;
//! `scripts/setup.sh` installs both (see `docs/backends.md`).
#![warn(missing_docs)]

pub mod emulate;
pub mod layout_assign;
pub mod lower;
pub mod target;
pub mod thread;
pub mod tools;

pub use inkwell;
pub use target::{default_targets, Gfx, Machine, Sm, Target, TargetError};
pub use tools::{assemble_ptx, link_hsaco, Tool, ToolError};

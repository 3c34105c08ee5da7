//! The thread-level program of tile kernels and everything that needs no
//! LLVM: layout assignment, the lowering from tile IR, the program's text
//! form and verifier, and the lockstep emulator.
//!
//! * [`layout_assign`]: distributed layouts of tile values (blocked layouts
//!   and their slices, tensor-core accumulators, expressed with the CuTe
//!   layout algebra of `tile_ir::layout`);
//! * [`program`]: the thread-level program ([`Program`]): per-thread
//!   registers, global and shared memory, barriers, shuffles, `mma`, uniform
//!   `for`/`if`, with its text form (printer and parser) and verifier;
//! * [`mod@lower`]: tile IR to the thread-level program, one file per op family;
//! * [`emulate`]: runs a thread-level program on the CPU, all threads of a
//!   block in lockstep, reporting out-of-bounds accesses, uninitialized
//!   shared reads and shared-memory races.
//!
//! `tile-codegen` emits the program through LLVM for the GPU targets.
//! `docs/lowering.md` describes the lowering and the emulator.
#![warn(missing_docs)]

pub mod emulate;
pub mod layout_assign;
pub mod lower;
pub mod program;

pub use lower::{lower, LowerError, TensorCores};
pub use program::{
    parse_program, MmaKind, Op, OpId, Param, ParamKind, Program, Reg, Region, ShuffleMode,
    ThreadOpKind,
};

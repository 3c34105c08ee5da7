//! The host back end: tile-IR kernels compiled ahead of time for the CPU
//! through LLVM, into a shared object per instruction-set level that
//! `tile_runtime::cpu` loads and runs, program instances in parallel.
//!
//! The GPU path lowers a kernel to a thread-level program first; the host
//! needs none of that. [`compile`] turns the tile-IR [`Function`] itself into
//! one LLVM function that runs **one program instance**:
//!
//! ```text
//! u32 kernel(const u64 *packet, const i32 ids[6], u8 *frame, Status *status)
//! ```
//!
//! * **Arguments** (`abi`): the packet holds the parameters in the order of
//!   the GPU kernel ABI (docs/backends.md), one 8-byte slot each: a tensor of
//!   rank r as its base pointer (element zero), r extents and r strides in
//!   elements; a scalar as its bits. `ids` is the program id then the grid.
//! * **Tiles** (`frame`): every tile value has a fixed place in a per-worker
//!   scratch `frame` (its shape is static), and every op on tiles is a loop
//!   nest over elements that loads its operands' elements, computes with the
//!   scalar emitter of [`crate::scalar`] — the code the GPUs get, tested bit for
//!   bit against `tile_ir::eval` — and stores the result's. LLVM's `O3`
//!   vectorizes the loops. `reshape` is free (the same bytes); scalars are
//!   SSA values, and values carried by `for` or merged by `if` live in stack
//!   slots that LLVM promotes to registers.
//! * **Orders** (`reduce`, `dot`): reductions, scans and `dot` combine in
//!   the interpreter's order (docs/semantics.md §6), with loops arranged so
//!   that the independent lanes are the innermost, vectorizable loop; `dot`
//!   is a register-blocked micro-kernel of vector `fma`s.
//! * **Math** (`math`): `exp`, `log`, `sin`, … call the oracle's own f64
//!   functions through a table the runtime fills when it loads the code, so
//!   host results equal the interpreter's for every op and dtype; `exp`
//!   (`exp`) is instead a bit-exact replica of the oracle's in LLVM IR,
//!   branch-free, so loops that call it vectorize. Under
//!   [`crate::CodegenOptions::fast_math`] the f32 and narrower
//!   transcendentals are the GPUs' fast f32 library instead, inlined and
//!   vectorized: bit for bit the GPU code's results, within the library's
//!   ulp bounds of the interpreter's.
//! * **Layout views** (`lview`): a view is its static layout and a runtime
//!   `i128` base; derived views add the shift `tile_ir::lview::derive`
//!   describes, evaluated at run time.
//! * **Errors** (`check`): what the interpreter reports inside a program — a
//!   partition index outside the view's index space, an unmasked access to a
//!   partially out-of-bounds partition or outside a layout view's element
//!   space, a non-positive `for` step, a loop over the iteration limit — is
//!   checked before the access or loop; a failure writes the status record
//!   and returns its code, so the failing access touches no memory and
//!   nothing after it runs.
//! * **Compile** (`compile`): [`compile`] optimizes the module with `O3`
//!   for one `tile_abi::HostIsa` (x86-64-v3, baseline x86-64, aarch64: fixed
//!   levels, not the building CPU, so the code runs wherever the runtime
//!   detects its level), emits an object and links it with lld (`-shared`).
//!   The runtime (`tile_runtime::cpu::HostLibrary`) loads the
//!   [`HostImage`], checks and packs the arguments (refusing tensors whose
//!   strides may make two elements share an address), runs the program
//!   instances on all cores and returns the error of the first failing
//!   instance in the interpreter's order (x fastest).
//!
//! Every op of the tile IR is covered. What the host refuses is reported as
//! [`HostError::Unsupported`]: a store through a layout that sends two
//! elements to one offset (as the GPU lowering refuses it).

mod alias;
mod arg_reduce;
mod arrays;
mod assert;
mod atomic;
mod check;
mod combine;
mod compile;
mod control;
mod device_print;
mod dot;
mod elementwise;
mod error;
mod exp;
mod frame;
mod fuse;
mod gather;
mod kernel;
mod lazy;
mod lview;
mod math;
mod memory;
mod movement;
mod nan;
mod plan;
mod prefetch;
mod reduce;
mod stream;
mod transpose;

pub use compile::{compile, HostImage};
pub use error::HostError;
pub use exp::{exp_probe, EXP_PROBE};
pub use plan::{plan, HostPlan};

#[cfg(doc)]
use tile_ir::Function;

/// The symbols a host shared object may import, all from the C library:
/// memory functions, and the math functions LLVM calls where an
/// instruction-set level has no instruction (baseline x86-64 has no `fma`
/// and no `roundsd`; no level has C's `round`). `tile_runtime::cpu` makes the math library's symbols
/// global before it loads a kernel.
pub const C_LIBRARY_IMPORTS: &[&str] = &[
    "memcpy",
    "memmove",
    "memset",
    "fma",
    "fmaf",
    "floor",
    "floorf",
    "ceil",
    "ceilf",
    "trunc",
    "truncf",
    "rint",
    "rintf",
    "nearbyint",
    "nearbyintf",
    "round",
    "roundf",
    "roundeven",
    "roundevenf",
];

//! The attributes of atomics and fences: an atomic's update, and the
//! memory order and scope of atomics and fences (docs/semantics.md, "The
//! memory model").

use crate::dtype::DType;
use std::fmt;

/// The update of an [`OpKind::Atomic`](super::OpKind::Atomic).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    /// `add`: `old + value` (wrapping for integers; rounded for floats).
    Add,
    /// `max`: the larger of `old` and `value` (NaN if either is NaN).
    Max,
    /// `min`: the smaller of `old` and `value` (NaN if either is NaN).
    Min,
    /// `and`: bitwise and of integers.
    And,
    /// `or`: bitwise or of integers.
    Or,
    /// `xor`: bitwise xor of integers.
    Xor,
    /// `xchg`: `value`, whatever `old` was.
    Xchg,
    /// `cas`: `value` if `old` equals `cmp` bit for bit, else `old`.
    Cas,
}

impl AtomicOp {
    /// The dtypes the update is defined for: 32- and 64-bit integers for
    /// every update; `f32` and `f64` for `add`, `max`, `min`, `xchg` and
    /// `cas`; `f16` and `bf16` for `add`, `xchg` and `cas`; `i16` and `u16`
    /// for `xchg` and `cas` (a 16-bit atomic where the target has one, a
    /// compare-and-swap loop on the aligned 32-bit word where it does not:
    /// docs/backends.md, "Atomics").
    pub fn supports(self, dtype: DType) -> bool {
        use DType::*;
        let wide_int = matches!(dtype, I32 | U32 | I64 | U64);
        let wide_float = matches!(dtype, F32 | F64);
        let half = matches!(dtype, F16 | BF16);
        match self {
            AtomicOp::Add => wide_int || wide_float || half,
            AtomicOp::Xchg | AtomicOp::Cas => {
                wide_int || wide_float || half || matches!(dtype, I16 | U16)
            }
            AtomicOp::Max | AtomicOp::Min => wide_int || wide_float,
            AtomicOp::And | AtomicOp::Or | AtomicOp::Xor => wide_int,
        }
    }

    /// The dtypes [`AtomicOp::supports`] accepts, for messages.
    pub fn supported_text(self) -> &'static str {
        match self {
            AtomicOp::Add => "i32, u32, i64, u64, f16, bf16, f32 and f64",
            AtomicOp::Xchg | AtomicOp::Cas => {
                "i16, u16, i32, u32, i64, u64, f16, bf16, f32 and f64"
            }
            AtomicOp::Max | AtomicOp::Min => "i32, u32, i64, u64, f32 and f64",
            AtomicOp::And | AtomicOp::Or | AtomicOp::Xor => "i32, u32, i64 and u64",
        }
    }
}

/// The memory ordering of an atomic update (C++'s, and PTX's `.sem`):
/// what the program's other accesses may not be reordered across.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemOrder {
    /// `relaxed`: the update alone is indivisible; nothing else is ordered.
    Relaxed,
    /// `acquire`: later accesses of the thread stay after the update.
    Acquire,
    /// `release`: earlier accesses of the thread stay before the update.
    Release,
    /// `acq_rel`: both (the default, as Triton's).
    AcqRel,
    /// `seq_cst`: for fences only, `acq_rel` and one total order of every
    /// `seq_cst` fence (PTX `fence.sc`).
    SeqCst,
}

impl MemOrder {
    /// The orders an atomic may have: all but `seq_cst`.
    pub const ATOMIC: [MemOrder; 4] = [
        MemOrder::Relaxed,
        MemOrder::Acquire,
        MemOrder::Release,
        MemOrder::AcqRel,
    ];

    /// Whether the order keeps later accesses after the op.
    pub fn acquires(self) -> bool {
        matches!(
            self,
            MemOrder::Acquire | MemOrder::AcqRel | MemOrder::SeqCst
        )
    }

    /// Whether the order keeps earlier accesses before the op.
    pub fn releases(self) -> bool {
        matches!(
            self,
            MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst
        )
    }
}

/// The threads an atomic's ordering is promised to (PTX's `.scope`). A
/// target may keep a wider promise than asked (docs/semantics.md,
/// "Atomics"). Tensors live in device memory, so no scope reaches the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemScope {
    /// `cta`: the threads of the program's block.
    Cta,
    /// `gpu`: every thread of the device (the default).
    Gpu,
}

text_names!(AtomicOp "atomic update" {
    Add => "add", Max => "max", Min => "min", And => "and", Or => "or", Xor => "xor",
    Xchg => "xchg", Cas => "cas",
});
text_names!(MemOrder "memory order" { Relaxed => "relaxed", Acquire => "acquire", Release => "release", AcqRel => "acq_rel", SeqCst => "seq_cst" });
text_names!(MemScope "memory scope" { Cta => "cta", Gpu => "gpu" });

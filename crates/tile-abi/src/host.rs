//! The contract of compiled host code: its symbols, the entry point's type,
//! the math table, the packet slots and the list of checks.
//!
//! A kernel compiled for the host is a shared object with three symbols:
//!
//! ```text
//! u32  tile_host_kernel(const u64 *packet, const i32 ids[6], u8 *frame, Status *status);
//! u64  tile_host_frame_bytes;        // scratch bytes one program instance needs
//! ptr  tile_host_math[2];            // f64 (*)(u32 slot, f64), f64 (*)(u32 slot, f64, f64)
//! ```
//!
//! The kernel runs one program instance: `ids` is its program id then the
//! grid, the packet holds the arguments ([`slots`]), `frame` is scratch
//! memory for its tiles and `status` receives a failed check
//! ([`crate::Status`]). The runtime fills the math table with the oracle's
//! own f64 functions when it loads the object.

use crate::Status;
use std::borrow::Cow;
use tile_ir::{Function, Param, Type};

/// The kernel function: runs one program instance.
pub const ENTRY_SYMBOL: &str = "tile_host_kernel";
/// A `u64` constant: the bytes of scratch memory one program instance needs.
pub const FRAME_BYTES_SYMBOL: &str = "tile_host_frame_bytes";
/// A [`MathTable`] of function pointers, filled at load time.
pub const MATH_TABLE_SYMBOL: &str = "tile_host_math";

/// The compiled kernel: `(packet, ids, frame, status) -> code`, where `ids`
/// is the program id (x, y, z) then the grid, and a non-zero code means the
/// status record was written.
pub type HostEntry = unsafe extern "C" fn(*const u64, *const i32, *mut u8, *mut Status) -> u32;

/// The table's function of one operand: `(slot, x)`, where `slot` indexes
/// [`tile_ir::UnaryOp::MATH`].
pub type UnaryMathFn = extern "C" fn(u32, f64) -> f64;

/// The table's function of two operands: `(slot, x, y)`, where `slot`
/// indexes [`tile_ir::BinaryOp::MATH`].
pub type BinaryMathFn = extern "C" fn(u32, f64, f64) -> f64;

/// The math table compiled host code calls through: the f64 functions of
/// the math library ([`tile_ir::UnaryOp::MATH`], [`tile_ir::BinaryOp::MATH`]), chosen by
/// their index in those lists.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct MathTable {
    /// The functions of one operand.
    pub unary: UnaryMathFn,
    /// The functions of two operands.
    pub binary: BinaryMathFn,
}

/// The number of function pointers in the [`MathTable`].
pub const MATH_TABLE_SLOTS: usize = 2;

/// An op of a compiled kernel that checks something at run time: what a
/// status record's `check` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostCheck {
    /// The op, as `tile_ir::ValueNames::describe_site` writes it.
    pub op: Cow<'static, str>,
    /// How many values its failures record (at most four).
    pub values: u8,
}

/// The first packet slot of each parameter of `func`.
///
/// The packet lists the parameters in order, one 8-byte slot per word of the
/// GPU kernel ABI ([`crate::params`]): a tensor of rank r is its base pointer
/// (the address of element zero), r extents and r strides in elements; a
/// scalar is its bits, zero-extended (bool 0 or 1, f16/bf16/FP8 their bits).
/// The slot after the parameters ([`threshold_slot`]) holds the streaming
/// threshold in bytes, from which an output tensor gets non-temporal stores;
/// the next ([`print_slot`]) the address of the print area
/// ([`crate::device_print`]), or 0 when the kernel does not print.
pub fn slots(func: &Function) -> Vec<u64> {
    let mut next = 0;
    func.params
        .iter()
        .map(|p| {
            let at = next;
            next += width(func, p);
            at
        })
        .collect()
}

/// The slot of the streaming threshold: the one after the parameters'.
pub fn threshold_slot(func: &Function) -> u64 {
    func.params.iter().map(|p| width(func, p)).sum()
}

/// The slot of the print area's address: the one after the threshold.
pub fn print_slot(func: &Function) -> u64 {
    threshold_slot(func) + 1
}

/// The slots of parameter `p`.
fn width(func: &Function, p: &Param) -> u64 {
    match func.ty(p.value) {
        Type::Tensor(t) => 1 + 2 * t.rank as u64,
        Type::Tensors(_) => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_one_pointer_per_slot() {
        let pointer = std::mem::size_of::<*const u8>();
        assert_eq!(std::mem::size_of::<MathTable>(), MATH_TABLE_SLOTS * pointer);
        assert_eq!(std::mem::offset_of!(MathTable, binary), pointer);
    }

    #[test]
    fn tensors_take_one_slot_per_word_and_the_threshold_comes_last() {
        // x: 2-D, w, b: 1-D, out: 2-D, eps: f32.
        let layernorm = tile_ir::samples::layernorm(2, 8).unwrap();
        assert_eq!(slots(&layernorm), [0, 5, 8, 11, 16]);
        assert_eq!(threshold_slot(&layernorm), 17);
        assert_eq!(print_slot(&layernorm), 18);
    }
}

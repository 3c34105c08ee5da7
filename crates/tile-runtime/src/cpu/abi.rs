//! The contract between compiled host code and the runtime: symbol names,
//! the status record, the entry point's type and the math table.

use std::borrow::Cow;
use tile_ir::{eval, BinaryOp, Scalar, UnaryOp};

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

/// A math function of the table: an f64 to an f64.
pub type MathFn = extern "C" fn(f64) -> f64;

/// The table's `pow`: `(x, y) -> x^y` in f64.
pub type PowFn = extern "C" fn(f64, f64) -> f64;

/// The math table compiled host code calls through: [`MATH_OPS`] slot by
/// slot, then `pow` (slot [`POW_SLOT`]), all pointers.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct MathTable {
    /// The functions of [`MATH_OPS`], in order.
    pub unary: [MathFn; MATH_OPS.len()],
    /// `pow`.
    pub pow: PowFn,
}

/// The slot of `pow` in the [`MathTable`].
pub const POW_SLOT: usize = MATH_OPS.len();
/// The number of function pointers in the [`MathTable`].
pub const MATH_TABLE_SLOTS: usize = POW_SLOT + 1;

/// The status record of one program instance: zero when it ran to the end,
/// else the code of the failure ([`crate::cpu::FaultCode`]), the position of
/// the failing op among the kernel's checks and up to four values
/// (partition indices, a loop step or trip count).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// 0, or the failure's code.
    pub code: u32,
    /// The failing op's position among the kernel's checks.
    pub check: u32,
    /// The failure's values.
    pub index: [i64; 4],
}

/// The byte offset of [`Status::check`], as compiled code writes it.
pub const STATUS_CHECK: u64 = 4;
/// The byte offset of [`Status::index`], as compiled code writes it.
pub const STATUS_INDEX: u64 = 8;

/// An op of a compiled kernel that checks something at run time: what a
/// status record's `check` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostCheck {
    /// The op, as `tile_ir::ValueNames::describe_op` writes it.
    pub op: Cow<'static, str>,
    /// How many values its failures record (at most four).
    pub values: u8,
}

/// The math functions of the table, in slot order.
pub const MATH_OPS: [UnaryOp; 8] = [
    UnaryOp::Exp,
    UnaryOp::Exp2,
    UnaryOp::Log,
    UnaryOp::Log2,
    UnaryOp::Sin,
    UnaryOp::Cos,
    UnaryOp::Tanh,
    UnaryOp::Erf,
];

/// The table's functions: the oracle's f64 values.
pub(crate) const MATH_TABLE: MathTable = MathTable {
    unary: [exp, exp2, log, log2, sin, cos, tanh, erf],
    pow,
};

/// The oracle's f64 value of `op` at `x`.
fn oracle(op: UnaryOp, x: f64) -> f64 {
    match eval::unary(op, Scalar::F64(x)) {
        Ok(Scalar::F64(v)) => v,
        // `eval` defines every math op on f64 and returns an f64.
        _ => f64::NAN,
    }
}

/// The oracle's f64 `pow`.
extern "C" fn pow(x: f64, y: f64) -> f64 {
    match eval::binary(BinaryOp::Pow, Scalar::F64(x), Scalar::F64(y)) {
        Ok(Scalar::F64(v)) => v,
        // `eval` defines `pow` on f64 and returns an f64.
        _ => f64::NAN,
    }
}

/// Defines each `name` as the C-ABI function of the oracle's `op`.
macro_rules! oracle_functions {
    ($($name:ident => $op:ident),* $(,)?) => {
        $(
            extern "C" fn $name(x: f64) -> f64 {
                oracle(UnaryOp::$op, x)
            }
        )*
    };
}

oracle_functions! {
    exp => Exp,
    exp2 => Exp2,
    log => Log,
    log2 => Log2,
    sin => Sin,
    cos => Cos,
    tanh => Tanh,
    erf => Erf,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_record_has_the_layout_compiled_code_writes() {
        assert_eq!(std::mem::size_of::<Status>(), 40);
        assert_eq!(std::mem::offset_of!(Status, check) as u64, STATUS_CHECK);
        assert_eq!(std::mem::offset_of!(Status, index) as u64, STATUS_INDEX);
    }

    #[test]
    fn each_table_slot_computes_its_op() {
        for (op, f) in MATH_OPS.into_iter().zip(MATH_TABLE.unary) {
            for x in [-3.5, -0.25, 0.0, 0.5, 1.0, 7.25] {
                let want = oracle(op, x);
                assert!(
                    f(x).to_bits() == want.to_bits(),
                    "{}({x}) = {} but the oracle says {want}",
                    op.name(),
                    f(x)
                );
            }
        }
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(log2(8.0), 3.0);
        assert_eq!((MATH_TABLE.pow)(2.0, 10.0), 1024.0);
        assert!((MATH_TABLE.pow)(-8.0, 1.0 / 3.0).is_nan());
        assert_eq!((MATH_TABLE.pow)(f64::NAN, 0.0), 1.0);
    }

    #[test]
    fn the_table_is_one_pointer_per_slot() {
        assert_eq!(
            std::mem::size_of::<MathTable>(),
            MATH_TABLE_SLOTS * std::mem::size_of::<MathFn>()
        );
        assert_eq!(
            std::mem::offset_of!(MathTable, pow),
            POW_SLOT * std::mem::size_of::<MathFn>()
        );
    }
}

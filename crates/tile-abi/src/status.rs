//! The status record: how compiled code reports a failed run-time check.
//!
//! Every kernel (GPU or host) receives a pointer to a record
//! `{ u32 code; u32 check; i64 index[4]; u32 program[3]; u32 pad; }` (56
//! bytes, little-endian). It stays zero while every check passes; the first
//! failure writes the code of what failed ([`FaultCode`]), the failing op's
//! position among the kernel's checks, up to four values (partition
//! indices, a loop step or trip count, an assertion's number and values)
//! and the program (block) that failed.

use tile_ir::interp::Options;

/// The size of the status record in bytes.
pub const STATUS_BYTES: usize = 56;
/// The byte offset of [`Status::check`], as compiled code writes it.
pub const STATUS_CHECK: u64 = 4;
/// The byte offset of [`Status::index`], as compiled code writes it.
pub const STATUS_INDEX: u64 = 8;
/// The byte offset of [`Status::program`], as compiled code writes it.
pub const STATUS_PROGRAM: u64 = 40;

/// The status record of one kernel run.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// 0, or the failure's [`FaultCode`].
    pub code: u32,
    /// The failing op's position among the kernel's checks.
    pub check: u32,
    /// The failure's values (unused ones 0).
    pub index: [i64; 4],
    /// The program instance (block) that failed, `(x, y, z)`.
    pub program: [u32; 3],
    /// Zero: pads the record to a multiple of 8 bytes.
    pub pad: u32,
}

impl Status {
    /// Decodes a record from its little-endian bytes.
    pub fn from_bytes(bytes: &[u8; STATUS_BYTES]) -> Status {
        let word = |at: usize| {
            u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        };
        let mut index = [0i64; 4];
        for (i, slot) in index.iter_mut().enumerate() {
            let at = STATUS_INDEX as usize + 8 * i;
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[at..at + 8]);
            *slot = i64::from_le_bytes(b);
        }
        let program = [0, 1, 2].map(|i| word(STATUS_PROGRAM as usize + 4 * i));
        Status {
            code: word(0),
            check: word(STATUS_CHECK as usize),
            index,
            program,
            pad: word(STATUS_PROGRAM as usize + 12),
        }
    }

    /// The record's little-endian bytes.
    pub fn to_bytes(&self) -> [u8; STATUS_BYTES] {
        let mut bytes = [0u8; STATUS_BYTES];
        bytes[..4].copy_from_slice(&self.code.to_le_bytes());
        bytes[4..8].copy_from_slice(&self.check.to_le_bytes());
        for (i, v) in self.index.iter().enumerate() {
            let at = STATUS_INDEX as usize + 8 * i;
            bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
        for (i, v) in self.program.iter().chain([&self.pad]).enumerate() {
            let at = STATUS_PROGRAM as usize + 4 * i;
            bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
        bytes
    }

    /// Whether every check passed.
    pub fn is_ok(&self) -> bool {
        self.code == 0
    }
}

/// The codes of [`Status::code`] that compiled code writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum FaultCode {
    /// A partition index outside the view's index space.
    IndexSpace = 1,
    /// An unmasked access to a partially out-of-bounds partition.
    PartialPartition = 2,
    /// A `for` step that is not positive.
    NonPositiveStep = 3,
    /// A `for` over the iteration limit.
    IterationLimit = 4,
    /// An unmasked layout-view access outside the tensor's element space.
    LViewOutside = 5,
    /// An unmasked access that one GPU thread found reaching outside the
    /// tensor (the GPU code's per-thread bounds check); the values are the
    /// partition index.
    OutsideTensor = 6,
    /// An element of an atomic or a gather whose mask holds at an index
    /// outside the tensor; the values are the tensor index.
    IndexOutside = 7,
    /// A `device_assert!` whose condition is false; the values are the
    /// assertion's number, then the bits of the values its message formats
    /// (`tile_ir::assertion`).
    Assert = 8,
    /// An unmasked access to a layout view that is an edge tile not whole;
    /// the values are the mode and the view's extent along it.
    LViewPastEdge = 9,
    /// A partition view's window at a negative offset or of a negative
    /// extent; the values are its offsets, then its extents (the first
    /// four).
    ViewWindow = 10,
    /// A `get_tensor` index outside its tensor array; the values are the
    /// index and the number of tensors.
    TensorIndex = 11,
}

impl FaultCode {
    /// Every code, in order.
    pub const ALL: [FaultCode; 11] = [
        FaultCode::IndexSpace,
        FaultCode::PartialPartition,
        FaultCode::NonPositiveStep,
        FaultCode::IterationLimit,
        FaultCode::LViewOutside,
        FaultCode::OutsideTensor,
        FaultCode::IndexOutside,
        FaultCode::Assert,
        FaultCode::LViewPastEdge,
        FaultCode::ViewWindow,
        FaultCode::TensorIndex,
    ];

    /// The code written as `code`, if it is one.
    pub fn from_u32(code: u32) -> Option<FaultCode> {
        FaultCode::ALL.into_iter().find(|c| *c as u32 == code)
    }

    /// The iteration limit compiled loops enforce: the interpreter's.
    pub fn iteration_limit() -> u64 {
        Options::default().max_loop_iterations
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_has_the_layout_compiled_code_writes() {
        assert_eq!(std::mem::size_of::<Status>(), STATUS_BYTES);
        assert_eq!(std::mem::offset_of!(Status, check) as u64, STATUS_CHECK);
        assert_eq!(std::mem::offset_of!(Status, index) as u64, STATUS_INDEX);
        assert_eq!(std::mem::offset_of!(Status, program) as u64, STATUS_PROGRAM);
    }

    #[test]
    fn bytes_round_trip_little_endian() {
        let status = Status {
            code: 2,
            check: 1,
            index: [3, -1, 0, i64::MIN],
            program: [7, 0, 65536],
            pad: 0,
        };
        let bytes = status.to_bytes();
        assert_eq!(bytes[0], 2);
        assert_eq!(bytes[4], 1);
        assert_eq!(bytes[8..16], 3i64.to_le_bytes());
        assert_eq!(bytes[16..24], (-1i64).to_le_bytes());
        assert_eq!(bytes[40..44], 7u32.to_le_bytes());
        assert_eq!(bytes[48..52], 65536u32.to_le_bytes());
        assert_eq!(Status::from_bytes(&bytes), status);
        assert!(Status::from_bytes(&[0; STATUS_BYTES]).is_ok());
    }

    #[test]
    fn codes_decode_to_themselves_and_nothing_else() {
        for code in FaultCode::ALL {
            assert_eq!(FaultCode::from_u32(code as u32), Some(code));
        }
        assert_eq!(FaultCode::from_u32(0), None);
        assert_eq!(FaultCode::from_u32(12), None);
    }
}

//! The print area: where compiled code appends the lines of
//! `device_print!`, for the runtime to format after the launch.
//!
//! The area is a header `{ u32 cursor; u32 capacity; }` and `capacity`
//! records of [`RECORD_BYTES`] each, little-endian:
//! `{ u32 id; u32 program[3]; u32 element; u32 pad; i64 values[5]; }`.
//! A print claims a record with an atomic add of 1 to `cursor` and writes
//! it only if the claimed index is below `capacity`; the cursor goes on
//! counting, so the runtime knows how many lines did not fit. `id` is the
//! print's number in its kernel (`tile_ir::print`), `element` the row-major
//! index of the tile element the line is about (0 for a print of scalars),
//! and `values` the bits of the values the message formats.
//!
//! A GPU kernel that prints finds the area right after its status record
//! (at byte [`crate::status::STATUS_BYTES`] of the record's allocation);
//! host code finds its address in the packet slot after the streaming
//! threshold (`crate::host::print_slot`), which holds 0 when the kernel
//! does not print.

use crate::status::STATUS_BYTES;

/// The size of the header in bytes.
pub const HEADER_BYTES: u64 = 8;
/// The byte offset of the capacity in the header.
pub const CAPACITY_AT: u64 = 4;
/// The size of one record in bytes.
pub const RECORD_BYTES: u64 = 64;
/// The byte offset of a record's `program` (three `u32`).
pub const RECORD_PROGRAM: u64 = 4;
/// The byte offset of a record's `element`.
pub const RECORD_ELEMENT: u64 = 16;
/// The byte offset of a record's `values`.
pub const RECORD_VALUES: u64 = 24;
/// The most values one record carries.
pub const MAX_VALUES: usize = 5;
/// The records a launch's area holds unless the runtime is told otherwise.
pub const DEFAULT_CAPACITY: u32 = 1 << 14;
/// Where a GPU kernel's print area starts in its status allocation.
pub const GPU_AREA_OFFSET: u64 = STATUS_BYTES as u64;

/// One record of the area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrintRecord {
    /// The print's number in its kernel.
    pub id: u32,
    /// The program instance that printed, `(x, y, z)`.
    pub program: [u32; 3],
    /// The row-major index of the tile element printed (0 for scalars).
    pub element: u32,
    /// The bits of the formatted values (unused ones 0).
    pub values: [i64; MAX_VALUES],
}

/// An empty area of `capacity` records: the header's bytes, then zeroes.
pub fn empty_area(capacity: u32) -> Vec<u8> {
    let mut area = vec![0u8; (HEADER_BYTES + u64::from(capacity) * RECORD_BYTES) as usize];
    area[CAPACITY_AT as usize..HEADER_BYTES as usize].copy_from_slice(&capacity.to_le_bytes());
    area
}

/// The records an area holds, in the order they were claimed, and how many
/// prints did not fit. A truncated area yields the records it holds whole.
pub fn records(area: &[u8]) -> (Vec<PrintRecord>, u64) {
    let word = |at: usize| -> u32 {
        area.get(at..at + 4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let claimed = u64::from(word(0));
    let capacity = u64::from(word(CAPACITY_AT as usize));
    let fits = (area.len() as u64).saturating_sub(HEADER_BYTES) / RECORD_BYTES;
    let kept = claimed.min(capacity).min(fits);
    let records = (0..kept)
        .map(|i| {
            let at = (HEADER_BYTES + i * RECORD_BYTES) as usize;
            let mut values = [0i64; MAX_VALUES];
            for (k, v) in values.iter_mut().enumerate() {
                let from = at + RECORD_VALUES as usize + 8 * k;
                let mut b = [0u8; 8];
                b.copy_from_slice(&area[from..from + 8]);
                *v = i64::from_le_bytes(b);
            }
            PrintRecord {
                id: word(at),
                program: [0, 1, 2].map(|a| word(at + RECORD_PROGRAM as usize + 4 * a)),
                element: word(at + RECORD_ELEMENT as usize),
                values,
            }
        })
        .collect();
    (records, claimed - kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `r` as record `i` of `area` and counts it claimed.
    fn append(area: &mut [u8], i: usize, r: &PrintRecord) {
        let at = HEADER_BYTES as usize + i * RECORD_BYTES as usize;
        area[at..at + 4].copy_from_slice(&r.id.to_le_bytes());
        for (a, p) in r.program.iter().enumerate() {
            let from = at + RECORD_PROGRAM as usize + 4 * a;
            area[from..from + 4].copy_from_slice(&p.to_le_bytes());
        }
        let from = at + RECORD_ELEMENT as usize;
        area[from..from + 4].copy_from_slice(&r.element.to_le_bytes());
        for (k, v) in r.values.iter().enumerate() {
            let from = at + RECORD_VALUES as usize + 8 * k;
            area[from..from + 8].copy_from_slice(&v.to_le_bytes());
        }
        let claimed = u32::try_from(i + 1).unwrap();
        area[..4].copy_from_slice(&claimed.to_le_bytes());
    }

    #[test]
    fn records_come_back_in_claim_order_and_overflow_is_counted() {
        let mut area = empty_area(2);
        assert_eq!(area.len(), 8 + 2 * 64);
        assert_eq!(records(&area), (Vec::new(), 0));
        let r = |id| PrintRecord {
            id,
            program: [id, 0, 7],
            element: 3 * id,
            values: [-1, 2, 0, 0, i64::MIN],
        };
        append(&mut area, 0, &r(4));
        append(&mut area, 1, &r(5));
        assert_eq!(records(&area), (vec![r(4), r(5)], 0));
        // Three more claimed than fit.
        area[..4].copy_from_slice(&5u32.to_le_bytes());
        assert_eq!(records(&area), (vec![r(4), r(5)], 3));
        // A truncated area keeps its whole records.
        assert_eq!(records(&area[..8 + 64 + 10]), (vec![r(4)], 4));
    }
}

//! The append of one record to the print area (`tile_abi::device_print`), shared
//! by the GPU emitter and the host back end: claim an index with an atomic
//! add on the cursor, and write the record only where the index is below
//! the area's capacity.

use super::ScalarEmitter;
use crate::EmitError;
use inkwell::values::{IntValue, PointerValue};
use inkwell::{AtomicOrdering, AtomicRMWBinOp, IntPredicate};
use tile_abi::device_print::{
    CAPACITY_AT, HEADER_BYTES, RECORD_BYTES, RECORD_ELEMENT, RECORD_PROGRAM, RECORD_VALUES,
};

/// What one record says: the print, the program, the element, the values'
/// bits (`i64`, at most `tile_abi::device_print::MAX_VALUES`).
pub(crate) struct Record<'ctx> {
    /// The print's number.
    pub(crate) id: u32,
    /// The program (block) ids, `i32`.
    pub(crate) program: [IntValue<'ctx>; 3],
    /// The row-major element index, `i32`.
    pub(crate) element: IntValue<'ctx>,
    /// The values' bits, `i64`.
    pub(crate) values: Vec<IntValue<'ctx>>,
}

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// Appends `record` to the print area at `area`.
    pub(crate) fn print_record(
        &self,
        area: PointerValue<'ctx>,
        record: &Record<'ctx>,
    ) -> Result<(), EmitError> {
        let b = &self.b;
        let (i8t, i32t, i64t) = (self.ctx.i8_type(), self.ctx.i32_type(), self.ctx.i64_type());
        let byte = |offset: IntValue<'ctx>, name: &str| -> Result<PointerValue<'ctx>, EmitError> {
            // SAFETY (of the generated code): offsets stay inside the area,
            // whose header gives its capacity.
            Ok(unsafe { b.build_gep(i8t, area, &[offset], name)? })
        };
        let claimed = b.build_atomicrmw(
            AtomicRMWBinOp::Add,
            area,
            i32t.const_int(1, false),
            AtomicOrdering::Monotonic,
        )?;
        let capacity = b.build_load(
            i32t,
            byte(i64t.const_int(CAPACITY_AT, false), "cap")?,
            "capacity",
        )?;
        let fits = b.build_int_compare(
            IntPredicate::ULT,
            claimed,
            capacity.into_int_value(),
            "fits",
        )?;
        let function = b
            .get_insert_block()
            .and_then(|block| block.get_parent())
            .ok_or_else(|| EmitError::internal("a print outside a function"))?;
        let write = self.ctx.append_basic_block(function, "print");
        let done = self.ctx.append_basic_block(function, "printed");
        b.build_conditional_branch(fits, write, done)?;
        b.position_at_end(write);
        let index = b.build_int_z_extend(claimed, i64t, "index")?;
        let start = b.build_int_add(
            b.build_int_mul(index, i64t.const_int(RECORD_BYTES, false), "offset")?,
            i64t.const_int(HEADER_BYTES, false),
            "record",
        )?;
        let field = |at: u64, name: &str| -> Result<PointerValue<'ctx>, EmitError> {
            byte(
                b.build_int_add(start, i64t.const_int(at, false), name)?,
                name,
            )
        };
        b.build_store(field(0, "id")?, i32t.const_int(u64::from(record.id), false))?;
        for (axis, &id) in record.program.iter().enumerate() {
            b.build_store(field(RECORD_PROGRAM + 4 * axis as u64, "program")?, id)?;
        }
        b.build_store(field(RECORD_ELEMENT, "element")?, record.element)?;
        for (k, &v) in record.values.iter().enumerate() {
            b.build_store(field(RECORD_VALUES + 8 * k as u64, "value")?, v)?;
        }
        b.build_unconditional_branch(done)?;
        b.position_at_end(done);
        Ok(())
    }
}

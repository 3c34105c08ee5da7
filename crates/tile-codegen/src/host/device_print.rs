//! `print`: a record per line appended to the print area
//! (`tile_abi::device_print`), whose address is the packet's print slot; the
//! runtime formats the lines after the launch. A print with tiles appends
//! one record per element, in row-major order.

use super::error::HostError;
use super::kernel::{HostKernel, HostValue};
use crate::scalar::Record;
use inkwell::values::{IntValue, PointerValue};
use tile_abi::host as abi;
use tile_ir::OpId;

impl<'a, 'ctx> HostKernel<'a, 'ctx> {
    /// The print area's address from `packet`, when the kernel prints.
    pub(super) fn print_area_of(
        &self,
        packet: PointerValue<'ctx>,
    ) -> Result<Option<PointerValue<'ctx>>, HostError> {
        if !tile_ir::device_print::prints(self.func) {
            return Ok(None);
        }
        let i64t = self.e.ctx.i64_type();
        let slot = i64t.const_int(abi::print_slot(self.func), false);
        let at = self.gep(i64t.into(), packet, slot)?;
        let address = self
            .e
            .b
            .build_load(i64t, at, "print_area")?
            .into_int_value();
        let ptr = self.e.ctx.ptr_type(inkwell::AddressSpace::default());
        Ok(Some(self.e.b.build_int_to_ptr(address, ptr, "area")?))
    }

    /// Emits `print id` (op `op`).
    pub(super) fn print(&mut self, op: OpId, id: u32) -> Result<(), HostError> {
        let area = self
            .print_area
            .ok_or_else(|| HostError::internal("a print without a print area"))?;
        let program = self.program_ids()?;
        let mut scalars = Vec::new();
        let mut tiles = Vec::new();
        for &v in self.operands(op) {
            match self.value(v)? {
                HostValue::Scalar(x) => scalars.push(Some(self.e.value_bits(x)?)),
                HostValue::Tile(t) => {
                    scalars.push(None);
                    tiles.push(t);
                }
                _ => return Err(HostError::internal("a print of a non-scalar, non-tile")),
            }
        }
        let Some(first) = tiles.first() else {
            let values = scalars.into_iter().flatten().collect();
            let element = self.e.ctx.i32_type().const_zero();
            return Ok(self.e.print_record(
                area,
                &Record {
                    id,
                    program,
                    element,
                    values,
                },
            )?);
        };
        let n = self.i64(first.numel() as i64);
        self.counted(n, &mut |l, j| {
            let mut next_tile = tiles.iter();
            let mut values: Vec<IntValue<'ctx>> = Vec::with_capacity(scalars.len());
            for s in &scalars {
                values.push(match s {
                    Some(bits) => *bits,
                    None => {
                        let tile = next_tile
                            .next()
                            .ok_or_else(|| HostError::internal("print operands"))?;
                        l.e.value_bits(l.get(tile, j)?)?
                    }
                });
            }
            let i32t = l.e.ctx.i32_type();
            let element = l.e.b.build_int_truncate(j, i32t, "element")?;
            Ok(l.e.print_record(
                area,
                &Record {
                    id,
                    program,
                    element,
                    values,
                },
            )?)
        })
    }
}

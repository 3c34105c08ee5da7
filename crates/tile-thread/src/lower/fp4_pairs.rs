//! `unpack_fp4` and `pack_fp4` in registers: each byte's two FP4 values
//! live in the thread that holds the byte (`layout_assign/pairs.rs`), so
//! unpacking is a bitcast of the byte and of the byte shifted right by 4,
//! and packing the union of the first value's bits and the second's
//! shifted left by 4. An operand held otherwise is converted first; a
//! result wanted otherwise after.

use super::{LowerError, Lowered, Lowerer};
use crate::layout_assign::DistLayout;
use crate::program::{Reg, ThreadOpKind};
use std::collections::HashMap;
use std::rc::Rc;
use tile_ir::{BinaryOp, DType, OpId, OpKind, Scalar};

impl Lowerer<'_> {
    /// Lowers `unpack_fp4` or `pack_fp4`.
    pub(super) fn fp4_pairs(&mut self, id: OpId) -> Result<(), LowerError> {
        let op = self.func.op(id);
        let (unpack, axis) = match op.kind {
            OpKind::UnpackFp4 { axis } => (true, axis),
            OpKind::PackFp4 { axis } => (false, axis),
            _ => return Err(self.invalid(id, "not an FP4 pair op")),
        };
        let (Some(&operand), Some(&result)) = (op.operands.first(), op.results.first()) else {
            return Err(self.invalid(id, "an FP4 pair op has one operand and one result"));
        };
        let (from, regs) = self.tile(id, operand)?;
        let wanted = self.layout_of(id, result)?;
        // The bytes' layout (unpacking: the result's halved; packing: the
        // result's own), or a default one where the result's does not pair.
        let bytes = if unpack {
            wanted.halved(axis)
        } else {
            Some((*wanted).clone()).filter(|w| w.doubled(axis).is_some())
        };
        let bytes = match bytes {
            Some(layout) => layout,
            None => {
                let dims = self
                    .func
                    .ty(operand)
                    .tile_shape()
                    .map(|s| s.dims().to_vec());
                let mut dims = dims.unwrap_or_default();
                if !unpack {
                    dims[axis] /= 2;
                }
                DistLayout::blocked(&dims, self.program.num_warps, 1)?
            }
        };
        let values = bytes
            .doubled(axis)
            .ok_or_else(|| self.invalid(id, "a blocked layout of bytes doubles"))?;
        let pairs = pair_registers(&bytes, &values, axis)
            .ok_or_else(|| self.invalid(id, "a doubled layout holds each byte's pair"))?;
        let (layout, regs) = if unpack {
            let held = self.convert(DType::U8, &from, &regs, &bytes);
            (values, self.unpack_registers(&held, &pairs))
        } else {
            let held = self.convert(DType::F4E2M1, &from, &regs, &values);
            (bytes, self.pack_registers(&held, &pairs))
        };
        let dtype = if unpack { DType::F4E2M1 } else { DType::U8 };
        let regs = self.convert(dtype, &layout, &regs, &wanted);
        self.bind(
            id,
            Lowered::Tile {
                layout: Rc::clone(&wanted),
                regs,
            },
        )
    }

    /// The value registers of `bytes` (each byte register's two values at
    /// the places `pairs` gives, low four bits first).
    fn unpack_registers(&mut self, bytes: &[Reg], pairs: &[[usize; 2]]) -> Vec<Reg> {
        let four = self.constant(Scalar::U8(4));
        let to_value = ThreadOpKind::Bitcast { to: DType::F4E2M1 };
        let mut values = vec![None; 2 * bytes.len()];
        for (&byte, &[low, high]) in bytes.iter().zip(pairs) {
            let shifted = self.binary(BinaryOp::Shr, byte, four);
            values[low] = Some(self.emit(to_value.clone(), vec![byte], DType::F4E2M1));
            values[high] = Some(self.emit(to_value.clone(), vec![shifted], DType::F4E2M1));
        }
        values.into_iter().flatten().collect()
    }

    /// The byte registers of `values`, each the union of its pair's first
    /// value's bits and its second's shifted left by 4.
    fn pack_registers(&mut self, values: &[Reg], pairs: &[[usize; 2]]) -> Vec<Reg> {
        let four = self.constant(Scalar::U8(4));
        let to_bits = ThreadOpKind::Bitcast { to: DType::U8 };
        pairs
            .iter()
            .map(|&[low, high]| {
                let low = self.emit(to_bits.clone(), vec![values[low]], DType::U8);
                let high = self.emit(to_bits.clone(), vec![values[high]], DType::U8);
                let shifted = self.binary(BinaryOp::Shl, high, four);
                self.binary(BinaryOp::Or, low, shifted)
            })
            .collect()
    }
}

/// For each register `u` of `bytes`, the registers of `values` (its
/// doubling along `axis`) that hold its byte's two values, `2i` and
/// `2i + 1` along the axis where the byte is at `i`. Both layouts give each
/// register the same offset from its thread's first element in every
/// thread, and the doubling doubles those first elements along `axis`, so
/// thread 0's coordinates place them for all.
fn pair_registers(bytes: &DistLayout, values: &DistLayout, axis: usize) -> Option<Vec<[usize; 2]>> {
    let mut at: HashMap<Vec<usize>, usize> = HashMap::new();
    for v in 0..values.registers() {
        at.insert(values.padded_coordinate(0, v), v);
    }
    (0..bytes.registers())
        .map(|u| {
            let mut c = bytes.padded_coordinate(0, u);
            c[axis] *= 2;
            let low = *at.get(&c)?;
            c[axis] += 1;
            Some([low, *at.get(&c)?])
        })
        .collect()
}

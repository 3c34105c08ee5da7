//! `atomic`: one update per element whose mask holds, in row-major order,
//! each checked to lie in the tensor first (`FaultCode::IndexOutside`,
//! with the tensor index); masked-off elements return zero. The programs
//! of a launch run on several cores at once, so the updates are the
//! hardware's atomics (`ScalarEmitter::atomic`); tensor elements are
//! naturally aligned (the runtime allocates buffers aligned to at least
//! their element size and offsets are in elements).

use super::check::Code;
use super::error::HostError;
use super::frame::TileRef;
use super::kernel::{HostKernel, HostValue, TensorArg};
use inkwell::values::IntValue;
use inkwell::IntPredicate;
use tile_ir::{AtomicOp, MemOrder, OpId, Scalar};

impl<'a, 'ctx> HostKernel<'a, 'ctx> {
    /// Emits `atomic op` (op `id`).
    pub(super) fn atomic(
        &mut self,
        id: OpId,
        op: AtomicOp,
        order: MemOrder,
    ) -> Result<(), HostError> {
        let (operands, t) = self.indexed_tensor(id)?;
        let rank = t.extents.len();
        let trailing = if op == AtomicOp::Cas { 3 } else { 2 };
        if operands.len() != 1 + rank + trailing {
            return Err(HostError::internal("atomic operands"));
        }
        let tiles = operands[1..]
            .iter()
            .map(|&v| self.tile(v))
            .collect::<Result<Vec<_>, _>>()?;
        let (indices, rest) = tiles.split_at(rank);
        let (cmp, value, mask) = match rest {
            [cmp, value, mask] => (Some(cmp.clone()), value.clone(), mask.clone()),
            [value, mask] => (None, value.clone(), mask.clone()),
            _ => return Err(HostError::internal("atomic operands")),
        };
        let dtype = value.dtype;
        let out = self.place(&value.shape, dtype);
        let zero = self.e.constant(Scalar::zero(dtype))?;
        let n = self.i64(value.numel() as i64);
        self.counted(n, &mut |l, j| {
            let on = l.get(&mask, j)?.into_int_value();
            l.either(
                on,
                &mut |l| {
                    let at = l.indexed_element(id, &t, indices, j)?;
                    let ptr = l.gep(l.e.mem_type(dtype), t.base, at)?;
                    let v = l.get(&value, j)?;
                    let c = cmp.as_ref().map(|c| l.get(c, j)).transpose()?;
                    let old = l.e.atomic(op, order, dtype, ptr, v, c)?;
                    l.set(&out, j, old)
                },
                &mut |l| l.set(&out, j, zero),
            )
        })?;
        self.define_result(id, HostValue::Tile(out))
    }

    /// The element offset of element `j`'s tensor index (`indices[d][j]`
    /// along axis `d` of `t`), checked to lie in the tensor first
    /// (`FaultCode::IndexOutside`, with the index): `atomic`, `gather`.
    pub(super) fn indexed_element(
        &mut self,
        id: OpId,
        t: &TensorArg<'ctx>,
        indices: &[TileRef],
        j: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, HostError> {
        let i64t = self.e.ctx.i64_type();
        let mut index: Vec<IntValue<'ctx>> = Vec::new();
        for tile in indices {
            let x = self.get(tile, j)?.into_int_value();
            index.push(match tile.dtype {
                d if d.bits() == 64 => x,
                d if d.is_signed_int() => self.e.b.build_int_s_extend(x, i64t, "i")?,
                _ => self.e.b.build_int_z_extend(x, i64t, "i")?,
            });
        }
        let mut inside = self.e.ctx.bool_type().const_all_ones();
        for (&i, &e) in index.iter().zip(&t.extents) {
            // Unsigned `i < e` is also `0 <= i`.
            let ok = self.e.b.build_int_compare(IntPredicate::ULT, i, e, "in")?;
            inside = self.e.b.build_and(inside, ok, "inside")?;
        }
        self.check(inside, id, Code::IndexOutside, &index)?;
        self.strided(&index, &t.strides)
    }
}

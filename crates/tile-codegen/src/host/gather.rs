//! `gather`: each element whose mask holds read from the tensor at its
//! index tiles, in row-major order, each checked to lie in the tensor
//! first (`FaultCode::IndexOutside`, with the tensor index); elements whose
//! mask does not hold take the other values and touch no memory. A gather
//! of scalars runs as one of one-element tiles in the frame. `scatter`:
//! each element whose mask holds written so, in row-major order (of two at
//! one address, a race on a GPU, the later stays, as in the interpreter).

use super::error::HostError;
use super::kernel::{HostKernel, HostValue, TensorArg};
use tile_ir::OpId;

impl<'a, 'ctx> HostKernel<'a, 'ctx> {
    /// Emits `gather` (op `id`).
    pub(super) fn gather(&mut self, id: OpId) -> Result<(), HostError> {
        let (operands, t) = self.indexed_tensor(id)?;
        let scalar = matches!(
            self.value(operands[operands.len() - 1])?,
            HostValue::Scalar(_)
        );
        let mut tiles = Vec::with_capacity(operands.len() - 1);
        for &v in &operands[1..] {
            tiles.push(match self.value(v)? {
                HostValue::Tile(t) => t,
                HostValue::Scalar(x) => {
                    let one = self.place(&[1], self.func.ty(v).dtype());
                    self.set(&one, self.i64(0), x)?;
                    one
                }
                _ => return Err(HostError::internal("a gather operand")),
            });
        }
        let [indices @ .., mask, other] = tiles.as_slice() else {
            return Err(HostError::internal("gather operands"));
        };
        if indices.len() != t.extents.len() {
            return Err(HostError::internal("gather operands"));
        }
        let dtype = other.dtype;
        let out = self.place(&other.shape, dtype);
        let n = self.i64(other.numel() as i64);
        self.counted(n, &mut |l, j| {
            let on = l.get(mask, j)?.into_int_value();
            l.either(
                on,
                &mut |l| {
                    let at = l.indexed_element(id, &t, indices, j)?;
                    let v = l.read_global(t.base, dtype, at)?;
                    l.set(&out, j, v)
                },
                &mut |l| {
                    let v = l.get(other, j)?;
                    l.set(&out, j, v)
                },
            )
        })?;
        if scalar {
            let read = self.get(&out, self.i64(0))?;
            return self.define_result(id, HostValue::Scalar(read));
        }
        self.define_result(id, HostValue::Tile(out))
    }

    /// Emits `scatter` (op `id`).
    pub(super) fn scatter(&mut self, id: OpId) -> Result<(), HostError> {
        let (operands, t) = self.indexed_tensor(id)?;
        let mut tiles = Vec::with_capacity(operands.len() - 1);
        for &v in &operands[1..] {
            match self.value(v)? {
                HostValue::Tile(t) => tiles.push(t),
                _ => return Err(HostError::internal("a scatter operand")),
            }
        }
        let [indices @ .., value, mask] = tiles.as_slice() else {
            return Err(HostError::internal("scatter operands"));
        };
        if indices.len() != t.extents.len() {
            return Err(HostError::internal("scatter operands"));
        }
        let dtype = value.dtype;
        let n = self.i64(value.numel() as i64);
        self.counted(n, &mut |l, j| {
            let on = l.get(mask, j)?.into_int_value();
            l.either(
                on,
                &mut |l| {
                    let at = l.indexed_element(id, &t, indices, j)?;
                    let v = l.get(value, j)?;
                    l.write_global(t.base, dtype, at, v)
                },
                &mut |_| Ok(()),
            )
        })
    }

    /// The operands of an access at index tiles (`gather`, `scatter`, an
    /// atomic; op `id`) and the tensor parameter its first operand is.
    pub(super) fn indexed_tensor(
        &self,
        id: OpId,
    ) -> Result<(&'a [tile_ir::Value], TensorArg<'ctx>), HostError> {
        let operands = self.operands(id);
        let Some(&tensor) = operands.first() else {
            return Err(HostError::internal("an indexed access without operands"));
        };
        let HostValue::Tensor(param) = self.value(tensor)? else {
            return Err(HostError::internal("an indexed access of a non-tensor"));
        };
        let t = self
            .tensors
            .get(&param)
            .cloned()
            .ok_or_else(|| HostError::internal("an unknown tensor parameter"))?;
        Ok((operands, t))
    }
}

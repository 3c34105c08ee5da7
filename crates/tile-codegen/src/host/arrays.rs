//! Tensor arrays in host code: `num_tensors`, and `get_tensor`, which
//! checks its index and reads the record of the tensor it picks
//! (`tile_abi::params::TensorRecord`, in host memory) as a tensor
//! parameter's packet slots are read.

use super::check::Code;
use super::error::HostError;
use super::kernel::{HostKernel, HostValue, TensorArg};
use tile_abi::params::TensorRecord;
use tile_ir::{OpId, OpKind, Type};

impl<'ctx> HostKernel<'_, 'ctx> {
    /// Lowers `get_tensor` or `num_tensors`.
    pub(super) fn tensor_array_op(&mut self, id: OpId) -> Result<(), HostError> {
        let operands = self.operands(id);
        let array = operands.first().copied();
        let array = array.ok_or_else(|| HostError::internal("no tensor array"))?;
        let HostValue::Tensors { records, count } = self.value(array)? else {
            return Err(HostError::internal("an operand that is not a tensor array"));
        };
        let b = &self.e.b;
        let (i32t, i64t) = (self.e.ctx.i32_type(), self.e.ctx.i64_type());
        if self.func.op(id).kind == OpKind::NumTensors {
            let n = b.build_int_truncate(count, i32t, "num_tensors")?;
            return self.define_result(id, HostValue::Scalar(n.into()));
        }
        let (Some(&index), Type::Tensors(t)) = (operands.get(1), self.func.ty(array)) else {
            return Err(HostError::internal("`get_tensor` without its index"));
        };
        let t = *t;
        let signed = self.func.ty(index).dtype().is_signed_int();
        let index = self.scalar(index)?.into_int_value();
        let b = &self.e.b;
        let index = b.build_int_cast_sign_flag(index, i64t, signed, "index")?;
        let low =
            b.build_int_compare(inkwell::IntPredicate::SGE, index, i64t.const_zero(), "low")?;
        let high = b.build_int_compare(inkwell::IntPredicate::SLT, index, count, "high")?;
        let ok = b.build_and(low, high, "inside")?;
        self.check(ok, id, Code::TensorIndex, &[index, count])?;
        let words = i64t.const_int((TensorRecord::bytes(t.rank) / 8) as u64, false);
        let first = self.e.b.build_int_mul(index, words, "record")?;
        let word = |l: &Self, k: usize| -> Result<_, HostError> {
            let k = i64t.const_int((k / 8) as u64, false);
            let at = l.e.b.build_int_add(first, k, "word")?;
            let at = l.gep(i64t.into(), records, at)?;
            Ok(l.e.b.build_load(i64t, at, "record")?.into_int_value())
        };
        let ptr = self.e.ctx.ptr_type(inkwell::AddressSpace::default());
        let base = self.e.b.build_int_to_ptr(word(self, 0)?, ptr, "base")?;
        let extents = (0..t.rank)
            .map(|axis| word(self, TensorRecord::extent_at(axis)))
            .collect::<Result<_, _>>()?;
        let mut strides: Vec<_> = (0..t.rank)
            .map(|axis| word(self, TensorRecord::stride_at(t.rank, axis)))
            .collect::<Result<_, _>>()?;
        if t.aligned {
            // Contiguous rows, which the launch checks of every tensor.
            if let Some(last) = strides.last_mut() {
                *last = i64t.const_int(1, false);
            }
        }
        // A key no parameter has: tensors of arrays after the parameters.
        let key = self.func.params.len() + id.index();
        self.tensors.insert(
            key,
            TensorArg {
                base,
                extents,
                strides,
            },
        );
        self.define_result(id, HostValue::Tensor(key))
    }
}

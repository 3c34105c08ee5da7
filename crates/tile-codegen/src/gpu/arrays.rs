//! Tensor arrays: `get_tensor` reads the record of the tensor it picks
//! (`tile_abi::params::TensorRecord`) and binds the tensor's base pointer,
//! extents and strides for the ops after it, as a tensor parameter's
//! arguments are bound at the kernel's entry; at an index outside the
//! array, whose check has recorded the fault, an empty tensor.

use super::kernel::{int, written_params, Kernel, Operands, ParamArgs, TensorArgs};
use super::GpuEmitter;
use crate::EmitError;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValue, BasicValueEnum, InstructionValue, IntValue, PointerValue};
use inkwell::{AddressSpace, IntPredicate};
use tile_abi::params::TensorRecord;
use tile_thread::program::ParamKind;

impl<'ctx> GpuEmitter<'_, 'ctx> {
    /// `get_tensor param = array[index]`, `index` in range (checked before
    /// it by the lowering).
    pub(super) fn get_tensor(
        &self,
        k: &mut Kernel<'_, 'ctx>,
        (param, array): (usize, usize),
        x: &Operands<'_, 'ctx>,
    ) -> Result<(), EmitError> {
        let rank = match k.program.params.get(param).map(|p| &p.kind) {
            Some(ParamKind::Element { ty, .. }) => ty.rank,
            _ => return Err(EmitError::internal("`get_tensor` of no tensor of an array")),
        };
        let Some(&ParamArgs::Tensors { records, count }) = k.params.get(array) else {
            return Err(EmitError::internal("`get_tensor` of no tensor array"));
        };
        let (i32t, i64t) = (self.ctx.i32_type(), self.ctx.i64_type());
        let index = int(x, "index")?;
        // A failed `tensor_index` check before this records the fault and
        // goes on: the tensor is then an empty one (no extent, no element
        // reachable), and no record outside the array is read.
        let inside = self
            .b
            .build_int_compare(IntPredicate::ULT, index, count, "inside")?;
        let before = self
            .b
            .get_insert_block()
            .ok_or_else(|| EmitError::internal("no block"))?;
        let read = self.ctx.append_basic_block(k.function, "record");
        let bound = self.ctx.append_basic_block(k.function, "bound");
        self.b.build_conditional_branch(inside, read, bound)?;
        self.b.position_at_end(read);
        let index = self.b.build_int_z_extend(index, i64t, "tensor.index")?;
        let bytes = i64t.const_int(TensorRecord::bytes(rank) as u64, false);
        let start = self.b.build_int_mul(index, bytes, "record")?;
        let global = AddressSpace::from(self.gpu.global_space());
        let ptr = self.ctx.ptr_type(global);
        let mut words = vec![self.record_word(records, start, 0, ptr.into())?];
        for axis in 0..rank {
            let extent =
                self.record_word(records, start, TensorRecord::extent_at(axis), i64t.into())?;
            words.push(
                self.b
                    .build_int_truncate(extent.into_int_value(), i32t, "dim")?
                    .into(),
            );
        }
        for axis in 0..rank {
            let stride = TensorRecord::stride_at(rank, axis);
            words.push(self.record_word(records, start, stride, i64t.into())?);
        }
        let read = self
            .b
            .get_insert_block()
            .ok_or_else(|| EmitError::internal("no block"))?;
        self.b.build_unconditional_branch(bound)?;
        self.b.position_at_end(bound);
        let name = &k.program.params[param].name;
        let mut bound_words = Vec::new();
        for word in words {
            let phi = self.b.build_phi(word.get_type(), name)?;
            phi.add_incoming(&[(&word, read), (&word.get_type().const_zero(), before)]);
            bound_words.push(phi.as_basic_value());
        }
        let base = bound_words[0].into_pointer_value();
        let dims = bound_words[1..=rank]
            .iter()
            .map(|w| w.into_int_value())
            .collect();
        let strides = bound_words[rank + 1..]
            .iter()
            .map(|w| w.into_int_value())
            .collect();
        let read_only = !written_params(k.program).contains(&array);
        k.params[param] = ParamArgs::Tensor(TensorArgs {
            base,
            dims,
            strides,
            read_only,
        });
        Ok(())
    }

    /// The word of type `ty` at byte `at` of the record `start` bytes into
    /// `records`: a load the launch never changes the value of.
    fn record_word(
        &self,
        records: PointerValue<'ctx>,
        start: IntValue<'ctx>,
        at: usize,
        ty: BasicTypeEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        let i64t = self.ctx.i64_type();
        let offset = self
            .b
            .build_int_add(start, i64t.const_int(at as u64, false), "at")?;
        // SAFETY (of the generated code): the index was checked against the
        // array's count, and the runtime passes that many records.
        let address = unsafe {
            self.b
                .build_gep(self.ctx.i8_type(), records, &[offset], "word")?
        };
        let word = self.b.build_load(ty, address, "record")?;
        if let Some(load) = word.as_instruction_value() {
            self.invariant(load)?;
        }
        Ok(word)
    }

    /// Marks `load` `!invariant.load`: its memory does not change while the
    /// kernel runs, so LLVM may move or merge it.
    fn invariant(&self, load: InstructionValue<'ctx>) -> Result<(), EmitError> {
        let kind = self.ctx.get_kind_id("invariant.load");
        load.set_metadata(self.ctx.metadata_node(&[]), kind)
            .map_err(|e| EmitError::Internal(format!("invariant.load: {e:?}")))
    }
}

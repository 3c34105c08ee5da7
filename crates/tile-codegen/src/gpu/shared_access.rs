//! Shared-memory loads and stores of one element or of a vector of up to 16
//! bytes (`ld.shared.v<w>` and `st.shared.v<w>` of the thread program),
//! which the lowering places at indices that are multiples of the width, so
//! that each is one aligned access (`ld.shared.v4.b32` on NVIDIA,
//! `ds_read_b128` on AMD); and `round.shared.tf32`, a load and a store of
//! the same vector with each element rounded to TF32 between them.

use super::kernel::Kernel;
use super::memory::vector_type;
use super::GpuEmitter;
use crate::EmitError;
use inkwell::values::{BasicValueEnum, IntValue};
use tile_ir::DType;

impl<'ctx> GpuEmitter<'_, 'ctx> {
    /// The `width` elements of `dtype` of allocation `alloc` from `index`.
    pub(super) fn load_shared(
        &self,
        k: &Kernel<'_, 'ctx>,
        (alloc, dtype, width): (usize, DType, usize),
        index: IntValue<'ctx>,
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        let at = self.shared_at(k, alloc, dtype, index)?;
        if width == 1 {
            return Ok(vec![self.load_elem(at, dtype)?]);
        }
        let vty = vector_type(self.mem_type(dtype), width as u32)?;
        let load = self.b.build_load(vty, at, "ldsv")?;
        super::memory::set_alignment(load, (width * dtype.size_bytes()) as u32)?;
        let vector = load.into_vector_value();
        (0..width)
            .map(|i| {
                let lane = self.ctx.i32_type().const_int(i as u64, false);
                let e = self.b.build_extract_element(vector, lane, "e")?;
                self.register_value(e, dtype)
            })
            .collect()
    }

    /// Stores `values` of `dtype` in allocation `alloc` from `index` where
    /// `mask` holds.
    pub(super) fn store_shared(
        &self,
        k: &Kernel<'_, 'ctx>,
        (alloc, dtype): (usize, DType),
        index: IntValue<'ctx>,
        values: &[BasicValueEnum<'ctx>],
        mask: IntValue<'ctx>,
    ) -> Result<(), EmitError> {
        let at = self.shared_at(k, alloc, dtype, index)?;
        if let [value] = values {
            return self.when(k, mask, |s| s.store_elem(at, *value, dtype));
        }
        let vty = vector_type(self.mem_type(dtype), values.len() as u32)?;
        let mut vector = vty.get_undef();
        for (i, &v) in values.iter().enumerate() {
            let lane = self.ctx.i32_type().const_int(i as u64, false);
            vector =
                self.b
                    .build_insert_element(vector, self.memory_value(v, dtype)?, lane, "v")?;
        }
        let bytes = (values.len() * dtype.size_bytes()) as u32;
        self.when(k, mask, |s| {
            let store = s.b.build_store(at, vector)?;
            store
                .set_alignment(bytes)
                .map_err(|e| EmitError::Internal(e.to_string()))
        })
    }

    /// `round.shared.tf32`: where `mask` holds (and only there is anything
    /// read), the `width` `f32`s of `alloc` from `index` replaced by their
    /// TF32 rounding.
    pub(super) fn round_shared_tf32(
        &self,
        k: &Kernel<'_, 'ctx>,
        (alloc, width): (usize, usize),
        index: IntValue<'ctx>,
        mask: IntValue<'ctx>,
    ) -> Result<(), EmitError> {
        self.when(k, mask, |s| {
            let values = s.load_shared(k, (alloc, DType::F32, width), index)?;
            let rounded = values
                .into_iter()
                .map(|v| Ok(s.round_tf32(v.into_float_value())?.into()))
                .collect::<Result<Vec<_>, EmitError>>()?;
            let always = s.ctx.bool_type().const_int(1, false);
            s.store_shared(k, (alloc, DType::F32), index, &rounded, always)
        })
    }
}

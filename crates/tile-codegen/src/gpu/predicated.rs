//! Vector global accesses as one predicated instruction on NVIDIA's
//! targets ([`Asm::LoadVector`], [`Asm::StoreVector`]): where every
//! element's mask is the vector condition (a tensor promised aligned), a
//! masked 8- or 16-byte access needs no branch. LLVM would branch around
//! it, and a branch ends ptxas's scheduling region: a row kernel's loads
//! then each sit in a block of their own, and what was computed before
//! them stays live across them.

use super::asm::{Asm, VECTOR_WORDS};
use super::kernel::{tensor, Kernel};
use super::memory::vector_type;
use super::{GpuEmitter, GpuTarget};
use crate::EmitError;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, IntValue, PointerValue, VectorValue};
use tile_ir::DType;

impl<'ctx> GpuEmitter<'_, 'ctx> {
    /// The 32-bit words of one predicated access of `width` elements of
    /// `dtype`, if the target has one: 8 or 16 bytes on NVIDIA's targets.
    pub(super) fn predicated_words(&self, width: usize, dtype: DType) -> Option<u8> {
        if !matches!(self.gpu, GpuTarget::Nvptx(_)) {
            return None;
        }
        let bytes = width * dtype.size_bytes();
        VECTOR_WORDS
            .into_iter()
            .find(|&words| usize::from(words) * 4 == bytes)
    }

    /// The register values of the `others.len()` elements of `dtype` at
    /// `at` (aligned to the access) in tensor parameter `param` where `p`,
    /// else `others` (memory values): one `@p ld.global.v{words}.b32`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn load_vector_predicated(
        &self,
        k: &Kernel<'_, 'ctx>,
        param: usize,
        at: PointerValue<'ctx>,
        dtype: DType,
        words: u8,
        p: IntValue<'ctx>,
        others: &[BasicValueEnum<'ctx>],
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        let i32t = self.ctx.i32_type();
        let vty = vector_type(self.mem_type(dtype), others.len() as u32)?;
        let other_words = self.words_of(others, words)?;
        let mut args = vec![at.into(), p.into()];
        args.extend(other_words);
        let fields: Vec<BasicTypeEnum> = vec![i32t.into(); usize::from(words)];
        let asm = Asm::LoadVector {
            words,
            nc: tensor(k, param)?.read_only,
        };
        let loaded = self
            .call_asm(
                asm,
                Some(self.ctx.struct_type(&fields, false).into()),
                &args,
            )?
            .ok_or_else(|| EmitError::internal("ld.global.v returned nothing"))?
            .into_struct_value();
        let mut joined = i32t.vec_type(u32::from(words)).get_undef();
        for i in 0..u32::from(words) {
            let word = self.b.build_extract_value(loaded, i, "w")?;
            joined = self.b.build_insert_element(
                joined,
                word,
                i32t.const_int(u64::from(i), false),
                "w",
            )?;
        }
        let elements = self
            .b
            .build_bit_cast(joined, vty, "elems")?
            .into_vector_value();
        (0..others.len() as u64)
            .map(|i| {
                let e = self
                    .b
                    .build_extract_element(elements, i32t.const_int(i, false), "e")?;
                self.register_value(e, dtype)
            })
            .collect()
    }

    /// Stores the register values `values` of `dtype` at `at` (aligned to
    /// the access) where `p`: one `@p st.global.v{words}.b32`.
    pub(super) fn store_vector_predicated(
        &self,
        at: PointerValue<'ctx>,
        dtype: DType,
        words: u8,
        p: IntValue<'ctx>,
        values: &[BasicValueEnum<'ctx>],
    ) -> Result<(), EmitError> {
        let memory = values
            .iter()
            .map(|&v| self.memory_value(v, dtype))
            .collect::<Result<Vec<_>, _>>()?;
        let mut args = vec![p.into(), at.into()];
        args.extend(self.words_of(&memory, words)?);
        self.call_asm(Asm::StoreVector { words }, None, &args)?;
        Ok(())
    }

    /// The memory values `elements` (of one type) as `words` 32-bit words.
    fn words_of(
        &self,
        elements: &[BasicValueEnum<'ctx>],
        words: u8,
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        let i32t = self.ctx.i32_type();
        let first = elements
            .first()
            .ok_or_else(|| EmitError::internal("an empty vector access"))?;
        let vty = vector_type(first.get_type(), elements.len() as u32)?;
        let mut vector: VectorValue = vty.get_undef();
        for (i, &e) in elements.iter().enumerate() {
            vector =
                self.b
                    .build_insert_element(vector, e, i32t.const_int(i as u64, false), "e")?;
        }
        let packed = self
            .b
            .build_bit_cast(vector, i32t.vec_type(u32::from(words)), "words")?
            .into_vector_value();
        (0..u64::from(words))
            .map(|i| {
                Ok(self
                    .b
                    .build_extract_element(packed, i32t.const_int(i, false), "w")?)
            })
            .collect()
    }
}

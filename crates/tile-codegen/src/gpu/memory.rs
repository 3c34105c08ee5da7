//! Memory: global loads and stores through the tensor parameters (masked,
//! vectorized when every lane is enabled and the address is aligned),
//! shared memory, and the bounds checks of unproven accesses, which record
//! the first failure in the status record.

use super::asm::Asm;
use super::kernel::{int, tensor, Kernel, Operands};
use super::{GpuEmitter, GpuTarget};
use crate::scalar::Record;
use crate::EmitError;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValue, BasicValueEnum, IntValue, PointerValue};
use inkwell::AtomicOrdering;
use tile_abi::device_print::GPU_AREA_OFFSET;
use tile_abi::status::{STATUS_CHECK, STATUS_INDEX, STATUS_PROGRAM};
use tile_abi::FaultCode;
use tile_ir::{AtomicOp, DType, MemOrder, Scalar};
use tile_thread::program::GlobalOperands;

impl<'ctx> GpuEmitter<'_, 'ctx> {
    /// Loads an element of `dtype` at `at` as a register value.
    pub(super) fn load_elem(
        &self,
        at: PointerValue<'ctx>,
        dtype: DType,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        let v = self.b.build_load(self.mem_type(dtype), at, "ld")?;
        self.register_value(v, dtype)
    }

    /// Stores the register value `v` of `dtype` at `at`.
    pub(super) fn store_elem(
        &self,
        at: PointerValue<'ctx>,
        v: BasicValueEnum<'ctx>,
        dtype: DType,
    ) -> Result<(), EmitError> {
        self.b.build_store(at, self.memory_value(v, dtype)?)?;
        Ok(())
    }

    /// The address of element `index` (i64) of tensor parameter `param`.
    pub(super) fn global_at(
        &self,
        k: &Kernel<'_, 'ctx>,
        param: usize,
        dtype: DType,
        index: IntValue<'ctx>,
    ) -> Result<PointerValue<'ctx>, EmitError> {
        let base = tensor(k, param)?.base;
        // SAFETY (of the generated code): the lowering guarantees the offset
        // lies inside the tensor wherever the access's mask is true, and only
        // then is the address dereferenced.
        Ok(unsafe {
            self.b
                .build_gep(self.mem_type(dtype), base, &[index], "at")?
        })
    }

    pub(super) fn shared_at(
        &self,
        k: &Kernel<'_, 'ctx>,
        alloc: usize,
        dtype: DType,
        index: IntValue<'ctx>,
    ) -> Result<PointerValue<'ctx>, EmitError> {
        let start = *k
            .shared
            .get(alloc)
            .ok_or_else(|| EmitError::internal("shared allocation"))?;
        // SAFETY (of the generated code): shared indices come from the
        // lowering's layouts, inside the allocation (the emulator checks).
        Ok(unsafe {
            self.b
                .build_gep(self.mem_type(dtype), start, &[index], "sat")?
        })
    }

    /// `ld.global` ([`GlobalOperands`]): one vector load where the vector
    /// condition holds (the lowering guarantees the alignment and the
    /// masks then), else a masked load per element at its own address —
    /// or, when every element's mask is the vector condition itself (a
    /// tensor promised aligned), no load: each element is then masked off.
    /// That last case is one predicated instruction where the target has
    /// it (`super::predicated`).
    pub(super) fn load_global(
        &self,
        k: &Kernel<'_, 'ctx>,
        param: usize,
        width: usize,
        dtype: DType,
        x: &[BasicValueEnum<'ctx>],
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        let o = GlobalOperands::load(x, width)
            .ok_or_else(|| EmitError::internal("ld.global operands"))?;
        let masks: Vec<IntValue> = o.masks.iter().map(|m| m.into_int_value()).collect();
        let lane = |i: usize| -> Result<BasicValueEnum<'ctx>, EmitError> {
            let at = self.global_at(k, param, dtype, o.lanes[i].into_int_value())?;
            let other = self.memory_value(o.others[i], dtype)?;
            self.masked_load_mem(k, param, at, dtype, masks[i], other)
        };
        let Some(ok) = o.vector_ok else {
            return Ok(vec![self.register_value(lane(0)?, dtype)?]);
        };
        let whole = o.masks.iter().all(|m| m == ok);
        if let Some(words) = self.predicated_words(width, dtype).filter(|_| whole) {
            let at = self.global_at(k, param, dtype, o.addr.into_int_value())?;
            let others = o
                .others
                .iter()
                .map(|&v| self.memory_value(v, dtype))
                .collect::<Result<Vec<_>, _>>()?;
            return self.load_vector_predicated(
                k,
                param,
                at,
                dtype,
                words,
                ok.into_int_value(),
                &others,
            );
        }
        let vector = self.ctx.append_basic_block(k.function, "ldv");
        let lanes = self.ctx.append_basic_block(k.function, "ldl");
        let done = self.ctx.append_basic_block(k.function, "ldv.done");
        self.b
            .build_conditional_branch(ok.into_int_value(), vector, lanes)?;
        // Both paths meet in a phi of the vector (so LLVM keeps the wide
        // load instead of scalarizing it), which is then split into lanes.
        self.b.position_at_end(vector);
        let elem = self.mem_type(dtype);
        let vty = vector_type(elem, width as u32)?;
        let at = self.global_at(k, param, dtype, o.addr.into_int_value())?;
        let load = self.b.build_load(vty, at, "vec")?;
        set_alignment(load, width as u32 * dtype.size_bytes() as u32)?;
        let fast_end = self.current_block()?;
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(lanes);
        let mut slow = vty.get_undef();
        for i in 0..width {
            let element = if whole {
                self.memory_value(o.others[i], dtype)?
            } else {
                lane(i)?
            };
            slow = self.b.build_insert_element(
                slow,
                element,
                self.ctx.i32_type().const_int(i as u64, false),
                "lane",
            )?;
        }
        let slow_end = self.current_block()?;
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(done);
        let phi = self.b.build_phi(vty, "v")?;
        phi.add_incoming(&[(&load, fast_end), (&slow, slow_end)]);
        let joined = phi.as_basic_value().into_vector_value();
        let mut out = Vec::new();
        for i in 0..width {
            let e = self.b.build_extract_element(
                joined,
                self.ctx.i32_type().const_int(i as u64, false),
                "e",
            )?;
            out.push(self.register_value(e, dtype)?);
        }
        Ok(out)
    }

    /// Loads the memory value of `dtype` at `at`, an address in tensor
    /// parameter `param`, where `mask`, else yields `other` (a memory value
    /// too). On NVIDIA's targets, one predicated `ld.global` (no branch;
    /// `.nc` when the kernel never writes the tensor); on AMD's, a branch
    /// around the load.
    fn masked_load_mem(
        &self,
        k: &Kernel<'_, 'ctx>,
        param: usize,
        at: PointerValue<'ctx>,
        dtype: DType,
        mask: IntValue<'ctx>,
        other: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        let elem = self.mem_type(dtype);
        if let GpuTarget::Nvptx(_) = self.gpu {
            let bits = access_bits(dtype);
            let nc = tensor(k, param)?.read_only;
            let word = self.access_word(other, bits)?;
            let loaded = self
                .call_asm(
                    Asm::LoadGlobal { bits, nc },
                    Some(word.get_type().into()),
                    &[at.into(), mask.into(), word.into()],
                )?
                .ok_or_else(|| EmitError::internal("ld.global returned nothing"))?;
            return self.memory_of_word(loaded.into_int_value(), elem, bits);
        }
        let from = self.current_block()?;
        let then = self.ctx.append_basic_block(k.function, "ld");
        let done = self.ctx.append_basic_block(k.function, "ld.done");
        self.b.build_conditional_branch(mask, then, done)?;
        self.b.position_at_end(then);
        let v = self.b.build_load(elem, at, "ld")?;
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(done);
        let phi = self.b.build_phi(elem, "v")?;
        phi.add_incoming(&[(&v, then), (&other, from)]);
        Ok(phi.as_basic_value())
    }

    /// Stores the register value `v` of `dtype` at `at` where `mask`: on
    /// NVIDIA's targets one predicated `st.global`, on AMD's a branch
    /// around the store.
    fn masked_store(
        &self,
        k: &Kernel<'_, 'ctx>,
        at: PointerValue<'ctx>,
        v: BasicValueEnum<'ctx>,
        dtype: DType,
        mask: IntValue<'ctx>,
    ) -> Result<(), EmitError> {
        if let GpuTarget::Nvptx(_) = self.gpu {
            let bits = access_bits(dtype);
            let word = self.access_word(self.memory_value(v, dtype)?, bits)?;
            self.call_asm(
                Asm::StoreGlobal { bits },
                None,
                &[mask.into(), at.into(), word.into()],
            )?;
            return Ok(());
        }
        self.when(k, mask, |s| s.store_elem(at, v, dtype))
    }

    /// The memory value `v` as the integer register of a `bits`-bit
    /// predicated access: its bits, a byte widened to 16.
    fn access_word(&self, v: BasicValueEnum<'ctx>, bits: u8) -> Result<IntValue<'ctx>, EmitError> {
        let int = self.int_type(u32::from(bits));
        let word = self.b.build_bit_cast(v, int, "bits")?.into_int_value();
        if bits == 8 {
            return Ok(self
                .b
                .build_int_z_extend(word, self.ctx.i16_type(), "w16")?);
        }
        Ok(word)
    }

    /// The memory value of type `elem` in the register of a `bits`-bit
    /// predicated access.
    fn memory_of_word(
        &self,
        word: IntValue<'ctx>,
        elem: BasicTypeEnum<'ctx>,
        bits: u8,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        let word = if bits == 8 {
            self.b.build_int_truncate(word, self.ctx.i8_type(), "w8")?
        } else {
            word
        };
        Ok(self.b.build_bit_cast(word, elem, "v")?)
    }

    /// `st.global` ([`GlobalOperands`]): one vector store where the
    /// vector condition holds, else a masked store per element at its own
    /// address — or none when every element's mask is the vector
    /// condition itself (see [`Self::load_global`]).
    pub(super) fn store_global(
        &self,
        k: &Kernel<'_, 'ctx>,
        param: usize,
        width: usize,
        dtype: DType,
        x: &[BasicValueEnum<'ctx>],
    ) -> Result<(), EmitError> {
        let o = GlobalOperands::store(x, width)
            .ok_or_else(|| EmitError::internal("st.global operands"))?;
        let masks: Vec<IntValue> = o.masks.iter().map(|m| m.into_int_value()).collect();
        let lane = |i: usize| -> Result<(), EmitError> {
            let at = self.global_at(k, param, dtype, o.lanes[i].into_int_value())?;
            self.masked_store(k, at, o.values[i], dtype, masks[i])
        };
        let Some(ok) = o.vector_ok else {
            return lane(0);
        };
        let whole = o.masks.iter().all(|m| m == ok);
        if let Some(words) = self.predicated_words(width, dtype).filter(|_| whole) {
            let at = self.global_at(k, param, dtype, o.addr.into_int_value())?;
            return self.store_vector_predicated(at, dtype, words, ok.into_int_value(), o.values);
        }
        let vector = self.ctx.append_basic_block(k.function, "stv");
        let lanes = self.ctx.append_basic_block(k.function, "stl");
        let done = self.ctx.append_basic_block(k.function, "stv.done");
        self.b
            .build_conditional_branch(ok.into_int_value(), vector, lanes)?;
        self.b.position_at_end(vector);
        let elem = self.mem_type(dtype);
        let mut vec = vector_type(elem, width as u32)?.get_undef();
        for (i, &v) in o.values.iter().enumerate() {
            vec = self.b.build_insert_element(
                vec,
                self.memory_value(v, dtype)?,
                self.ctx.i32_type().const_int(i as u64, false),
                "v",
            )?;
        }
        let at = self.global_at(k, param, dtype, o.addr.into_int_value())?;
        let store = self.b.build_store(at, vec)?;
        store
            .set_alignment(width as u32 * dtype.size_bytes() as u32)
            .map_err(|e| EmitError::Internal(e.to_string()))?;
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(lanes);
        if !whole {
            for i in 0..width {
                lane(i)?;
            }
        }
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(done);
        Ok(())
    }

    /// `print id`: where `on` holds, appends a record of `element` with its
    /// values to the print area, which follows the status record.
    pub(super) fn print(
        &self,
        k: &Kernel<'_, 'ctx>,
        id: u32,
        x: &Operands<'_, 'ctx>,
    ) -> Result<(), EmitError> {
        let (on, element, values) = (int(x, "on")?, int(x, "element")?, x.list("values"));
        let i64t = self.ctx.i64_type();
        self.when(k, on, |s| {
            // SAFETY (of the generated code): a kernel that prints gets a
            // print area after its status record (`tile_abi::device_print`).
            let area = unsafe {
                s.b.build_gep(
                    s.ctx.i8_type(),
                    k.status,
                    &[i64t.const_int(GPU_AREA_OFFSET, false)],
                    "print_area",
                )?
            };
            let record = Record {
                id,
                program: [s.block_id(0)?, s.block_id(1)?, s.block_id(2)?],
                element,
                values: values
                    .iter()
                    .map(|&v| s.value_bits(v))
                    .collect::<Result<_, _>>()?,
            };
            s.print_record(area, &record)
        })
    }

    /// A failed check (`ok` false) records itself in the status record:
    /// the first failure sets `code` from 0 to `code`, then writes its
    /// position, values and block.
    pub(super) fn check(
        &self,
        k: &Kernel<'_, 'ctx>,
        code: FaultCode,
        position: usize,
        x: &Operands<'_, 'ctx>,
    ) -> Result<(), EmitError> {
        let ok = int(x, "ok")?;
        let failed = self.b.build_not(ok, "failed")?;
        let (i32t, i64t) = (self.ctx.i32_type(), self.ctx.i64_type());
        self.when(k, failed, |s| {
            let b = &s.b;
            let won = b.build_cmpxchg(
                k.status,
                i32t.const_zero(),
                i32t.const_int(code as u64, false),
                AtomicOrdering::Monotonic,
                AtomicOrdering::Monotonic,
            )?;
            let first = b.build_extract_value(won, 1, "first")?.into_int_value();
            s.when(k, first, |s| {
                let b = &s.b;
                let i8t = s.ctx.i8_type();
                // SAFETY (of the generated code): the status record is
                // `STATUS_BYTES` long: code, check, then index[4].
                let check_at = unsafe {
                    b.build_gep(
                        i8t,
                        k.status,
                        &[i64t.const_int(STATUS_CHECK, false)],
                        "check",
                    )?
                };
                b.build_store(check_at, i32t.const_int(position as u64, false))?;
                for (i, v) in x.list("values").iter().take(4).enumerate() {
                    let at = unsafe {
                        b.build_gep(
                            i8t,
                            k.status,
                            &[i64t.const_int(STATUS_INDEX + 8 * i as u64, false)],
                            "index",
                        )?
                    };
                    let v = s.value_bits(*v)?;
                    b.build_store(at, v)?;
                }
                for axis in 0..3u8 {
                    let offset = STATUS_PROGRAM + 4 * u64::from(axis);
                    // SAFETY (of the generated code): as above; `program`
                    // is three `u32` at `STATUS_PROGRAM`.
                    let at = unsafe {
                        b.build_gep(i8t, k.status, &[i64t.const_int(offset, false)], "program")?
                    };
                    b.build_store(at, s.block_id(axis)?)?;
                }
                Ok(())
            })
        })?;
        Ok(())
    }
}

/// The bits of one element of `dtype` in memory.
fn access_bits(dtype: DType) -> u8 {
    (dtype.size_bytes() * 8) as u8
}

pub(super) fn vector_type(
    elem: BasicTypeEnum<'_>,
    width: u32,
) -> Result<inkwell::types::VectorType<'_>, EmitError> {
    match elem {
        BasicTypeEnum::IntType(t) => Ok(t.vec_type(width)),
        BasicTypeEnum::FloatType(t) => Ok(t.vec_type(width)),
        _ => Err(EmitError::internal("a vector of a non-scalar type")),
    }
}

pub(super) fn set_alignment(v: BasicValueEnum<'_>, bytes: u32) -> Result<(), EmitError> {
    v.as_instruction_value()
        .ok_or_else(|| EmitError::internal("a load that is not an instruction"))?
        .set_alignment(bytes)
        .map_err(|e| EmitError::Internal(e.to_string()))
}

impl<'ctx> GpuEmitter<'_, 'ctx> {
    /// `atom.global`: the update where the mask holds
    /// (`ScalarEmitter::atomic`), the dtype's zero elsewhere.
    pub(super) fn atomic_global(
        &self,
        k: &Kernel<'_, 'ctx>,
        param: usize,
        (op, order): (AtomicOp, MemOrder),
        dtype: DType,
        x: &Operands<'_, 'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        let (cmp, value) = match (x.list("values"), op == AtomicOp::Cas) {
            ([cmp, value], true) => (Some(*cmp), *value),
            ([value], false) => (None, *value),
            _ => return Err(EmitError::internal("atom.global operands")),
        };
        let mask = int(x, "mask")?;
        let at = self.global_at(k, param, dtype, int(x, "addr")?)?;
        let from = self.current_block()?;
        let then = self.ctx.append_basic_block(k.function, "atom");
        let done = self.ctx.append_basic_block(k.function, "atom.done");
        self.b.build_conditional_branch(mask, then, done)?;
        self.b.position_at_end(then);
        let old = self.atomic(op, order, dtype, at, value, cmp)?;
        let updated = self.current_block()?;
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(done);
        let phi = self.b.build_phi(self.reg_type(dtype), "old")?;
        let zero = self.constant(Scalar::zero(dtype))?;
        phi.add_incoming(&[(&old, updated), (&zero, from)]);
        Ok(phi.as_basic_value())
    }
}

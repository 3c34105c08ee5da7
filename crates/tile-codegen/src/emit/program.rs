//! The kernel function: parameters per the kernel ABI, registers, structured
//! `for`/`if`, global accesses (vectorized when every lane is enabled),
//! shared memory, bounds checks and shuffles.

use super::{EmitError, Emitter};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::basic_block::BasicBlock;
use inkwell::types::{BasicMetadataTypeEnum, BasicType, BasicTypeEnum};
use inkwell::values::{
    BasicValue, BasicValueEnum, FunctionValue, GlobalValue, IntValue, PointerValue,
};
use inkwell::{AddressSpace, AtomicOrdering, IntPredicate};
use std::collections::HashSet;
use tile_abi::status::{STATUS_CHECK, STATUS_INDEX};
use tile_abi::FaultCode;
use tile_ir::DType;
use tile_thread::program::{Op, ParamKind, Program, Reg, Region, ThreadOpKind};

/// A tensor parameter's values: base pointer, extents and strides.
struct TensorArgs<'ctx> {
    base: PointerValue<'ctx>,
    dims: Vec<IntValue<'ctx>>,
    strides: Vec<IntValue<'ctx>>,
}

/// A lowered kernel parameter.
enum ParamArgs<'ctx> {
    Tensor(TensorArgs<'ctx>),
    Scalar(BasicValueEnum<'ctx>),
}

/// The state of emitting one kernel.
struct Kernel<'p, 'ctx> {
    program: &'p Program,
    function: FunctionValue<'ctx>,
    regs: Vec<Option<BasicValueEnum<'ctx>>>,
    params: Vec<ParamArgs<'ctx>>,
    shared: Vec<GlobalValue<'ctx>>,
    status: PointerValue<'ctx>,
    thread: IntValue<'ctx>,
    checks: Vec<String>,
}

impl<'ctx> Emitter<'_, 'ctx> {
    /// The memory type of an element of `dtype` (bool is one byte).
    pub(crate) fn mem_type(&self, dtype: DType) -> BasicTypeEnum<'ctx> {
        match dtype {
            DType::Bool => self.ctx.i8_type().into(),
            d => self.reg_type(d),
        }
    }

    /// Emits the kernel of `program`; returns its bounds checks in order.
    pub(crate) fn kernel(&self, program: &Program) -> Result<Vec<String>, EmitError> {
        let global = AddressSpace::from(self.gpu()?.global_space());
        let ptr = self.ctx.ptr_type(global);
        let (i32t, i64t) = (self.ctx.i32_type(), self.ctx.i64_type());
        let mut types: Vec<BasicMetadataTypeEnum> = Vec::new();
        for p in &program.params {
            match &p.kind {
                ParamKind::Tensor(t) => {
                    types.push(ptr.into());
                    types.extend(std::iter::repeat_n(
                        BasicMetadataTypeEnum::from(i32t),
                        t.rank,
                    ));
                    types.extend(std::iter::repeat_n(
                        BasicMetadataTypeEnum::from(i64t),
                        t.rank,
                    ));
                }
                ParamKind::Scalar(d) => types.push(self.mem_type(*d).into()),
            }
        }
        types.push(ptr.into());
        let fn_type = self.ctx.void_type().fn_type(&types, false);
        let function = self.module.add_function(&program.name, fn_type, None);
        self.mark_kernel(function)?;
        let written = written_params(program);
        let noalias = self
            .ctx
            .create_enum_attribute(Attribute::get_named_enum_kind_id("noalias"), 0);
        let readonly = self
            .ctx
            .create_enum_attribute(Attribute::get_named_enum_kind_id("readonly"), 0);
        let entry = self.ctx.append_basic_block(function, "entry");
        self.b.position_at_end(entry);

        let mut params = Vec::new();
        let mut next = 0u32;
        let arg = |n: u32| {
            function
                .get_nth_param(n)
                .ok_or_else(|| EmitError::Internal(format!("kernel parameter {n}")))
        };
        for (index, p) in program.params.iter().enumerate() {
            match &p.kind {
                ParamKind::Tensor(t) => {
                    let base = arg(next)?.into_pointer_value();
                    base.set_name(&p.name);
                    function.add_attribute(AttributeLoc::Param(next), noalias);
                    if !written.contains(&index) {
                        function.add_attribute(AttributeLoc::Param(next), readonly);
                    }
                    next += 1;
                    let mut dims = Vec::new();
                    for _ in 0..t.rank {
                        dims.push(arg(next)?.into_int_value());
                        next += 1;
                    }
                    let mut strides = Vec::new();
                    for _ in 0..t.rank {
                        strides.push(arg(next)?.into_int_value());
                        next += 1;
                    }
                    params.push(ParamArgs::Tensor(TensorArgs {
                        base,
                        dims,
                        strides,
                    }));
                }
                ParamKind::Scalar(d) => {
                    let v = arg(next)?;
                    v.set_name(&p.name);
                    next += 1;
                    let v = if d.is_bool() {
                        let i = v.into_int_value();
                        self.b
                            .build_int_compare(IntPredicate::NE, i, i.get_type().const_zero(), "b")?
                            .into()
                    } else {
                        v
                    };
                    params.push(ParamArgs::Scalar(v));
                }
            }
        }
        let status = arg(next)?.into_pointer_value();
        status.set_name("status");
        function.add_attribute(AttributeLoc::Param(next), noalias);

        let shared_space = AddressSpace::from(self.gpu()?.shared_space());
        let mut shared = Vec::new();
        for (i, alloc) in program.shared.iter() {
            let ty = self.mem_type(alloc.dtype).array_type(alloc.len as u32);
            let g = self
                .module
                .add_global(ty, Some(shared_space), &format!("shared{}", i.index()));
            g.set_initializer(&ty.get_undef());
            g.set_linkage(inkwell::module::Linkage::Internal);
            g.set_alignment(16);
            shared.push(g);
        }
        let thread = self.thread_id()?;
        let mut k = Kernel {
            program,
            function,
            regs: vec![None; program.regs.len()],
            params,
            shared,
            status,
            thread,
            checks: Vec::new(),
        };
        self.region(&mut k, &program.body)?;
        self.b.build_return(None)?;
        Ok(k.checks)
    }

    /// Emits a region's ops; returns the values of its closing `yield`.
    fn region(
        &self,
        k: &mut Kernel<'_, 'ctx>,
        region: &Region,
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        for &id in &region.ops {
            let op = &k.program.ops[id];
            if let ThreadOpKind::Yield = op.kind {
                return op.operands.iter().map(|&r| get(k, r)).collect();
            }
            let results = self.op(k, op)?;
            if results.len() != op.results.len() {
                return Err(EmitError::Internal(format!(
                    "`{}` computed {} results for {}",
                    op.kind.name(),
                    results.len(),
                    op.results.len()
                )));
            }
            for (&r, v) in op.results.iter().zip(results) {
                k.regs[r.index()] = Some(v);
            }
        }
        Ok(Vec::new())
    }

    fn op(
        &self,
        k: &mut Kernel<'_, 'ctx>,
        op: &Op,
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        let b = &self.b;
        let i32t = self.ctx.i32_type();
        let x: Vec<BasicValueEnum<'ctx>> = match op.kind {
            // Region ops read their operands themselves.
            ThreadOpKind::For | ThreadOpKind::If => Vec::new(),
            _ => op
                .operands
                .iter()
                .map(|&r| get(k, r))
                .collect::<Result<_, _>>()?,
        };
        let dtype = |i: usize| -> Result<DType, EmitError> {
            op.operands
                .get(i)
                .map(|&r| k.program.dtype(r))
                .ok_or_else(|| {
                    EmitError::Internal(format!("`{}` lacks operand {i}", op.kind.name()))
                })
        };
        let one = |v: BasicValueEnum<'ctx>| Ok(vec![v]);
        match &op.kind {
            ThreadOpKind::ThreadId => one(k.thread.into()),
            ThreadOpKind::LaneId => one(b
                .build_and(k.thread, i32t.const_int(31, false), "lane")?
                .into()),
            ThreadOpKind::WarpId => one(b
                .build_right_shift(k.thread, i32t.const_int(5, false), false, "warp")?
                .into()),
            ThreadOpKind::BlockId { axis } => one(self.block_id(*axis)?.into()),
            ThreadOpKind::GridDim { axis } => {
                one(self.grid_dim(*axis, k.program.block_threads())?.into())
            }
            ThreadOpKind::Const(v) => one(self.constant(*v)?),
            ThreadOpKind::Param { index } => match k.params.get(*index) {
                Some(ParamArgs::Scalar(v)) => one(*v),
                _ => Err(EmitError::Internal(format!(
                    "parameter {index} is not a scalar"
                ))),
            },
            ThreadOpKind::TensorDim { param, axis } => one(tensor(k, *param)?
                .dims
                .get(*axis)
                .copied()
                .ok_or_else(|| EmitError::internal("tensor axis"))?
                .into()),
            ThreadOpKind::TensorStride { param, axis } => one(tensor(k, *param)?
                .strides
                .get(*axis)
                .copied()
                .ok_or_else(|| EmitError::internal("tensor axis"))?
                .into()),
            ThreadOpKind::TensorAlign { param } => {
                let i64t = self.ctx.i64_type();
                let addr = b.build_ptr_to_int(tensor(k, *param)?.base, i64t, "addr")?;
                let low = b.build_and(addr, b.build_int_neg(addr, "neg")?, "low")?;
                let cap = i64t.const_int(256, false);
                let big = b.build_int_compare(IntPredicate::EQ, low, i64t.const_zero(), "zero")?;
                let big = b.build_or(
                    big,
                    b.build_int_compare(IntPredicate::UGT, low, cap, "gt")?,
                    "big",
                )?;
                one(b.build_select(big, cap, low, "align")?)
            }
            ThreadOpKind::Unary(u) => one(self.unary(*u, dtype(0)?, x[0])?),
            ThreadOpKind::Binary(o) => one(self.binary(*o, dtype(0)?, x[0], x[1])?),
            ThreadOpKind::Cmp(p) => one(self.compare(*p, dtype(0)?, x[0], x[1])?),
            ThreadOpKind::Select => one(self.select(x[0], x[1], x[2])?),
            ThreadOpKind::Fma => one(self.fma(dtype(0)?, x[0], x[1], x[2])?),
            ThreadOpKind::Cast { to } => one(self.cast(x[0], dtype(0)?, *to)?),
            ThreadOpKind::LoadGlobal { param, width } => {
                let dt = op
                    .results
                    .first()
                    .map(|&r| k.program.dtype(r))
                    .ok_or_else(|| EmitError::internal("ld.global without results"))?;
                self.load_global(k, *param, usize::from(*width), dt, &x)
            }
            ThreadOpKind::StoreGlobal { param, width } => {
                let dt = dtype(1)?;
                self.store_global(k, *param, usize::from(*width), dt, &x)?;
                Ok(Vec::new())
            }
            ThreadOpKind::LoadShared { alloc } => {
                let dt = op
                    .results
                    .first()
                    .map(|&r| k.program.dtype(r))
                    .ok_or_else(|| EmitError::internal("ld.shared without results"))?;
                let at = self.shared_at(k, alloc.index(), dt, x[0].into_int_value())?;
                one(self.load_elem(at, dt)?)
            }
            ThreadOpKind::StoreShared { alloc } => {
                let dt = dtype(1)?;
                let at = self.shared_at(k, alloc.index(), dt, x[0].into_int_value())?;
                self.when(k, x[2].into_int_value(), |s| s.store_elem(at, x[1], dt))?;
                Ok(Vec::new())
            }
            ThreadOpKind::BoundsCheck { op: checked } => {
                let position = k.checks.len();
                k.checks.push(checked.clone());
                self.bounds_check(k, position, &x)?;
                Ok(Vec::new())
            }
            ThreadOpKind::Barrier => {
                self.barrier()?;
                Ok(Vec::new())
            }
            ThreadOpKind::Shuffle { mode, width } => {
                one(self.shuffle(k, *mode, *width, dtype(0)?, x[0], x[1].into_int_value())?)
            }
            ThreadOpKind::For => self.for_loop(k, op),
            ThreadOpKind::If => self.if_else(k, op),
            ThreadOpKind::Yield => Err(EmitError::internal("`yield` outside the end of a region")),
        }
    }

    /// Loads an element of `dtype` at `at` as a register value.
    fn load_elem(
        &self,
        at: PointerValue<'ctx>,
        dtype: DType,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        let v = self.b.build_load(self.mem_type(dtype), at, "ld")?;
        if dtype.is_bool() {
            let i = v.into_int_value();
            return Ok(self
                .b
                .build_int_compare(IntPredicate::NE, i, i.get_type().const_zero(), "b")?
                .into());
        }
        Ok(v)
    }

    /// Stores the register value `v` of `dtype` at `at`.
    fn store_elem(
        &self,
        at: PointerValue<'ctx>,
        v: BasicValueEnum<'ctx>,
        dtype: DType,
    ) -> Result<(), EmitError> {
        let v = if dtype.is_bool() {
            self.b
                .build_int_z_extend(v.into_int_value(), self.ctx.i8_type(), "b8")?
                .into()
        } else {
            v
        };
        self.b.build_store(at, v)?;
        Ok(())
    }

    /// The address of element `index` (i64) of tensor parameter `param`.
    fn global_at(
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

    fn shared_at(
        &self,
        k: &Kernel<'_, 'ctx>,
        alloc: usize,
        dtype: DType,
        index: IntValue<'ctx>,
    ) -> Result<PointerValue<'ctx>, EmitError> {
        let g = k
            .shared
            .get(alloc)
            .ok_or_else(|| EmitError::internal("shared allocation"))?;
        // SAFETY (of the generated code): shared indices come from the
        // lowering's layouts, inside the allocation (the emulator checks).
        Ok(unsafe {
            self.b
                .build_gep(self.mem_type(dtype), g.as_pointer_value(), &[index], "sat")?
        })
    }

    /// Runs `body` only in threads where `cond` holds.
    fn when(
        &self,
        k: &Kernel<'_, 'ctx>,
        cond: IntValue<'ctx>,
        body: impl FnOnce(&Self) -> Result<(), EmitError>,
    ) -> Result<(), EmitError> {
        let then = self.ctx.append_basic_block(k.function, "then");
        let done = self.ctx.append_basic_block(k.function, "done");
        self.b.build_conditional_branch(cond, then, done)?;
        self.b.position_at_end(then);
        body(self)?;
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(done);
        Ok(())
    }

    /// Loads `value` at `at` where `mask`, else yields `other`.
    fn masked_load(
        &self,
        k: &Kernel<'_, 'ctx>,
        at: PointerValue<'ctx>,
        dtype: DType,
        mask: IntValue<'ctx>,
        other: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        let from = self.current_block()?;
        let then = self.ctx.append_basic_block(k.function, "ld");
        let done = self.ctx.append_basic_block(k.function, "ld.done");
        self.b.build_conditional_branch(mask, then, done)?;
        self.b.position_at_end(then);
        let v = self.load_elem(at, dtype)?;
        let loaded = self.current_block()?;
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(done);
        let phi = self.b.build_phi(self.reg_type(dtype), "v")?;
        phi.add_incoming(&[(&v, loaded), (&other, from)]);
        Ok(phi.as_basic_value())
    }

    fn current_block(&self) -> Result<BasicBlock<'ctx>, EmitError> {
        self.b
            .get_insert_block()
            .ok_or_else(|| EmitError::internal("no insert block"))
    }

    /// `ld.global`: one vector load when every lane's mask holds (the
    /// lowering guarantees the alignment of `width`-wide accesses), else a
    /// load per enabled lane.
    fn load_global(
        &self,
        k: &Kernel<'_, 'ctx>,
        param: usize,
        width: usize,
        dtype: DType,
        x: &[BasicValueEnum<'ctx>],
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        if x.len() != 1 + 2 * width {
            return Err(EmitError::internal("ld.global operands"));
        }
        let addr = x[0].into_int_value();
        let masks: Vec<IntValue> = x[1..=width].iter().map(|m| m.into_int_value()).collect();
        let others = &x[1 + width..];
        let lane_at = |i: usize| -> Result<PointerValue<'ctx>, EmitError> {
            let idx =
                self.b
                    .build_int_add(addr, self.ctx.i64_type().const_int(i as u64, false), "i")?;
            self.global_at(k, param, dtype, idx)
        };
        if width == 1 {
            return Ok(vec![self.masked_load(
                k,
                lane_at(0)?,
                dtype,
                masks[0],
                others[0],
            )?]);
        }
        let all = self.all(&masks)?;
        let vector = self.ctx.append_basic_block(k.function, "ldv");
        let lanes = self.ctx.append_basic_block(k.function, "ldl");
        let done = self.ctx.append_basic_block(k.function, "ldv.done");
        self.b.build_conditional_branch(all, vector, lanes)?;
        // Both paths meet in a phi of the vector (so LLVM keeps the wide
        // load instead of scalarizing it), which is then split into lanes.
        self.b.position_at_end(vector);
        let elem = self.mem_type(dtype);
        let vty = vector_type(elem, width as u32)?;
        let load = self.b.build_load(vty, lane_at(0)?, "vec")?;
        set_alignment(load, width as u32 * dtype.size_bytes() as u32)?;
        let fast_end = self.current_block()?;
        self.b.build_unconditional_branch(done)?;
        // Slow path: lane by lane.
        self.b.position_at_end(lanes);
        let mut slow = vty.get_undef();
        for i in 0..width {
            let other = if dtype.is_bool() {
                self.b
                    .build_int_z_extend(others[i].into_int_value(), self.ctx.i8_type(), "o8")?
                    .into()
            } else {
                others[i]
            };
            let v = self.masked_load_mem(k, lane_at(i)?, elem, masks[i], other)?;
            slow = self.b.build_insert_element(
                slow,
                v,
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
            out.push(if dtype.is_bool() {
                let i = e.into_int_value();
                self.b
                    .build_int_compare(IntPredicate::NE, i, i.get_type().const_zero(), "b")?
                    .into()
            } else {
                e
            });
        }
        Ok(out)
    }

    /// Loads the memory value of type `elem` at `at` where `mask`, else
    /// yields `other` (a memory value too).
    fn masked_load_mem(
        &self,
        k: &Kernel<'_, 'ctx>,
        at: PointerValue<'ctx>,
        elem: BasicTypeEnum<'ctx>,
        mask: IntValue<'ctx>,
        other: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
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

    /// `st.global`: one vector store when every lane's mask holds, else a
    /// store per enabled lane.
    fn store_global(
        &self,
        k: &Kernel<'_, 'ctx>,
        param: usize,
        width: usize,
        dtype: DType,
        x: &[BasicValueEnum<'ctx>],
    ) -> Result<(), EmitError> {
        if x.len() != 1 + 2 * width {
            return Err(EmitError::internal("st.global operands"));
        }
        let addr = x[0].into_int_value();
        let values = &x[1..=width];
        let masks: Vec<IntValue> = x[1 + width..].iter().map(|m| m.into_int_value()).collect();
        let lane_at = |i: usize| -> Result<PointerValue<'ctx>, EmitError> {
            let idx =
                self.b
                    .build_int_add(addr, self.ctx.i64_type().const_int(i as u64, false), "i")?;
            self.global_at(k, param, dtype, idx)
        };
        if width == 1 {
            return self.when(k, masks[0], |s| s.store_elem(lane_at(0)?, values[0], dtype));
        }
        let all = self.all(&masks)?;
        let vector = self.ctx.append_basic_block(k.function, "stv");
        let lanes = self.ctx.append_basic_block(k.function, "stl");
        let done = self.ctx.append_basic_block(k.function, "stv.done");
        self.b.build_conditional_branch(all, vector, lanes)?;
        self.b.position_at_end(vector);
        let elem = self.mem_type(dtype);
        let mut vec = vector_type(elem, width as u32)?.get_undef();
        for (i, &v) in values.iter().enumerate() {
            let v = if dtype.is_bool() {
                self.b
                    .build_int_z_extend(v.into_int_value(), self.ctx.i8_type(), "b8")?
                    .into()
            } else {
                v
            };
            vec = self.b.build_insert_element(
                vec,
                v,
                self.ctx.i32_type().const_int(i as u64, false),
                "v",
            )?;
        }
        let store = self.b.build_store(lane_at(0)?, vec)?;
        store
            .set_alignment(width as u32 * dtype.size_bytes() as u32)
            .map_err(|e| EmitError::Internal(e.to_string()))?;
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(lanes);
        for i in 0..width {
            self.when(k, masks[i], |s| s.store_elem(lane_at(i)?, values[i], dtype))?;
        }
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(done);
        Ok(())
    }

    /// The conjunction of `masks`.
    fn all(&self, masks: &[IntValue<'ctx>]) -> Result<IntValue<'ctx>, EmitError> {
        let mut all = masks[0];
        for &m in &masks[1..] {
            all = self.b.build_and(all, m, "all")?;
        }
        Ok(all)
    }

    /// A failed check (`x[0]` false) records itself in the status record:
    /// the first failure sets `code` from 0 to
    /// [`FaultCode::OutsideTensor`], then writes its position and indices.
    fn bounds_check(
        &self,
        k: &Kernel<'_, 'ctx>,
        position: usize,
        x: &[BasicValueEnum<'ctx>],
    ) -> Result<(), EmitError> {
        let ok = x
            .first()
            .ok_or_else(|| EmitError::internal("bounds_check without a predicate"))?
            .into_int_value();
        let failed = self.b.build_not(ok, "failed")?;
        let (i32t, i64t) = (self.ctx.i32_type(), self.ctx.i64_type());
        self.when(k, failed, |s| {
            let b = &s.b;
            let won = b.build_cmpxchg(
                k.status,
                i32t.const_zero(),
                i32t.const_int(FaultCode::OutsideTensor as u64, false),
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
                for (i, v) in x[1..].iter().take(4).enumerate() {
                    let at = unsafe {
                        b.build_gep(
                            i8t,
                            k.status,
                            &[i64t.const_int(STATUS_INDEX + 8 * i as u64, false)],
                            "index",
                        )?
                    };
                    let v = v.into_int_value();
                    let v = if v.get_type().get_bit_width() < 64 {
                        b.build_int_s_extend(v, i64t, "ix")?
                    } else {
                        v
                    };
                    b.build_store(at, v)?;
                }
                Ok(())
            })
        })?;
        Ok(())
    }

    /// A shuffle of any dtype: as 32-bit words (64-bit values in two halves).
    fn shuffle(
        &self,
        k: &Kernel<'_, 'ctx>,
        mode: tile_thread::program::ShuffleMode,
        width: u8,
        dtype: DType,
        v: BasicValueEnum<'ctx>,
        lane_b: IntValue<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        let b = &self.b;
        let (i32t, i64t) = (self.ctx.i32_type(), self.ctx.i64_type());
        let bits = dtype.bits().max(1);
        let it = self.int_type(if dtype.is_bool() { 1 } else { bits });
        let raw = b.build_bit_cast(v, it, "raw")?.into_int_value();
        let out = if bits == 64 {
            let lo = b.build_int_truncate(raw, i32t, "lo")?;
            let hi = b.build_int_truncate(
                b.build_right_shift(raw, i64t.const_int(32, false), false, "h")?,
                i32t,
                "hi",
            )?;
            let lo = self.shuffle32(mode, width, lo, lane_b, k.thread)?;
            let hi = self.shuffle32(mode, width, hi, lane_b, k.thread)?;
            let hi = b.build_left_shift(
                b.build_int_z_extend(hi, i64t, "hz")?,
                i64t.const_int(32, false),
                "hs",
            )?;
            b.build_or(hi, b.build_int_z_extend(lo, i64t, "lz")?, "w")?
        } else {
            let w = if it.get_bit_width() == 32 {
                raw
            } else {
                b.build_int_z_extend(raw, i32t, "w")?
            };
            let s = self.shuffle32(mode, width, w, lane_b, k.thread)?;
            if it.get_bit_width() == 32 {
                s
            } else {
                b.build_int_truncate(s, it, "t")?
            }
        };
        Ok(b.build_bit_cast(out, self.reg_type(dtype), "shuffled")?)
    }

    /// A uniform counted loop: `for iv = lo; iv < hi; iv += step` carrying
    /// values, leaving when the next value would overflow.
    fn for_loop(
        &self,
        k: &mut Kernel<'_, 'ctx>,
        op: &Op,
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        let b = &self.b;
        let body = op
            .regions
            .first()
            .ok_or_else(|| EmitError::internal("`for` without a body"))?;
        let x: Vec<BasicValueEnum> = op
            .operands
            .iter()
            .map(|&r| get(k, r))
            .collect::<Result<_, _>>()?;
        let [lo, hi, step, inits @ ..] = x.as_slice() else {
            return Err(EmitError::internal("`for` without bounds"));
        };
        let iv_dtype = k.program.dtype(op.operands[0]);
        let signed = iv_dtype.is_signed_int();
        let pre = self.current_block()?;
        let header = self.ctx.append_basic_block(k.function, "for");
        let body_bb = self.ctx.append_basic_block(k.function, "for.body");
        let exit = self.ctx.append_basic_block(k.function, "for.exit");
        b.build_unconditional_branch(header)?;
        b.position_at_end(header);
        let iv = b.build_phi(lo.get_type(), "iv")?;
        let carried: Vec<_> = inits
            .iter()
            .map(|v| b.build_phi(v.get_type(), "carried"))
            .collect::<Result<_, _>>()?;
        iv.add_incoming(&[(lo, pre)]);
        for (p, v) in carried.iter().zip(inits) {
            p.add_incoming(&[(v, pre)]);
        }
        let ivv = iv.as_basic_value().into_int_value();
        let pred = if signed {
            IntPredicate::SLT
        } else {
            IntPredicate::ULT
        };
        let go = b.build_int_compare(pred, ivv, hi.into_int_value(), "go")?;
        b.build_conditional_branch(go, body_bb, exit)?;
        b.position_at_end(body_bb);
        let args = &body.args;
        if args.len() != inits.len() + 1 {
            return Err(EmitError::internal("`for` body arity"));
        }
        k.regs[args[0].index()] = Some(ivv.into());
        for (&a, p) in args[1..].iter().zip(&carried) {
            k.regs[a.index()] = Some(p.as_basic_value());
        }
        let yielded = self.region(k, body)?;
        let name = if signed {
            "llvm.sadd.with.overflow"
        } else {
            "llvm.uadd.with.overflow"
        };
        let add = self.intrinsic(name, &[ivv.get_type().into()])?;
        let sum = b
            .build_call(add, &[ivv.into(), step.into_int_value().into()], "next")?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| EmitError::internal("add.with.overflow"))?
            .into_struct_value();
        let next = b.build_extract_value(sum, 0, "iv.next")?;
        let overflow = b.build_extract_value(sum, 1, "overflow")?.into_int_value();
        let latch = self.current_block()?;
        b.build_conditional_branch(overflow, exit, header)?;
        iv.add_incoming(&[(&next, latch)]);
        if yielded.len() != carried.len() {
            return Err(EmitError::internal(
                "`for` yields the wrong number of values",
            ));
        }
        for (p, v) in carried.iter().zip(&yielded) {
            p.add_incoming(&[(v, latch)]);
        }
        b.position_at_end(exit);
        let mut out = Vec::new();
        for (p, v) in carried.iter().zip(&yielded) {
            let r = b.build_phi(p.as_basic_value().get_type(), "result")?;
            r.add_incoming(&[(&p.as_basic_value(), header), (v, latch)]);
            out.push(r.as_basic_value());
        }
        Ok(out)
    }

    /// A uniform branch with two regions ending in `yield`.
    fn if_else(
        &self,
        k: &mut Kernel<'_, 'ctx>,
        op: &Op,
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        let b = &self.b;
        let [then_r, else_r] = op.regions.as_slice() else {
            return Err(EmitError::internal("`if` without two regions"));
        };
        let cond = get(k, op.operands[0])?.into_int_value();
        let then_bb = self.ctx.append_basic_block(k.function, "then");
        let else_bb = self.ctx.append_basic_block(k.function, "else");
        let merge = self.ctx.append_basic_block(k.function, "endif");
        b.build_conditional_branch(cond, then_bb, else_bb)?;
        b.position_at_end(then_bb);
        let t = self.region(k, then_r)?;
        let t_end = self.current_block()?;
        b.build_unconditional_branch(merge)?;
        b.position_at_end(else_bb);
        let e = self.region(k, else_r)?;
        let e_end = self.current_block()?;
        b.build_unconditional_branch(merge)?;
        b.position_at_end(merge);
        if t.len() != e.len() {
            return Err(EmitError::internal("`if` branches yield different counts"));
        }
        let mut out = Vec::new();
        for (tv, ev) in t.iter().zip(&e) {
            let phi = b.build_phi(tv.get_type(), "if")?;
            phi.add_incoming(&[(tv, t_end), (ev, e_end)]);
            out.push(phi.as_basic_value());
        }
        Ok(out)
    }
}

fn get<'ctx>(k: &Kernel<'_, 'ctx>, r: Reg) -> Result<BasicValueEnum<'ctx>, EmitError> {
    k.regs
        .get(r.index())
        .copied()
        .flatten()
        .ok_or_else(|| EmitError::Internal(format!("%{} is used before it is defined", r.index())))
}

fn tensor<'a, 'ctx>(
    k: &'a Kernel<'_, 'ctx>,
    param: usize,
) -> Result<&'a TensorArgs<'ctx>, EmitError> {
    match k.params.get(param) {
        Some(ParamArgs::Tensor(t)) => Ok(t),
        _ => Err(EmitError::Internal(format!(
            "parameter {param} is not a tensor"
        ))),
    }
}

fn vector_type(
    elem: BasicTypeEnum<'_>,
    width: u32,
) -> Result<inkwell::types::VectorType<'_>, EmitError> {
    match elem {
        BasicTypeEnum::IntType(t) => Ok(t.vec_type(width)),
        BasicTypeEnum::FloatType(t) => Ok(t.vec_type(width)),
        _ => Err(EmitError::internal("a vector of a non-scalar type")),
    }
}

fn set_alignment(v: BasicValueEnum<'_>, bytes: u32) -> Result<(), EmitError> {
    v.as_instruction_value()
        .ok_or_else(|| EmitError::internal("a load that is not an instruction"))?
        .set_alignment(bytes)
        .map_err(|e| EmitError::Internal(e.to_string()))
}

/// The tensor parameters some `st.global` writes.
fn written_params(program: &Program) -> HashSet<usize> {
    program
        .ops
        .iter()
        .filter_map(|(_, op)| match op.kind {
            ThreadOpKind::StoreGlobal { param, .. } => Some(param),
            _ => None,
        })
        .collect()
}

//! The kernel function: parameters per the kernel ABI, shared memory, the
//! registers of the thread-level program, and the dispatch of each op to
//! the file of its concern (`memory`, `control`, `shuffle`, the scalar
//! emitter).

use super::asm::Asm;
use super::nan;
use super::GpuEmitter;
use crate::scalar::Nans;
use crate::EmitError;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::types::BasicMetadataTypeEnum;
use inkwell::values::{BasicValueEnum, FunctionValue, IntValue, PointerValue};
use inkwell::{AddressSpace, IntPredicate};
use std::collections::HashSet;
use tile_abi::FaultCode;
use tile_ir::DType;
use tile_thread::program::{
    CheckKind, GlobalOperands, Op, OpId, ParamKind, Program, Reg, Region, Roles, ThreadOpKind,
};

/// An op's operand values by role.
pub(super) type Operands<'a, 'ctx> = Roles<'a, BasicValueEnum<'ctx>>;

/// The operand of role `name`.
pub(super) fn operand<'ctx>(
    x: &Operands<'_, 'ctx>,
    name: &str,
) -> Result<BasicValueEnum<'ctx>, EmitError> {
    x.get(name)
        .copied()
        .ok_or_else(|| EmitError::Internal(format!("no operand `{name}`")))
}

/// The integer operand of role `name`.
pub(super) fn int<'ctx>(x: &Operands<'_, 'ctx>, name: &str) -> Result<IntValue<'ctx>, EmitError> {
    operand(x, name).map(BasicValueEnum::into_int_value)
}

/// The integer operands of roles `names`.
pub(super) fn ints<'ctx, const N: usize>(
    x: &Operands<'_, 'ctx>,
    names: [&str; N],
) -> Result<[IntValue<'ctx>; N], EmitError> {
    if let Some(missing) = names.iter().find(|name| x.get(name).is_none()) {
        return Err(EmitError::Internal(format!("no operand `{missing}`")));
    }
    Ok(names.map(|name| x.get(name).expect("checked above").into_int_value()))
}

/// A tensor parameter's values: base pointer, extents and strides.
pub(super) struct TensorArgs<'ctx> {
    pub(super) base: PointerValue<'ctx>,
    pub(super) dims: Vec<IntValue<'ctx>>,
    pub(super) strides: Vec<IntValue<'ctx>>,
    /// Whether the kernel never writes the tensor.
    pub(super) read_only: bool,
}

/// A lowered kernel parameter.
pub(super) enum ParamArgs<'ctx> {
    Tensor(TensorArgs<'ctx>),
    Scalar(BasicValueEnum<'ctx>),
    /// A tensor array: where its records are, and their number (`i32`).
    Tensors {
        records: PointerValue<'ctx>,
        count: IntValue<'ctx>,
    },
    /// A tensor of an array no `get_tensor` has bound yet.
    Unbound,
}

/// The state of emitting one kernel.
pub(super) struct Kernel<'p, 'ctx> {
    pub(super) program: &'p Program,
    pub(super) function: FunctionValue<'ctx>,
    pub(super) regs: Vec<Option<BasicValueEnum<'ctx>>>,
    pub(super) params: Vec<ParamArgs<'ctx>>,
    /// The start of each shared allocation.
    pub(super) shared: Vec<PointerValue<'ctx>>,
    pub(super) status: PointerValue<'ctx>,
    /// The tensor maps the kernel takes, in [`Program::tma_maps`]' order.
    pub(super) maps: Vec<PointerValue<'ctx>>,
    pub(super) thread: IntValue<'ctx>,
    pub(super) checks: Vec<String>,
    /// The ops whose NaN results no use observes (`gpu/nan.rs`): emitted
    /// without canonicalizing them.
    pub(super) free_nans: HashSet<OpId>,
    /// The selects that canonicalize their observed results
    /// ([`nan::canonicalizing_selects`]).
    pub(super) canonicalizing_selects: HashSet<OpId>,
    /// The parity of the phase of the mbarrier `tcgen05.commit_wait` waits
    /// on next (an `i32` variable, 0 at the start), where the kernel has
    /// one.
    pub(super) tmem_phase: Option<PointerValue<'ctx>>,
}

impl<'ctx> GpuEmitter<'_, 'ctx> {
    /// Emits the kernel of `program`; returns its bounds checks in order.
    pub(crate) fn kernel(&self, program: &Program) -> Result<Vec<String>, EmitError> {
        let global = AddressSpace::from(self.gpu.global_space());
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
                ParamKind::Tensors(_) => {
                    types.push(ptr.into());
                    types.push(i32t.into());
                }
                ParamKind::Element { .. } => {}
            }
        }
        types.push(ptr.into());
        // The tensor maps, by value: `ptr byval([128 x i8]) align 64`.
        let maps = program.tma_maps();
        let generic = self.ctx.ptr_type(AddressSpace::default());
        types.extend(maps.iter().map(|_| BasicMetadataTypeEnum::from(generic)));
        let fn_type = self.ctx.void_type().fn_type(&types, false);
        let function = self.module.add_function(&program.name, fn_type, None);
        self.mark_kernel(function, program.block_threads())?;
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
                    let read_only = !written.contains(&index);
                    if read_only {
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
                        read_only,
                    }));
                }
                ParamKind::Scalar(d) => {
                    let v = arg(next)?;
                    v.set_name(&p.name);
                    next += 1;
                    params.push(ParamArgs::Scalar(self.register_value(v, *d)?));
                }
                ParamKind::Tensors(_) => {
                    let records = arg(next)?.into_pointer_value();
                    records.set_name(&p.name);
                    function.add_attribute(AttributeLoc::Param(next), noalias);
                    function.add_attribute(AttributeLoc::Param(next), readonly);
                    let count = arg(next + 1)?.into_int_value();
                    count.set_name(&format!("{}.count", p.name));
                    next += 2;
                    params.push(ParamArgs::Tensors { records, count });
                }
                ParamKind::Element { .. } => params.push(ParamArgs::Unbound),
            }
        }
        let status = arg(next)?.into_pointer_value();
        status.set_name("status");
        function.add_attribute(AttributeLoc::Param(next), noalias);
        let map_type = self
            .ctx
            .i8_type()
            .array_type(tile_abi::tma::MAP_BYTES as u32);
        let byval = self
            .ctx
            .create_type_attribute(Attribute::get_named_enum_kind_id("byval"), map_type.into());
        let align = self
            .ctx
            .create_enum_attribute(Attribute::get_named_enum_kind_id("align"), 64);
        let mut map_params = Vec::new();
        for (i, (param, rows)) in maps.iter().enumerate() {
            let n = next + 1 + i as u32;
            let map = arg(n)?.into_pointer_value();
            map.set_name(&format!("tmap.{}.{rows}", program.params[*param].name));
            function.add_attribute(AttributeLoc::Param(n), byval);
            function.add_attribute(AttributeLoc::Param(n), align);
            self.grid_constant(function, n)?;
            map_params.push(map);
        }

        let shared = self.shared_allocations(program)?;
        let thread = self.thread_id()?;
        let commits = program
            .ops
            .iter()
            .any(|(_, op)| matches!(op.kind, ThreadOpKind::Tcgen05CommitWait { .. }));
        let tmem_phase = match commits {
            true => {
                let i32t = self.ctx.i32_type();
                let phase = self.b.build_alloca(i32t, "tmem.phase")?;
                self.b.build_store(phase, i32t.const_zero())?;
                Some(phase)
            }
            false => None,
        };
        let selects = nan::canonicalizing_selects(program);
        let mut k = Kernel {
            program,
            function,
            regs: vec![None; program.regs.len()],
            params,
            shared,
            status,
            maps: map_params,
            thread,
            checks: Vec::new(),
            free_nans: nan::unobserved_nans(program, &selects),
            canonicalizing_selects: selects,
            tmem_phase,
        };
        self.region(&mut k, &program.body)?;
        self.b.build_return(None)?;
        Ok(k.checks)
    }

    /// Emits a region's ops; returns the values of its closing `yield`.
    pub(super) fn region(
        &self,
        k: &mut Kernel<'_, 'ctx>,
        region: &Region,
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        for &id in &region.ops {
            let op = &k.program.ops[id];
            if let ThreadOpKind::Yield = op.kind {
                return op.operands.iter().map(|&r| get(k, r)).collect();
            }
            // A select canonicalizes only where it may and must.
            let passes_on =
                matches!(op.kind, ThreadOpKind::Select) && !k.canonicalizing_selects.contains(&id);
            let nans = match k.free_nans.contains(&id) || passes_on {
                true => Nans::AsComputed,
                false => Nans::Canonical,
            };
            let results = self.op(k, op, nans)?;
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

    /// Emits `op`, its computed floats' NaNs as `nans` says.
    fn op(
        &self,
        k: &mut Kernel<'_, 'ctx>,
        op: &Op,
        nans: Nans,
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        let b = &self.b;
        let i32t = self.ctx.i32_type();
        let x: Vec<BasicValueEnum<'ctx>> = match op.kind {
            // Region ops read their operands themselves.
            ThreadOpKind::For | ThreadOpKind::While | ThreadOpKind::If => Vec::new(),
            _ => op
                .operands
                .iter()
                .map(|&r| get(k, r))
                .collect::<Result<_, _>>()?,
        };
        // The operands by role (loops read theirs themselves).
        let fitted = Roles::of(&op.kind, &x);
        let roles = || {
            fitted.as_ref().ok_or_else(|| {
                EmitError::Internal(format!("`{}`'s operands fit no format", op.kind.name()))
            })
        };
        let arg = |name: &str| operand(roles()?, name);
        let dtype = |name: &str| -> Result<DType, EmitError> {
            Roles::of(&op.kind, &op.operands)
                .and_then(|r| r.list(name).first().map(|&r| k.program.dtype(r)))
                .ok_or_else(|| {
                    EmitError::Internal(format!("`{}` lacks operand `{name}`", op.kind.name()))
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
            ThreadOpKind::GetTensor { param, array } => {
                self.get_tensor(k, (*param, *array), roles()?)?;
                Ok(Vec::new())
            }
            ThreadOpKind::NumTensors { array } => match k.params.get(*array) {
                Some(ParamArgs::Tensors { count, .. }) => one((*count).into()),
                _ => Err(EmitError::internal("`num_tensors` of no tensor array")),
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
            ThreadOpKind::Unary(u) => one(self.unary(*u, dtype("x")?, arg("x")?, nans)?),
            ThreadOpKind::Binary(o) => {
                one(self.binary(*o, dtype("a")?, arg("a")?, arg("b")?, nans)?)
            }
            ThreadOpKind::Cmp(p) => one(self.compare(*p, dtype("a")?, arg("a")?, arg("b")?)?),
            ThreadOpKind::Select => {
                let chosen = self.select(arg("c")?, arg("a")?, arg("b")?)?;
                one(self.canonical_value(chosen, dtype("a")?, nans)?)
            }
            ThreadOpKind::Fma => {
                let (a, b, c) = (arg("a")?, arg("b")?, arg("c")?);
                one(self.fma(dtype("a")?, a, b, c, nans)?)
            }
            ThreadOpKind::Opaque => one(self.opaque(int(roles()?, "x")?)?.into()),
            ThreadOpKind::Cast { to } => one(self.cast(arg("x")?, dtype("x")?, *to, nans)?),
            ThreadOpKind::Bitcast { to } => one(self.bitcast(arg("x")?, dtype("x")?, *to)?),
            ThreadOpKind::LoadGlobal { param, width } => {
                let dt = op
                    .results
                    .first()
                    .map(|&r| k.program.dtype(r))
                    .ok_or_else(|| EmitError::internal("ld.global without results"))?;
                self.load_global(k, *param, usize::from(*width), dt, &x)
            }
            ThreadOpKind::StoreGlobal { param, width } => {
                let dt = GlobalOperands::store(&op.operands, usize::from(*width))
                    .and_then(|o| o.values.first().map(|&r| k.program.dtype(r)))
                    .ok_or_else(|| EmitError::internal("st.global without values"))?;
                self.store_global(k, *param, usize::from(*width), dt, &x)?;
                Ok(Vec::new())
            }
            ThreadOpKind::AddGlobal {
                param,
                scope,
                width,
            } => {
                let dt = GlobalOperands::store(&op.operands, usize::from(*width))
                    .and_then(|o| o.values.first().map(|&r| k.program.dtype(r)))
                    .ok_or_else(|| EmitError::internal("red.global without values"))?;
                self.add_global(k, (*param, *scope), usize::from(*width), dt, &x)?;
                Ok(Vec::new())
            }
            ThreadOpKind::AtomicGlobal {
                param,
                op: update,
                order,
                ..
            } => {
                let dt = op
                    .results
                    .first()
                    .map(|&r| k.program.dtype(r))
                    .ok_or_else(|| EmitError::internal("atom.global without a result"))?;
                one(self.atomic_global(k, *param, (*update, *order), dt, roles()?)?)
            }
            ThreadOpKind::LoadShared { alloc, width } => {
                let dt = op
                    .results
                    .first()
                    .map(|&r| k.program.dtype(r))
                    .ok_or_else(|| EmitError::internal("ld.shared without results"))?;
                let access = (alloc.index(), dt, usize::from(*width));
                self.load_shared(k, access, int(roles()?, "index")?)
            }
            ThreadOpKind::StoreShared { alloc, .. } => {
                let (x, dt) = (roles()?, dtype("values")?);
                let (index, mask) = (int(x, "index")?, int(x, "mask")?);
                let access = (alloc.index(), dt);
                self.store_shared(k, access, index, x.list("values"), mask)?;
                Ok(Vec::new())
            }
            ThreadOpKind::RoundSharedTf32 { alloc, width } => {
                let x = roles()?;
                let (index, mask) = (int(x, "index")?, int(x, "mask")?);
                let access = (alloc.index(), usize::from(*width));
                self.round_shared_tf32(k, access, index, mask)?;
                Ok(Vec::new())
            }
            ThreadOpKind::Check { kind, op: checked } => {
                let position = k.checks.len();
                k.checks.push(checked.clone());
                let code = match kind {
                    CheckKind::Bounds => FaultCode::OutsideTensor,
                    CheckKind::Step => FaultCode::NonPositiveStep,
                    CheckKind::Index => FaultCode::IndexOutside,
                    CheckKind::Assert => FaultCode::Assert,
                    CheckKind::Window => FaultCode::ViewWindow,
                    CheckKind::TensorIndex => FaultCode::TensorIndex,
                };
                self.check(k, code, position, roles()?)?;
                Ok(Vec::new())
            }
            ThreadOpKind::Print { id } => {
                self.print(k, *id, roles()?)?;
                Ok(Vec::new())
            }
            ThreadOpKind::Barrier => {
                self.barrier()?;
                Ok(Vec::new())
            }
            ThreadOpKind::Fence { order, scope } => {
                self.fence(*order, *scope)?;
                Ok(Vec::new())
            }
            ThreadOpKind::Shuffle { mode, width } => {
                let (value, lane) = (arg("value")?, int(roles()?, "lane")?);
                one(self.shuffle(k, *mode, *width, dtype("value")?, value, lane)?)
            }
            ThreadOpKind::Mma { kind } => self.mma(*kind, roles()?.list("fragments")),
            ThreadOpKind::CopyAsync { param, alloc } => {
                let operands = ints(roles()?, ["addr", "index", "count", "mask"])?;
                self.copy_async(k, (*param, *alloc), operands)?;
                Ok(Vec::new())
            }
            ThreadOpKind::CommitAsync => {
                self.commit_async()?;
                Ok(Vec::new())
            }
            ThreadOpKind::WaitAsync { pending } => {
                self.wait_async(*pending)?;
                Ok(Vec::new())
            }
            ThreadOpKind::LdMatrix { alloc, shape } => {
                let dt = k.program.shared[*alloc].dtype;
                let at = self.shared_at(k, alloc.index(), dt, int(roles()?, "index")?)?;
                self.ldmatrix(*shape, at, dt)
            }
            ThreadOpKind::Wgmma { .. }
            | ThreadOpKind::WgmmaRegisterA { .. }
            | ThreadOpKind::WgmmaFence
            | ThreadOpKind::WgmmaCommit
            | ThreadOpKind::WgmmaWait { .. } => self.wgmma_op(k, &op.kind, roles()?),
            ThreadOpKind::TmemAlloc { .. }
            | ThreadOpKind::TmemDealloc { .. }
            | ThreadOpKind::Tcgen05Mma { .. }
            | ThreadOpKind::Tcgen05MmaScaled { .. }
            | ThreadOpKind::Tcgen05MmaTensorA { .. }
            | ThreadOpKind::Tcgen05CommitWait { .. }
            | ThreadOpKind::TmemLoad { .. }
            | ThreadOpKind::TmemStore
            | ThreadOpKind::TmemStoreHalves
            | ThreadOpKind::TmemStoreBytes => self.tcgen05_op(k, &op.kind, roles()?),
            ThreadOpKind::FenceProxyAsync => self.inline_asm(Asm::FenceProxyAsync, &[]),
            ThreadOpKind::GridWait => self.grid_dep_control(true),
            ThreadOpKind::GridLaunchDependents => self.grid_dep_control(false),
            ThreadOpKind::MbarrierInit { alloc } => {
                let operands = ints(roles()?, ["index", "count", "mask"])?;
                self.mbarrier_init(k, *alloc, operands)?;
                Ok(Vec::new())
            }
            ThreadOpKind::MbarrierExpectTx { alloc } => {
                let operands = ints(roles()?, ["index", "bytes", "mask"])?;
                self.mbarrier_expect_tx(k, *alloc, operands)?;
                Ok(Vec::new())
            }
            ThreadOpKind::MbarrierWait { alloc } => {
                let operands = ints(roles()?, ["index", "parity"])?;
                self.mbarrier_wait(k, *alloc, operands)?;
                Ok(Vec::new())
            }
            ThreadOpKind::TmaLoad {
                param,
                rows,
                alloc,
                bar,
            } => {
                let map = k
                    .program
                    .tma_maps()
                    .iter()
                    .position(|m| *m == (*param, *rows))
                    .ok_or_else(|| EmitError::internal("a tma.load without its map"))?;
                let names = ["index", "c0", "c1", "bar_index", "mask"];
                self.tma_load(k, (map, *alloc, *bar), ints(roles()?, names)?)?;
                Ok(Vec::new())
            }
            ThreadOpKind::For => self.for_loop(k, op),
            ThreadOpKind::While => self.while_loop(k, op),
            ThreadOpKind::If => self.if_else(k, op),
            ThreadOpKind::Yield => Err(EmitError::internal("`yield` outside the end of a region")),
        }
    }
}

pub(super) fn get<'ctx>(k: &Kernel<'_, 'ctx>, r: Reg) -> Result<BasicValueEnum<'ctx>, EmitError> {
    k.regs
        .get(r.index())
        .copied()
        .flatten()
        .ok_or_else(|| EmitError::Internal(format!("%{} is used before it is defined", r.index())))
}

pub(super) fn tensor<'a, 'ctx>(
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

/// The tensor parameters some `st.global` or `atom.global` writes: a
/// tensor of an array written counts as its array.
pub(super) fn written_params(program: &Program) -> HashSet<usize> {
    program
        .ops
        .iter()
        .filter_map(|(_, op)| match op.kind {
            ThreadOpKind::StoreGlobal { param, .. }
            | ThreadOpKind::AtomicGlobal { param, .. }
            | ThreadOpKind::AddGlobal { param, .. } => {
                match program.params.get(param).map(|p| &p.kind) {
                    Some(ParamKind::Element { array, .. }) => Some(*array),
                    _ => Some(param),
                }
            }
            _ => None,
        })
        .collect()
}

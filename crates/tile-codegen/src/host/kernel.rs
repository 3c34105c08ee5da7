//! The driver of the host lowering: the kernel function, its parameters, the
//! values of the tile IR as LLVM values or frame places, and the dispatch of
//! each op to the file of its family.

use super::alias::AliasScopes;
use super::check::CheckSite;
use super::error::HostError;
use super::frame::TileRef;
use super::lazy::Expr;
use super::lview::LViewRef;
use super::plan::{plan, HostPlan};
use super::stream::{self, Streaming};
use crate::scalar::{Nans, ScalarEmitter};
use crate::Target;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::values::{BasicValueEnum, FunctionValue, IntValue, PointerValue};
use inkwell::AtomicOrdering;
use std::collections::HashMap;
use tile_abi::host as abi;
use tile_abi::HostIsa;
use tile_ir::{
    DType, Function, MemOrder, MemScope, OpId, OpKind, Region, Route, Type, Value, ValueNames,
};

/// The name of the kernel function in the host module.
pub(super) const KERNEL: &str = "tile_host_kernel";

/// A tensor parameter: its base pointer and runtime extents and strides
/// (`i64`).
#[derive(Clone)]
pub(super) struct TensorArg<'ctx> {
    pub(super) base: PointerValue<'ctx>,
    pub(super) extents: Vec<IntValue<'ctx>>,
    pub(super) strides: Vec<IntValue<'ctx>>,
}

/// What a tile-IR value is while the kernel is emitted.
#[derive(Clone)]
pub(super) enum HostValue<'ctx> {
    /// A scalar, in its register type.
    Scalar(BasicValueEnum<'ctx>),
    /// A tile, at its place in the frame.
    Tile(TileRef),
    /// A tile computed inside the loop of the op that consumes it
    /// (`lazy.rs`, chosen by `fuse.rs`).
    Lazy(Expr<'ctx>),
    /// The tensor parameter at this position, or (past the parameters) a
    /// tensor of an array (`arrays.rs`).
    Tensor(usize),
    /// A tensor array: where its records are, and their number (`i64`).
    Tensors {
        records: PointerValue<'ctx>,
        count: IntValue<'ctx>,
    },
    /// A layout view.
    LView(LViewRef<'ctx>),
    /// A partition view of the tensor parameter `tensor`, or of a window
    /// of it.
    PartitionView {
        /// The tensor parameter's position.
        tensor: usize,
        /// The window as a tensor of its own (its first element, extents
        /// and the tensor's strides); `None` for the whole tensor.
        window: Option<TensorArg<'ctx>>,
        /// The partition's shape.
        tile: Vec<usize>,
        /// The element dtype.
        dtype: DType,
    },
}

/// The state of the lowering of one kernel.
pub(super) struct HostKernel<'a, 'ctx> {
    pub(super) e: ScalarEmitter<'a, 'ctx>,
    /// The NaN policy of the op being emitted (`nan.rs`).
    pub(super) nans: Nans,
    pub(super) func: &'a Function,
    pub(super) names: ValueNames,
    pub(super) f: FunctionValue<'ctx>,
    /// A builder at the end of the entry block, which holds only stack
    /// slots (and branches to the code once the kernel is done).
    pub(super) allocas: Builder<'ctx>,
    pub(super) frame: PointerValue<'ctx>,
    pub(super) status: PointerValue<'ctx>,
    ids: PointerValue<'ctx>,
    /// The print area, when the kernel prints (`device_print.rs`).
    pub(super) print_area: Option<PointerValue<'ctx>>,
    values: HashMap<Value, HostValue<'ctx>>,
    pub(super) tensors: HashMap<usize, TensorArg<'ctx>>,
    /// The end of the places in use.
    pub(super) frame_top: u64,
    /// The most bytes of the frame in use at once: its size.
    pub(super) frame_bytes: u64,
    /// How many counted loops have been emitted (a loop whose body adds
    /// some contains others).
    pub(super) loops: usize,
    /// The op of each check, in the order of `tile_abi::Status::check`.
    pub(super) checks: Vec<CheckSite>,
    /// How stores stream past the caches, where any may (`stream.rs`).
    pub(super) streaming: Option<Streaming<'ctx>>,
    /// The decisions made before emitting (`plan.rs`).
    pub(super) plan: HostPlan,
    /// The scopes that keep frame and tensor accesses apart (`alias.rs`).
    pub(super) scopes: AliasScopes<'ctx>,
}

impl<'a, 'ctx> HostKernel<'a, 'ctx> {
    /// Emits `func` as the kernel function of `module` for `isa`, with the
    /// fast math library when `fast_math`; returns the frame size in bytes
    /// and the op of each check.
    pub(super) fn kernel(
        ctx: &'ctx Context,
        module: &'a Module<'ctx>,
        func: &'a Function,
        isa: HostIsa,
        fast_math: bool,
    ) -> Result<(u64, Vec<CheckSite>), HostError> {
        let ptr = ctx.ptr_type(inkwell::AddressSpace::default());
        let i32t = ctx.i32_type();
        let ty = i32t.fn_type(&[ptr.into(), ptr.into(), ptr.into(), ptr.into()], false);
        let f = module.add_function(KERNEL, ty, None);
        let noalias = inkwell::attributes::Attribute::get_named_enum_kind_id("noalias");
        for i in 0..4 {
            f.add_attribute(
                inkwell::attributes::AttributeLoc::Param(i),
                ctx.create_enum_attribute(noalias, 0),
            );
        }
        let param = |i: u32| -> Result<PointerValue<'ctx>, HostError> {
            f.get_nth_param(i)
                .map(|p| p.into_pointer_value())
                .ok_or_else(|| HostError::internal("a kernel parameter"))
        };
        let entry = ctx.append_basic_block(f, "entry");
        let start = ctx.append_basic_block(f, "start");
        let allocas = ctx.create_builder();
        allocas.position_at_end(entry);
        // Without `fast_math` the host computes what the interpreter does,
        // bit for bit.
        let e = ScalarEmitter::new(ctx, module, Target::Host(isa), fast_math);
        e.b.position_at_end(start);
        let mut l = HostKernel {
            e,
            nans: Nans::Canonical,
            func,
            names: ValueNames::new(func),
            f,
            allocas,
            frame: param(2)?,
            status: param(3)?,
            ids: param(1)?,
            print_area: None,
            values: HashMap::new(),
            tensors: HashMap::new(),
            frame_top: 0,
            frame_bytes: 0,
            loops: 0,
            checks: Vec::new(),
            streaming: None,
            plan: plan(func),
            scopes: AliasScopes::new(ctx),
        };
        let threshold = l.parameters(param(0)?)?;
        l.print_area = l.print_area_of(param(0)?)?;
        l.streaming = Streaming::new(&l.plan, isa, threshold);
        if l.streaming.is_some() {
            stream::declare_fence(module);
        }
        l.region(&func.body)?;
        l.fence_streams()?;
        l.e.b.build_return(Some(&i32t.const_zero()))?;
        l.allocas.build_unconditional_branch(start)?;
        Ok((l.frame_bytes, l.checks))
    }

    /// Reads every parameter from the packet; returns the slot after them,
    /// the streaming threshold.
    fn parameters(&mut self, packet: PointerValue<'ctx>) -> Result<IntValue<'ctx>, HostError> {
        let i64t = self.e.ctx.i64_type();
        let slots = abi::slots(self.func);
        for (index, (p, &slot)) in self.func.params.iter().zip(&slots).enumerate() {
            let word = |l: &Self, k: u64| -> Result<IntValue<'ctx>, HostError> {
                let at = l.gep(i64t.into(), packet, i64t.const_int(slot + k, false))?;
                Ok(l.e.b.build_load(i64t, at, "slot")?.into_int_value())
            };
            match self.func.ty(p.value) {
                Type::Tensor(t) => {
                    let ptr = self.e.ctx.ptr_type(inkwell::AddressSpace::default());
                    let base = self.e.b.build_int_to_ptr(word(self, 0)?, ptr, "base")?;
                    let extents = (0..t.rank as u64)
                        .map(|k| word(self, 1 + k))
                        .collect::<Result<_, _>>()?;
                    let mut strides: Vec<IntValue<'ctx>> = (0..t.rank as u64)
                        .map(|k| word(self, 1 + t.rank as u64 + k))
                        .collect::<Result<_, _>>()?;
                    if t.aligned {
                        // Contiguous rows, which the launch checks: no
                        // access needs a copy for a strided row.
                        if let Some(last) = strides.last_mut() {
                            *last = i64t.const_int(1, false);
                        }
                    }
                    self.tensors.insert(
                        index,
                        TensorArg {
                            base,
                            extents,
                            strides,
                        },
                    );
                    self.define(p.value, HostValue::Tensor(index));
                }
                Type::Tensors(_) => {
                    let ptr = self.e.ctx.ptr_type(inkwell::AddressSpace::default());
                    let records = self.e.b.build_int_to_ptr(word(self, 0)?, ptr, "records")?;
                    let count = word(self, 1)?;
                    self.define(p.value, HostValue::Tensors { records, count });
                }
                Type::Scalar(d) => {
                    let bits = word(self, 0)?;
                    let v = self.scalar_of_bits(bits, *d)?;
                    self.define(p.value, HostValue::Scalar(v));
                }
                other => {
                    return Err(HostError::Unsupported {
                        what: format!("a parameter of type {other}"),
                    })
                }
            }
        }
        let at = self.gep(
            i64t.into(),
            packet,
            i64t.const_int(abi::threshold_slot(self.func), false),
        )?;
        Ok(self.e.b.build_load(i64t, at, "threshold")?.into_int_value())
    }

    /// The register value of `dtype` whose bits are the low bits of `bits`.
    fn scalar_of_bits(
        &self,
        bits: IntValue<'ctx>,
        dtype: DType,
    ) -> Result<BasicValueEnum<'ctx>, HostError> {
        let b = &self.e.b;
        if dtype.is_bool() {
            let zero = bits.get_type().const_zero();
            return Ok(b
                .build_int_compare(inkwell::IntPredicate::NE, bits, zero, "bool")?
                .into());
        }
        let narrow = b.build_int_truncate_or_bit_cast(bits, self.e.int_type(dtype.bits()), "w")?;
        Ok(b.build_bit_cast(narrow, self.e.reg_type(dtype), "arg")?)
    }

    /// Emits the ops of `region` up to its `yield`; returns the yielded
    /// values (none for the kernel's body).
    pub(super) fn region(&mut self, region: &'a Region) -> Result<Vec<Value>, HostError> {
        for &id in &region.ops {
            let op = self.func.op(id);
            if let OpKind::Yield = op.kind {
                return Ok(op.operands.clone());
            }
            self.op(id)?;
        }
        Ok(Vec::new())
    }

    /// Emits one op, leaving its NaN results as they come where no use
    /// observes their payloads (`nan.rs`).
    fn op(&mut self, id: OpId) -> Result<(), HostError> {
        self.nans = self.nans_of(id);
        let emitted = self.op_of_kind(id);
        self.nans = Nans::Canonical;
        emitted
    }

    /// The NaN policy of `id`'s results: as computed where no use observes
    /// their payloads (`nan.rs`).
    pub(super) fn nans_of(&self, id: OpId) -> Nans {
        if self.plan.free_nans.contains(&id) {
            Nans::AsComputed
        } else {
            Nans::Canonical
        }
    }

    /// Emits one op by its kind.
    fn op_of_kind(&mut self, id: OpId) -> Result<(), HostError> {
        let op = self.func.op(id);
        let load = matches!(op.kind, OpKind::Load | OpKind::LoadMasked { .. });
        if self.plan.lazy.contains(&id) && !load {
            let expr = self.expr_of(id)?;
            return self.define_result(id, HostValue::Lazy(expr));
        }
        match op.kind.route() {
            Route::ProgramId { axis } => self.grid_value(id, 0, axis),
            Route::NumPrograms { axis } => self.grid_value(id, 1, axis),
            Route::Constant(value) => {
                let v = self.e.constant(*value)?;
                self.define_result(id, HostValue::Scalar(v))
            }
            Route::Elementwise => self.elementwise(id),
            Route::Movement => self.movement(id),
            Route::Combine => self.combine(id),
            Route::Reduce => self.reduce(id),
            Route::Dot(_) => self.dot(id),
            Route::DotScaled => Err(HostError::internal(
                "a dot_scaled reached the emitter: `compile` expands them first",
            )),
            Route::Fp4Pairs => Err(HostError::internal(
                "an FP4 pair op reached the emitter: `compile` expands them first",
            )),
            Route::Memory if matches!(op.kind, OpKind::GetTensor | OpKind::NumTensors) => {
                self.tensor_array_op(id)
            }
            Route::Memory => self.memory(id),
            Route::For => self.emit_for(id),
            Route::While => self.emit_while(id),
            Route::If => self.emit_if(id),
            Route::LayoutView(_) => self.lview(id),
            Route::Assert { id: n, .. } => self.assert(id, n),
            Route::MultipleOf { id: n, divisor } => self.multiple_of(id, n, divisor),
            Route::Print { id: n, .. } => self.print(id, n),
            Route::Fence {
                order,
                scope: MemScope::Gpu,
            } => {
                let ordering = if order == MemOrder::SeqCst {
                    AtomicOrdering::SequentiallyConsistent
                } else {
                    AtomicOrdering::AcquireRelease
                };
                self.e.b.build_fence(ordering, false, "")?;
                Ok(())
            }
            // One host thread runs the whole program: a barrier or a fence
            // of the block's scope orders nothing more.
            Route::Barrier
            | Route::Fence { .. }
            | Route::GridWait
            | Route::GridLaunchDependents => Ok(()),
            // A region's `yield` is emitted with its region, never here.
            Route::Yield => Err(HostError::internal("`yield` outside its place")),
        }
    }

    /// The program's ids, `(x, y, z)` as `i32`.
    pub(super) fn program_ids(&self) -> Result<[IntValue<'ctx>; 3], HostError> {
        let i32t = self.e.ctx.i32_type();
        let id = |axis: u64| -> Result<IntValue<'ctx>, HostError> {
            let at = self.gep(i32t.into(), self.ids, i32t.const_int(axis, false))?;
            Ok(self.e.b.build_load(i32t, at, "id")?.into_int_value())
        };
        Ok([id(0)?, id(1)?, id(2)?])
    }

    /// Entry `axis` of `ids`' program id (`row` 0) or grid (`row` 1).
    fn grid_value(&mut self, id: OpId, row: u64, axis: u8) -> Result<(), HostError> {
        let i32t = self.e.ctx.i32_type();
        let k = i32t.const_int(3 * row + u64::from(axis), false);
        let at = self.gep(i32t.into(), self.ids, k)?;
        let v = self.e.b.build_load(i32t, at, "id")?;
        self.define_result(id, HostValue::Scalar(v))
    }

    /// The value of `v`.
    pub(super) fn value(&self, v: Value) -> Result<HostValue<'ctx>, HostError> {
        self.values.get(&v).cloned().ok_or_else(|| {
            HostError::internal(format!(
                "{} is used before it is defined",
                self.names.name(v)
            ))
        })
    }

    /// The scalar value of `v`.
    pub(super) fn scalar(&self, v: Value) -> Result<BasicValueEnum<'ctx>, HostError> {
        match self.value(v)? {
            HostValue::Scalar(s) => Ok(s),
            _ => Err(HostError::internal(format!(
                "{} is not a scalar",
                self.names.name(v)
            ))),
        }
    }

    /// The tile value of `v`.
    pub(super) fn tile(&self, v: Value) -> Result<TileRef, HostError> {
        match self.value(v)? {
            HostValue::Tile(t) => Ok(t),
            _ => Err(HostError::internal(format!(
                "{} is not a tile",
                self.names.name(v)
            ))),
        }
    }

    /// Defines `v`.
    pub(super) fn define(&mut self, v: Value, value: HostValue<'ctx>) {
        self.values.insert(v, value);
    }

    /// Defines the only result of `id`.
    pub(super) fn define_result(
        &mut self,
        id: OpId,
        value: HostValue<'ctx>,
    ) -> Result<(), HostError> {
        let r = self.result(id)?;
        self.define(r, value);
        Ok(())
    }

    /// The only result of `id`.
    pub(super) fn result(&self, id: OpId) -> Result<Value, HostError> {
        match self.func.op(id).results.as_slice() {
            [r] => Ok(*r),
            _ => Err(HostError::internal("an op without exactly one result")),
        }
    }

    /// The operands of `id`.
    pub(super) fn operands(&self, id: OpId) -> &'a [Value] {
        &self.func.op(id).operands
    }
}

//! Lowering: from a tile-IR [`Function`] to a thread-level [`Program`].
//!
//! The lowering walks the tile IR once, in order, with the layouts of
//! [`crate::layout_assign`], and turns every tile value into the registers a
//! thread holds in its layout (one register per element, live or dead). One
//! file per op family:
//!
//! | file | ops |
//! |---|---|
//! | `options.rs` | `LowerOptions`: warps, bounds checks, swizzle, tensor cores, stages, TMA |
//! | `coords.rs` | the coordinates of each register, computed once per layout |
//! | `elementwise.rs` | constants, `full`, `iota`, unary, binary, `cmp`, `select`, `fma`, `cast`, scalar `broadcast` |
//! | `memory.rs` | `dim`, `partition_view`, `load`, `load_masked`, `store`, `store_masked` |
//! | `gather.rs`, `scatter.rs`, `atomic.rs` | reads, writes and atomic updates at index tiles |
//! | `shared.rs` | shared-memory allocation with reuse, staging, gathers, layout conversions |
//! | `movement.rs` | tile `broadcast`, `reshape`, `permute`, `expand`, `flip`, `slice`, `pad`, `cat` through shared memory |
//! | `reduce.rs` | `reduce`, `arg`, `scan` (sequential, in the interpreter's order) |
//! | `reduce_tree.rs` | integer `reduce`: in thread, warp shuffles, across warps |
//! | `dot.rs` | `dot` on CUDA cores, operands staged through shared memory |
//! | `control.rs` | `for`, `if` (structured and uniform) |
//! | `proofs.rs` | which partition-index axes of loads and stores are proven in bounds |
//!
//! Every op of the tile IR is lowered; errors are for unverified input
//! ([`LowerError::Invalid`]) and tiles without a layout.

mod access;
mod arrays;
mod assert;
mod atomic;
mod block_scales;
mod chunk_access;
mod combine;
mod contiguity;
mod control;
mod coords;
mod copies;
mod device_print;
mod dot;
mod elementwise;
mod emit;
mod fp4_pairs;
mod gather;
mod global_order;
mod held_operands;
mod invariant_broadcasts;
mod invariant_operands;
mod lview;
mod memory;
mod mma;
mod movement;
mod operand_stores;
mod operand_swizzle;
mod options;
mod placement;
mod proofs;
mod rebroadcast;
mod reduce;
mod reduce_arg;
mod reduce_tree;
mod reload;
mod round_staged;
mod scan_chain;
mod scatter;
mod shared;
mod shuffle_convert;
mod software_pipeline;
mod store_vectors;
mod swizzle;
mod tcgen05;
mod tensor_a;
mod tensor_scales;
mod tma;
mod wgmma;
mod widen_products;
mod window;

use crate::layout_assign::{
    assign, tensor_dot, DistLayout, LayoutBuildError, LayoutPlan, SumOrder,
};
use crate::program::{OpId as ThreadOp, Param, ParamKind, Program, Reg, ThreadOpKind};
use coords::Coords;
pub(crate) use copies::is_transposed;
pub use options::{LowerOptions, TensorCores};
pub(crate) use scan_chain::reduces_as_chain;
use std::collections::HashMap;
use std::rc::Rc;
pub(crate) use store_vectors::wider_store_layout;
use tile_ir::divisibility::Divisibility;
use tile_ir::index_form::IndexForms;
use tile_ir::{DType, Function, OpId, OpKind, Region, Route, Shape, Type, Value, ValueNames};

/// Why a function could not be lowered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LowerError {
    /// An op whose operands break the tile IR's rules (unverified input).
    #[error("`{op}`: {reason}")]
    Invalid {
        /// The op's description.
        op: String,
        /// What is wrong.
        reason: String,
    },
    /// A tile without a blocked layout.
    #[error(transparent)]
    Layout(#[from] LayoutBuildError),
    /// An op the lowering does not handle yet.
    #[error("`{op}`: the GPU lowering does not support this op yet")]
    Unsupported {
        /// The op's description.
        op: String,
    },
    /// A lowered program that breaks a rule of the thread-level program:
    /// a defect of the lowering, reported instead of emitted.
    #[error("the lowered program breaks a rule: {0}")]
    Verify(#[from] crate::program::VerifyError),
}

/// Lowers `func` (which must pass the tile IR's verifier) for one
/// specialization.
pub fn lower(func: &Function, options: &LowerOptions) -> Result<Program, LowerError> {
    // A `dot_scaled` runs as the ops that define it but where a
    // block-scaled instruction takes it (`layout_assign::mma_dot`,
    // `layout_assign::tcgen05_dot`).
    let mut native = Vec::new();
    func.walk(&mut |id| {
        let scaled = func.op(id).kind == OpKind::DotScaled;
        if scaled && tensor_dot(func, id, options.num_warps, options.tensor_cores).is_some() {
            native.push(id);
        }
    });
    let expanded = tile_ir::passes::expanded_scaled_dots(func, &native);
    let func = expanded.as_ref().unwrap_or(func);
    let cores = widen_products::Cores {
        tensor_cores: options.tensor_cores,
        num_warps: options.num_warps,
    };
    let widened = widen_products::widened_products(func, cores);
    let func = widened.as_ref().unwrap_or(func);
    let sums = if options.reassociate_sums {
        SumOrder::Any
    } else {
        SumOrder::InOrder
    };
    let plan = assign(func, options.num_warps, options.tensor_cores, sums)?;
    let mut program = Program::new(func.name.clone(), options.num_warps);
    let mut env = HashMap::new();
    for (index, p) in func.params.iter().enumerate() {
        let (kind, lowered) = match func.ty(p.value) {
            Type::Tensor(t) => (ParamKind::Tensor(*t), Lowered::Tensor { param: index }),
            Type::Scalar(d) => (ParamKind::Scalar(*d), Lowered::Param { index, dtype: *d }),
            Type::Tensors(t) => (ParamKind::Tensors(*t), Lowered::Tensors { param: index }),
            other => {
                return Err(LowerError::Invalid {
                    op: "kernel".into(),
                    reason: format!("parameter `{}` of type {other}", p.name),
                })
            }
        };
        program.params.push(Param {
            name: p.name.clone(),
            kind,
        });
        env.insert(p.value, lowered);
    }
    let mut lowerer = Lowerer {
        func,
        names: ValueNames::new(func),
        plan,
        program,
        env,
        current: Vec::new(),
        prologue: Vec::new(),
        consts: HashMap::new(),
        coords: HashMap::new(),
        meta: HashMap::new(),
        casts: HashMap::new(),
        hoisted: HashMap::new(),
        element_prologues: HashMap::new(),
        element_homes: HashMap::new(),
        contiguity: HashMap::new(),
        thread_id: None,
        loop_depth: 0,
        bounds_checks: options.checks_bounds(),
        proofs: proofs::Proofs::analyze(func),
        divisibility: Divisibility::new(func),
        index_forms: IndexForms::new(func),
        swizzle_shared: options.swizzle_shared,
        tensor_cores: options.tensor_cores,
        deferred: Default::default(),
        prefetched: Default::default(),
        num_stages: options.num_stages,
        tma: options.tma,
        sums,
        yield_targets: Vec::new(),
        free_shared: Vec::new(),
        origins: Vec::new(),
        read_only: reload::read_only_tensors(func),
        preloaded_a: HashMap::new(),
        preloaded_b: HashMap::new(),
        preconverted: HashMap::new(),
        regions: Vec::new(),
        held_operands: Vec::new(),
        tensor_memory: None,
    };
    // The targets with `cp.async` copy their tensor-core operands with it.
    if options.tensor_cores.cp_async() {
        let deferred = copies::deferred_loads(
            func,
            |dot| lowerer.on_tensor_cores(dot),
            |dot| lowerer.reads_transposed_b(dot),
        );
        lowerer.prefetched = software_pipeline::prefetched_loads(func, &deferred);
        lowerer.deferred = deferred;
    }
    if let Some(columns) = lowerer.tensor_memory_columns() {
        lowerer.allocate_tensor_memory(columns)?;
    }
    let mut body = lowerer.kernel_body(&func.body)?;
    lowerer.free_tensor_memory();
    body.append(&mut lowerer.current);
    lowerer.program.body.ops = body;
    lowerer.place_element_prologues();
    let apart = global_order::Independence {
        func,
        layouts: &lowerer.plan.values,
        deferred: &lowerer.deferred,
    };
    global_order::order_global_accesses(&apart, &mut lowerer.program, &lowerer.origins);
    crate::program::verify(&lowerer.program)?;
    Ok(lowerer.program)
}

/// A tile-IR value after lowering.
#[derive(Clone, Debug)]
enum Lowered {
    /// A scalar: one register, equal in every thread.
    Scalar(Reg),
    /// A scalar parameter, read on first use.
    Param { index: usize, dtype: DType },
    /// A tile: a register per element the thread holds in `layout`.
    Tile {
        layout: Rc<DistLayout>,
        regs: Vec<Reg>,
    },
    /// A tile in tensor memory in `layout`: the accumulator a `for` keeps
    /// there across its iterations (`tcgen05.rs`), no registers.
    Resident(Rc<DistLayout>),
    /// A tensor parameter, or a tensor of an array (a parameter of kind
    /// `Element`).
    Tensor { param: usize },
    /// A tensor-array parameter.
    Tensors { param: usize },
    /// A load that the `dot` using it copies to shared memory itself
    /// (`copies.rs`).
    Deferred { load: OpId },
    /// A load a pipelined loop copied ahead (`software_pipeline.rs`): its tile is
    /// in `alloc` from element `offset` (an `i32` register) on, laid out
    /// as `place`.
    Staged {
        alloc: crate::program::SharedId,
        offset: Reg,
        place: operand_swizzle::OperandLayout,
    },
    /// A partition view of a tensor parameter, or of a window of it.
    PartitionView {
        param: usize,
        tile: Shape,
        window: Option<window::Window>,
    },
    /// A layout view of a tensor parameter: its static layout, its base
    /// offset (an `i64` register, uniform), when masked its extent along
    /// each mode (`i64` registers, uniform), and its swizzle.
    LView {
        param: usize,
        layout: tile_ir::layout::Layout,
        base: Reg,
        extents: Option<Vec<Reg>>,
        swizzle: Option<tile_ir::layout::Swizzle>,
    },
}

/// The state of one lowering.
struct Lowerer<'a> {
    func: &'a Function,
    names: ValueNames,
    plan: LayoutPlan,
    program: Program,
    env: HashMap<Value, Lowered>,
    /// The ops of the region being built.
    current: Vec<ThreadOp>,
    /// Uniform, side-effect-free ops (constants, thread ids, coordinates,
    /// tensor extents and strides) hoisted out of the kernel-level op being
    /// lowered, to be placed just before it (see [`Lowerer::kernel_body`]).
    prologue: Vec<ThreadOp>,
    consts: HashMap<(DType, u64), Reg>,
    coords: HashMap<DistLayout, Coords>,
    /// Hoisted tensor extents (`i64`) and strides, by (parameter, axis, is-stride).
    meta: HashMap<(usize, usize, bool), Reg>,
    /// Hoisted contiguity tests, by (tensor parameter, vector width).
    contiguity: HashMap<(usize, usize), Reg>,
    /// The ops hoisted to just after the `get_tensor` binding a tensor of
    /// an array, by that tensor's parameter (`arrays.rs`).
    element_prologues: HashMap<usize, Vec<ThreadOp>>,
    /// The hoisted registers computed from a tensor of an array, by its
    /// parameter: they are hoisted no further than its `get_tensor`.
    element_homes: HashMap<Reg, usize>,
    /// The prologue's ops by (kind, operands, dtype), for reuse.
    hoisted: HashMap<(String, Vec<Reg>, DType), Reg>,
    /// Hoisted casts of prologue registers, by (register, dtype).
    casts: HashMap<(Reg, DType), Reg>,
    /// The `thread_id` register, once emitted.
    thread_id: Option<Reg>,
    /// How many `for` bodies enclose the op being lowered.
    loop_depth: usize,
    /// Whether unproven unmasked accesses are checked.
    bounds_checks: bool,
    /// The axes of accesses proven in bounds.
    proofs: proofs::Proofs,
    /// The powers of two the kernel's integer scalars are multiples of.
    divisibility: Divisibility<'a>,
    /// How the kernel's index tiles vary along their axes.
    index_forms: IndexForms<'a>,
    /// Whether cross-row stagings are swizzled ([`LowerOptions::swizzle_shared`]).
    swizzle_shared: bool,
    /// The tensor-core instructions `dot` may use.
    tensor_cores: TensorCores,
    /// The loads their tensor-core `dot` copies itself (`copies.rs`).
    deferred: std::collections::HashSet<OpId>,
    /// The loads each `for` prefetches (`software_pipeline.rs`).
    prefetched: HashMap<OpId, software_pipeline::Prefetched>,
    /// [`LowerOptions::num_stages`].
    num_stages: u32,
    /// [`LowerOptions::tma`].
    tma: bool,
    /// The order float sums may combine in.
    sums: SumOrder,
    /// Shared allocations whose last reads have been emitted, for reuse.
    free_shared: Vec<crate::program::SharedId>,
    /// Per enclosing region being lowered, the layouts its `yield` must
    /// produce (`None`: any, for a then branch).
    yield_targets: Vec<Option<Vec<control::Slot>>>,
    /// The tile-IR op each thread-level op was lowered from, by index
    /// (`global_order.rs` tells the accesses of different ops apart).
    origins: Vec<Option<OpId>>,
    /// The tensor parameters no op writes (`reload.rs`).
    read_only: std::collections::HashSet<usize>,
    /// The `a` fragments read before their loop (`invariant_operands.rs`).
    preloaded_a: invariant_operands::Preloaded,
    /// The `b` operands staged before their loop (`invariant_operands.rs`).
    preloaded_b: HashMap<OpId, invariant_operands::PreloadedB>,
    /// The broadcasts whose operands were converted before their loop
    /// (`invariant_broadcasts.rs`): the result's layout and registers.
    preconverted: HashMap<OpId, (Rc<DistLayout>, Vec<Reg>)>,
    /// The regions being lowered, innermost last.
    regions: Vec<&'a Region>,
    /// Operand stagings kept for a later product (`held_operands.rs`).
    held_operands: Vec<held_operands::HeldOperand>,
    /// The kernel's tensor memory, where a `dot` runs on `tcgen05.mma`.
    tensor_memory: Option<tcgen05::TensorMemory>,
}

impl<'a> Lowerer<'a> {
    /// Lowers the kernel's body: each op's thread-level ops, preceded by
    /// the ops hoisted while lowering it. A hoisted value is computed once,
    /// before the kernel-level op that first needs it (outside any loop),
    /// and not earlier: the coordinates of an epilogue's stores are not
    /// live across the main loop.
    fn kernel_body(&mut self, body: &'a Region) -> Result<Vec<ThreadOp>, LowerError> {
        let mut ops = Vec::new();
        self.regions.push(body);
        for &id in &body.ops {
            self.op(id)?;
            ops.append(&mut self.prologue);
            ops.append(&mut self.current);
        }
        self.regions.pop();
        Ok(ops)
    }

    /// Lowers the ops of `region`; returns the thread-level ops.
    fn region(&mut self, region: &'a Region) -> Result<Vec<ThreadOp>, LowerError> {
        let saved = std::mem::take(&mut self.current);
        self.regions.push(region);
        let lowered = region.ops.iter().try_for_each(|&id| self.op(id));
        self.regions.pop();
        lowered?;
        Ok(std::mem::replace(&mut self.current, saved))
    }

    /// The op as compile-time errors name it: its text form.
    fn describe(&self, id: OpId) -> String {
        self.names.describe_op(self.func, id)
    }

    /// The op as a run-time check names it: its source location and tensor
    /// parameters, and its text form (`ValueNames::describe_site`).
    fn check_site(&self, id: OpId) -> String {
        self.names.describe_site(self.func, id)
    }

    fn invalid(&self, id: OpId, reason: impl Into<String>) -> LowerError {
        LowerError::Invalid {
            op: self.describe(id),
            reason: reason.into(),
        }
    }

    /// The lowered value of a tile-IR value.
    fn get(&mut self, id: OpId, v: Value) -> Result<Lowered, LowerError> {
        match self.env.get(&v).cloned() {
            Some(Lowered::Param { index, dtype }) => {
                let r = self.hoist(ThreadOpKind::Param { index }, vec![], dtype);
                self.env.insert(v, Lowered::Scalar(r));
                Ok(Lowered::Scalar(r))
            }
            Some(l) => Ok(l),
            None => Err(self.invalid(
                id,
                format!("{} is used before it is defined", self.names.name(v)),
            )),
        }
    }

    /// The register of a scalar operand.
    fn scalar(&mut self, id: OpId, v: Value) -> Result<Reg, LowerError> {
        match self.get(id, v)? {
            Lowered::Scalar(r) => Ok(r),
            _ => Err(self.invalid(id, format!("{} is not a scalar", self.names.name(v)))),
        }
    }

    /// The layout and registers of a tile operand.
    fn tile(&mut self, id: OpId, v: Value) -> Result<(Rc<DistLayout>, Vec<Reg>), LowerError> {
        match self.get(id, v)? {
            Lowered::Tile { layout, regs } => Ok((layout, regs)),
            _ => Err(self.invalid(id, format!("{} is not a tile", self.names.name(v)))),
        }
    }

    /// The layout the plan gives to tile value `v`.
    fn layout_of(&self, id: OpId, v: Value) -> Result<Rc<DistLayout>, LowerError> {
        self.plan
            .values
            .get(&v)
            .map(|l| Rc::new(l.clone()))
            .ok_or_else(|| self.invalid(id, format!("{} is not a tile", self.names.name(v))))
    }

    /// Binds the single result of `id`.
    fn bind(&mut self, id: OpId, value: Lowered) -> Result<(), LowerError> {
        match self.func.op(id).results.as_slice() {
            [r] => {
                self.env.insert(*r, value);
                Ok(())
            }
            _ => Err(self.invalid(id, "expected one result")),
        }
    }

    /// Emits an op into the current region; returns it.
    fn emit_op(&mut self, kind: ThreadOpKind, operands: Vec<Reg>, results: &[DType]) -> ThreadOp {
        let op = self.program.create_op(kind, operands, results, Vec::new());
        self.current.push(op);
        op
    }

    /// Emits a one-result op into the current region.
    fn emit(&mut self, kind: ThreadOpKind, operands: Vec<Reg>, dtype: DType) -> Reg {
        let op = self.emit_op(kind, operands, &[dtype]);
        self.program.ops[op].results[0]
    }

    /// Emits a one-result op into the prologue, or returns the register of
    /// an identical one already there (prologue ops are pure: this is common
    /// subexpression elimination, e.g. of the lane index of two layouts).
    /// An op that reads a tensor of an array, or a register computed from
    /// one, goes just after that tensor's `get_tensor` instead.
    fn hoist(&mut self, kind: ThreadOpKind, operands: Vec<Reg>, dtype: DType) -> Reg {
        let key = (format!("{kind:?}"), operands.clone(), dtype);
        if let Some(&r) = self.hoisted.get(&key) {
            return r;
        }
        let home = self.element_home(&kind, &operands);
        let op = self.program.create_op(kind, operands, &[dtype], Vec::new());
        let r = self.program.ops[op].results[0];
        match home {
            Some(element) => {
                self.element_prologues.entry(element).or_default().push(op);
                self.element_homes.insert(r, element);
            }
            None => self.prologue.push(op),
        }
        self.hoisted.insert(key, r);
        r
    }

    /// Lowers one op, noting it as the origin of the thread-level ops it
    /// creates (those of the ops nested in it keep their own).
    fn op(&mut self, id: OpId) -> Result<(), LowerError> {
        let first = self.program.ops.len();
        self.lower_op(id)?;
        let end = self.program.ops.len();
        self.origins.resize(end, None);
        for origin in &mut self.origins[first..end] {
            origin.get_or_insert(id);
        }
        Ok(())
    }

    /// Lowers one op, by its family.
    fn lower_op(&mut self, id: OpId) -> Result<(), LowerError> {
        let kind = &self.func.op(id).kind;
        match kind.route() {
            Route::ProgramId { axis } => self.grid_value(id, ThreadOpKind::BlockId { axis }),
            Route::NumPrograms { axis } => self.grid_value(id, ThreadOpKind::GridDim { axis }),
            Route::Constant(_) | Route::Elementwise => self.elementwise(id),
            Route::Movement => self.movement(id),
            Route::Combine => self.combine(id),
            Route::Reduce => self.reduce(id),
            Route::Dot(_) => self.dot(id),
            Route::DotScaled => self.dot(id),
            Route::Fp4Pairs => self.fp4_pairs(id),
            Route::Memory
                if matches!(
                    kind,
                    tile_ir::OpKind::GetTensor | tile_ir::OpKind::NumTensors
                ) =>
            {
                self.tensor_array_op(id)
            }
            Route::Memory => self.memory(id),
            Route::For => self.lower_for(id),
            Route::While => self.lower_while(id),
            Route::If => self.lower_if(id),
            Route::Yield => self.lower_yield(id),
            Route::LayoutView(lview) => self.lview(id, lview),
            Route::Assert { id: n, .. } => self.assert(id, n),
            Route::MultipleOf { id: n, divisor } => self.multiple_of(id, n, divisor),
            Route::Print { id: n, .. } => self.print(id, n),
            Route::Barrier => {
                self.barrier();
                Ok(())
            }
            Route::Fence { order, scope } => {
                self.fence(order, scope);
                Ok(())
            }
            Route::GridWait => {
                self.emit_op(ThreadOpKind::GridWait, vec![], &[]);
                Ok(())
            }
            Route::GridLaunchDependents => {
                self.emit_op(ThreadOpKind::GridLaunchDependents, vec![], &[]);
                Ok(())
            }
        }
    }

    /// `program_id` or `num_programs` as `kind`, hoisted to the kernel's
    /// entry.
    fn grid_value(&mut self, id: OpId, kind: ThreadOpKind) -> Result<(), LowerError> {
        let r = self.hoist(kind, vec![], DType::I32);
        self.bind(id, Lowered::Scalar(r))
    }
}

//! The lockstep emulator: runs a thread-level [`Program`] on the CPU.
//!
//! Every block of the grid runs in turn (x fastest, then y, then z, as the
//! interpreter). Inside a block all `32 * num_warps` threads advance together:
//! each op is executed for thread 0, 1, 2, … before the next op starts, so a
//! `barrier` needs no scheduling and a shuffle sees every lane's operand.
//! Per-thread registers, per-block shared memory and global memory on host
//! buffers are modelled, and the emulator reports as a [`LockstepError`] naming
//! the op, block, thread and address:
//!
//! * a global access outside the elements reachable in the tensor;
//! * a shared-memory access outside its allocation, or a read of an element
//!   never written;
//! * a shared-memory race: two threads touching one address between the same
//!   pair of barriers, at least one writing;
//! * a global-memory race: threads of two blocks touching one element, at
//!   least one writing and not both atomically, with neither access
//!   happening before the other (`tile_hw::happens`);
//! * control flow that is not uniform across the block;
//! * a failed `bounds_check` (as a GPU's device error flag would).
//!
//! [`run_with_stats`] also returns [`RunStats`]: the warp-wide shared-memory
//! accesses and their bank conflicts (see `banks.rs`).

mod arrays;
mod banks;
mod checks;
mod control;
mod copies;
mod error;
mod global;
mod memory;
mod mma;
mod registers;
mod shared;
mod shuffle;
mod tcgen05;
mod tensor_memory_ops;
mod tma;
mod wgmma;

use registers::address;

pub use banks::RunStats;
pub use error::{LockstepError, LockstepFault};

use crate::program::{Op, OpId, Program, Region, ThreadOpKind, WARP_SIZE};
use memory::{Global, Shared, Touch};
use tile_abi::device_print::PrintRecord;
use tile_hw::happens::{Sync, ThreadId};
use tile_ir::interp::Arg;
use tile_ir::{eval, Scalar};
use wgmma::WgmmaA;

/// An op's operands' per-thread values, by role.
type Operands<'x> = crate::program::Roles<'x, Vec<Scalar>>;

/// The most iterations one execution of a `for` may run.
pub const MAX_LOOP_ITERATIONS: u64 = 1 << 20;

/// Runs `program` over `grid` blocks on `args` (one per parameter but the
/// tensors of arrays; tensors are written back with the program's stores,
/// also when it fails).
pub fn run(program: &Program, grid: [u32; 3], args: &mut [Arg]) -> Result<(), LockstepError> {
    run_with_stats(program, grid, args).map(|_| ())
}

/// As [`run`], returning the run's statistics (shared-memory accesses and
/// bank conflicts over all blocks).
pub fn run_with_stats(
    program: &Program,
    grid: [u32; 3],
    args: &mut [Arg],
) -> Result<RunStats, LockstepError> {
    run_printing(program, grid, args).1
}

/// As [`run_with_stats`], also returning the records of the program's
/// `print` ops (`tile_abi::device_print`), in the order the blocks and their
/// threads wrote them, also when the run fails.
pub fn run_printing(
    program: &Program,
    grid: [u32; 3],
    args: &mut [Arg],
) -> (Vec<PrintRecord>, Result<RunStats, LockstepError>) {
    let mut prints = Vec::new();
    let result = run_into(program, grid, args, &mut prints);
    (prints, result)
}

/// [`run_printing`], appending the print records to `prints`.
fn run_into(
    program: &Program,
    grid: [u32; 3],
    args: &mut [Arg],
    prints: &mut Vec<PrintRecord>,
) -> Result<RunStats, LockstepError> {
    let at_start = |fault| LockstepError {
        block: [0; 3],
        thread: None,
        op: "kernel".into(),
        fault: Box::new(fault),
    };
    if program.num_warps == 0 {
        return Err(at_start(LockstepFault::Malformed(
            "a block of no warps".into(),
        )));
    }
    let (globals, arrays) = arrays::globals(program, args).map_err(at_start)?;
    let mut machine = Emulator {
        program,
        args,
        globals,
        bound: vec![None; program.params.len()],
        arrays,
        grid,
        block: [0; 3],
        regs: Vec::new(),
        shared: Shared::new(program),
        threads: program.block_threads(),
        stats: RunStats::default(),
        copies: Vec::new(),
        mbarriers: tma::Mbarriers::new(),
        tmem: tcgen05::TensorMemory::default(),
        prints,
        sync: Sync::new(),
    };
    let result = machine.run_grid();
    let Emulator {
        globals,
        arrays,
        args,
        stats,
        ..
    } = machine;
    arrays::write_back((globals, arrays), args).map_err(at_start)?;
    result.map(|()| stats)
}

/// The state of a run: memories and the registers of the current block.
struct Emulator<'a> {
    program: &'a Program,
    args: &'a mut [Arg],
    globals: Vec<Option<Global>>,
    /// Per parameter of kind `Element`, the global `get_tensor` bound it to
    /// in the current block.
    bound: Vec<Option<usize>>,
    /// Per tensor-array parameter, the globals of its tensors.
    arrays: Vec<Vec<usize>>,
    grid: [u32; 3],
    block: [u32; 3],
    /// Per register, its value in each thread (once defined).
    regs: Vec<Option<Vec<Scalar>>>,
    shared: Shared,
    threads: u32,
    stats: RunStats,
    /// Each thread's `cp.async` groups in flight.
    copies: Vec<copies::Groups>,
    /// The block's mbarriers and the TMA copies completing on them.
    mbarriers: tma::Mbarriers,
    /// The block's tensor memory.
    tmem: tcgen05::TensorMemory,
    /// The records of `print` ops so far.
    prints: &'a mut Vec<PrintRecord>,
    /// Happens-before between the launch's threads, for global races.
    sync: Sync,
}

impl<'a> Emulator<'a> {
    fn run_grid(&mut self) -> Result<(), LockstepError> {
        if self.grid.iter().any(|&g| i32::try_from(g).is_err()) {
            return Err(self.error(
                None,
                None,
                LockstepFault::Malformed("grid beyond i32".into()),
            ));
        }
        for z in 0..self.grid[2] {
            for y in 0..self.grid[1] {
                for x in 0..self.grid[0] {
                    self.block = [x, y, z];
                    self.regs = vec![None; self.program.regs.len()];
                    self.shared = Shared::new(self.program);
                    self.copies = vec![copies::Groups::default(); self.threads as usize];
                    self.mbarriers.clear();
                    self.tmem = tcgen05::TensorMemory::default();
                    self.bound.fill(None);
                    self.run_region(&self.program.body)?;
                    if let Some(what) = self.tmem.at_exit() {
                        return Err(self.error(None, None, LockstepFault::TensorMemory(what)));
                    }
                }
            }
        }
        Ok(())
    }

    /// The current block's linear index (x fastest), for the race check of
    /// global memory.
    fn block_linear(&self) -> u64 {
        let [x, y, z] = self.block.map(u64::from);
        let [gx, gy, _] = self.grid.map(u64::from);
        x + gx * (y + gy * z)
    }

    /// Thread `thread` of the current block, as happens-before names it.
    fn who(&self, thread: u32) -> ThreadId {
        ThreadId {
            block: self.block_linear(),
            thread,
        }
    }

    fn error(&self, op: Option<OpId>, thread: Option<u32>, fault: LockstepFault) -> LockstepError {
        LockstepError {
            block: self.block,
            thread,
            op: op.map_or_else(|| "kernel".into(), |op| self.program.op_text(op)),
            fault: Box::new(fault),
        }
    }

    /// Runs a region; returns the per-thread values of its `yield`, if any.
    fn run_region(&mut self, region: &Region) -> Result<Option<Vec<Vec<Scalar>>>, LockstepError> {
        for &id in &region.ops {
            let op = self.program.ops.get(id).ok_or_else(|| {
                self.error(
                    None,
                    None,
                    LockstepFault::Malformed(format!("no op {}", id.index())),
                )
            })?;
            if let ThreadOpKind::Yield = op.kind {
                let values = op
                    .operands
                    .iter()
                    .map(|&r| self.value(id, r).cloned())
                    .collect::<Result<_, _>>()?;
                return Ok(Some(values));
            }
            self.run_op(id, op)?;
        }
        Ok(None)
    }

    fn run_op(&mut self, id: OpId, op: &Op) -> Result<(), LockstepError> {
        let x = self.operands(id, op)?;
        // The operands by role; loops read theirs by position.
        let fitted = Operands::of(&op.kind, &x);
        let roles = || {
            fitted.as_ref().ok_or_else(|| {
                let what = format!("operands that fit no format of `{}`", op.kind.name());
                self.error(Some(id), None, LockstepFault::Malformed(what))
            })
        };
        let arg = |name: &str| self.role(id, roles()?, name);
        let uniform_value = |v: Scalar| vec![v; self.threads as usize];
        let results: Vec<Vec<Scalar>> = match &op.kind {
            ThreadOpKind::ThreadId => {
                vec![(0..self.threads).map(|t| Scalar::I32(t as i32)).collect()]
            }
            ThreadOpKind::LaneId => {
                vec![(0..self.threads)
                    .map(|t| Scalar::I32((t % WARP_SIZE) as i32))
                    .collect()]
            }
            ThreadOpKind::WarpId => {
                vec![(0..self.threads)
                    .map(|t| Scalar::I32((t / WARP_SIZE) as i32))
                    .collect()]
            }
            ThreadOpKind::BlockId { axis } | ThreadOpKind::GridDim { axis } => {
                let ids = if matches!(op.kind, ThreadOpKind::BlockId { .. }) {
                    self.block
                } else {
                    self.grid
                };
                let v = ids.get(usize::from(*axis)).ok_or_else(|| {
                    self.error(
                        Some(id),
                        None,
                        LockstepFault::Malformed(format!("grid axis {axis}")),
                    )
                })?;
                vec![uniform_value(Scalar::I32(*v as i32))]
            }
            ThreadOpKind::Const(v) => vec![uniform_value(*v)],
            ThreadOpKind::Param { index } => match self.args.get(*index) {
                Some(Arg::Scalar(s)) => vec![uniform_value(*s)],
                _ => {
                    return Err(self.error(
                        Some(id),
                        None,
                        LockstepFault::Malformed(format!("parameter {index} is not a scalar")),
                    ))
                }
            },
            ThreadOpKind::TensorDim { param, axis }
            | ThreadOpKind::TensorStride { param, axis } => {
                let g = self.global(id, *param)?;
                let global = self.globals[g].as_ref();
                let v = global.and_then(|g| {
                    if matches!(op.kind, ThreadOpKind::TensorDim { .. }) {
                        g.dim(*axis)
                    } else {
                        g.stride(*axis)
                    }
                });
                let v = v.ok_or_else(|| {
                    self.error(
                        Some(id),
                        None,
                        LockstepFault::Malformed(format!("axis {axis} of a tensor parameter")),
                    )
                })?;
                vec![uniform_value(v)]
            }
            ThreadOpKind::GetTensor { param, array } => {
                self.get_tensor(id, (*param, *array), roles()?)?;
                Vec::new()
            }
            ThreadOpKind::NumTensors { array } => vec![uniform_value(self.num_tensors(*array))],
            ThreadOpKind::TensorAlign { param } => {
                let g = self.global(id, *param)?;
                let align = self.globals[g].as_ref().map(Global::align);
                let align = align.ok_or_else(|| {
                    self.error(Some(id), None, LockstepFault::Malformed("no tensor".into()))
                })?;
                vec![uniform_value(align)]
            }
            ThreadOpKind::Unary(u) => {
                let a = arg("x")?;
                vec![self.per_thread(id, |t| Ok(eval::unary(*u, a[t as usize])?))?]
            }
            ThreadOpKind::Binary(b) => {
                let (a, c) = (arg("a")?, arg("b")?);
                vec![self.per_thread(id, |t| Ok(eval::binary(*b, a[t as usize], c[t as usize])?))?]
            }
            ThreadOpKind::Cmp(p) => {
                let (a, c) = (arg("a")?, arg("b")?);
                vec![self.per_thread(id, |t| {
                    Ok(Scalar::Bool(eval::compare(
                        *p,
                        a[t as usize],
                        c[t as usize],
                    )?))
                })?]
            }
            ThreadOpKind::Select => {
                let (c, a, b) = (arg("c")?, arg("a")?, arg("b")?);
                vec![self.per_thread(id, |t| {
                    let t = t as usize;
                    Ok(eval::select(c[t], a[t], b[t])?)
                })?]
            }
            ThreadOpKind::Fma => {
                let (a, b, c) = (arg("a")?, arg("b")?, arg("c")?);
                vec![self.per_thread(id, |t| {
                    let t = t as usize;
                    Ok(eval::fma(a[t], b[t], c[t])?)
                })?]
            }
            ThreadOpKind::Opaque => vec![arg("x")?.to_vec()],
            ThreadOpKind::Cast { to } => {
                let a = arg("x")?;
                vec![self.per_thread(id, |t| Ok(eval::cast(a[t as usize], *to)))?]
            }
            ThreadOpKind::Bitcast { to } => {
                let a = arg("x")?;
                vec![self.per_thread(id, |t| Ok(eval::bitcast(a[t as usize], *to)?))?]
            }
            ThreadOpKind::LoadGlobal { param, width } => {
                self.load_global(id, *param, usize::from(*width), &x)?
            }
            ThreadOpKind::StoreGlobal { param, width } => {
                self.store_global(id, *param, usize::from(*width), &x)?;
                Vec::new()
            }
            ThreadOpKind::AtomicGlobal {
                param,
                op,
                order,
                scope,
            } => self.atomic_global(id, *param, (*op, *order, *scope), roles()?)?,
            ThreadOpKind::AddGlobal {
                param,
                scope,
                width,
            } => self.add_global(id, (*param, *scope, usize::from(*width)), &x)?,
            ThreadOpKind::LoadShared { alloc, width } => {
                let access = (alloc.index(), usize::from(*width));
                self.load_shared(id, access, arg("index")?)?
            }
            ThreadOpKind::StoreShared { alloc, width } => {
                let values: Vec<&[Scalar]> =
                    roles()?.list("values").iter().map(Vec::as_slice).collect();
                let access = (alloc.index(), usize::from(*width));
                self.store_shared(id, access, (arg("index")?, &values, arg("mask")?))?;
                Vec::new()
            }
            ThreadOpKind::RoundSharedTf32 { alloc, width } => {
                let access = (alloc.index(), usize::from(*width));
                let (index, mask) = (arg("index")?.to_vec(), arg("mask")?.to_vec());
                self.round_shared_tf32(id, access, (&index, &mask))?;
                Vec::new()
            }
            ThreadOpKind::Check { kind, op: checked } => {
                self.check(id, (*kind, checked), roles()?)?;
                Vec::new()
            }
            ThreadOpKind::Print { id: print } => {
                self.print(id, *print, roles()?)?;
                Vec::new()
            }
            ThreadOpKind::Barrier => {
                self.shared.barrier();
                self.tmem.barrier();
                self.sync.barrier(self.block_linear());
                Vec::new()
            }
            ThreadOpKind::Fence { order, scope } => {
                for t in 0..self.threads {
                    self.sync.fence(self.who(t), *order, *scope);
                }
                Vec::new()
            }
            ThreadOpKind::Shuffle { mode, width } => {
                let (v, b) = (arg("value")?, arg("lane")?);
                let width = u32::from(*width);
                let Some(span) = shuffle::span(width, self.threads) else {
                    return Err(self.error(
                        Some(id),
                        None,
                        LockstepFault::Malformed(format!("shuffle width {width}")),
                    ));
                };
                vec![self.per_thread(id, |t| {
                    let lane = t % span;
                    let b = address(b[t as usize]) as i32;
                    let src = shuffle::source_lane(*mode, lane, b, width);
                    Ok(v[(t - lane + src) as usize])
                })?]
            }
            ThreadOpKind::CopyAsync { param, alloc } => {
                self.copy_async(id, *param, *alloc, roles()?)?;
                Vec::new()
            }
            ThreadOpKind::CommitAsync => {
                self.commit_async();
                Vec::new()
            }
            ThreadOpKind::MbarrierInit { alloc } => {
                self.mbarrier_init(id, *alloc, roles()?)?;
                Vec::new()
            }
            ThreadOpKind::MbarrierExpectTx { alloc } => {
                self.mbarrier_expect_tx(id, *alloc, roles()?)?;
                Vec::new()
            }
            ThreadOpKind::MbarrierWait { alloc } => {
                self.mbarrier_wait(id, *alloc, roles()?)?;
                Vec::new()
            }
            ThreadOpKind::TmaLoad {
                param,
                rows,
                alloc,
                bar,
            } => {
                self.tma_load(id, (*param, *rows), (*alloc, *bar), roles()?)?;
                Vec::new()
            }
            ThreadOpKind::WaitAsync { pending } => {
                self.wait_async(usize::from(*pending))?;
                Vec::new()
            }
            ThreadOpKind::LdMatrix { alloc, shape } => {
                if !self.threads.is_multiple_of(WARP_SIZE) {
                    return Err(self.error(
                        Some(id),
                        None,
                        LockstepFault::Malformed("`ldmatrix` without whole warps".into()),
                    ));
                }
                self.ldmatrix(id, *alloc, *shape, arg("index")?)?
            }
            ThreadOpKind::Mma { kind } => {
                let want = op.operands.len();
                if x.len() != want || !(self.threads as usize).is_multiple_of(kind.lanes()) {
                    return Err(self.error(
                        Some(id),
                        None,
                        LockstepFault::Malformed("`mma` without whole warps and operands".into()),
                    ));
                }
                mma::run(*kind, &x, self.threads as usize).map_err(|what| {
                    self.error(
                        Some(id),
                        None,
                        LockstepFault::Malformed(format!("mma: {what}")),
                    )
                })?
            }
            ThreadOpKind::Wgmma {
                kind,
                a,
                a_swizzle,
                b,
            } => self.wgmma(id, (*kind, WgmmaA::Shared(*a, *a_swizzle), *b), roles()?)?,
            ThreadOpKind::WgmmaRegisterA { kind, b } => {
                self.wgmma(id, (*kind, WgmmaA::Registers, *b), roles()?)?
            }
            ThreadOpKind::TmemAlloc { .. }
            | ThreadOpKind::TmemDealloc { .. }
            | ThreadOpKind::Tcgen05Mma { .. }
            | ThreadOpKind::Tcgen05MmaScaled { .. }
            | ThreadOpKind::Tcgen05MmaTensorA { .. }
            | ThreadOpKind::Tcgen05CommitWait { .. }
            | ThreadOpKind::TmemLoad { .. }
            | ThreadOpKind::TmemStore
            | ThreadOpKind::TmemStoreHalves
            | ThreadOpKind::TmemStoreBytes => self.tensor_memory_op(id, &op.kind, roles()?)?,
            // `wgmma`'s results are final once computed; `wait` passes them on.
            ThreadOpKind::WgmmaWait { .. } => x,
            ThreadOpKind::WgmmaFence | ThreadOpKind::WgmmaCommit => Vec::new(),
            ThreadOpKind::FenceProxyAsync => {
                self.shared.fence_proxy();
                Vec::new()
            }
            // Grids run one after another here: the grids a launch depends
            // on are done before it starts.
            ThreadOpKind::GridWait | ThreadOpKind::GridLaunchDependents => Vec::new(),
            ThreadOpKind::For => self.run_for(id, op, &x)?,
            ThreadOpKind::While => self.run_while(id, op, &x)?,
            ThreadOpKind::If => {
                let c = self.uniform(id, "the condition", arg("cond")?)?;
                let branch = if c == Scalar::Bool(true) { 0 } else { 1 };
                let region = op.regions.get(branch).ok_or_else(|| {
                    self.error(
                        Some(id),
                        None,
                        LockstepFault::Malformed("`if` without two regions".into()),
                    )
                })?;
                self.run_region(region)?.unwrap_or_default()
            }
            ThreadOpKind::Yield => {
                return Err(self.error(
                    Some(id),
                    None,
                    LockstepFault::Malformed("`yield` outside a region end".into()),
                ))
            }
        };
        if results.len() != op.results.len() {
            return Err(self.error(
                Some(id),
                None,
                LockstepFault::Malformed(format!(
                    "{} results declared, {} computed",
                    op.results.len(),
                    results.len()
                )),
            ));
        }
        for (&r, v) in op.results.iter().zip(results) {
            self.define(id, r, v)?;
        }
        Ok(())
    }
}

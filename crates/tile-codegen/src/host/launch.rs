//! Compiling a kernel for the host (LLVM's MCJIT, in-process) and running a
//! grid of program instances in parallel.

use super::abi::{self, Status};
use super::check::{self, CheckSite};
use super::error::HostError;
use super::lower::{Lowering, KERNEL};
use super::math;
use crate::emit::EmitError;
use crate::target::{Machine, Target};
use inkwell::attributes::AttributeLoc;
use inkwell::context::Context;
use inkwell::execution_engine::ExecutionEngine;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::OptimizationLevel;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use tile_ir::interp::{self, Arg};
use tile_ir::Function;

/// The compiled kernel: `(packet, ids, frame, status) -> code`.
type Entry = unsafe extern "C" fn(*const u64, *const i32, *mut u8, *mut Status) -> u32;

/// A kernel compiled for the host, ready to run over host tensors.
pub struct HostKernel<'ctx> {
    func: Function,
    // The engine owns the machine code `entry` points to; it is dropped
    // before the module it was created from.
    _engine: ExecutionEngine<'ctx>,
    _module: Module<'ctx>,
    entry: Entry,
    frame_bytes: usize,
    checks: Vec<CheckSite>,
    llvm_ir: String,
}

/// Compiles `func` (which must pass the verifier) for the host CPU, with
/// LLVM's `default<O3>` pipeline.
pub fn compile<'ctx>(ctx: &'ctx Context, func: &Function) -> Result<HostKernel<'ctx>, HostError> {
    tile_ir::verify::verify(func)?;
    let machine =
        Machine::new(Target::Host, OptimizationLevel::Aggressive).map_err(EmitError::from)?;
    let module = ctx.create_module(&func.name);
    machine.configure(&module);
    math::declare(ctx, &module);
    let (frame_bytes, checks) = Lowering::kernel(ctx, &module, func)?;
    // The JIT generates code for a generic CPU unless each function names
    // the host's: vector width, FMA and the rest come from these.
    let (cpu, features) = (Target::Host.cpu(), Target::Host.features());
    for f in module
        .get_functions()
        .filter(|f| f.count_basic_blocks() > 0)
    {
        let at = AttributeLoc::Function;
        f.add_attribute(at, ctx.create_string_attribute("target-cpu", &cpu));
        f.add_attribute(
            at,
            ctx.create_string_attribute("target-features", &features),
        );
    }
    module.verify().map_err(|m| EmitError::Verify {
        kernel: func.name.clone(),
        target: Target::Host,
        message: m.to_string(),
    })?;
    module
        .run_passes("default<O3>", machine.llvm(), PassBuilderOptions::create())
        .map_err(|m| EmitError::Optimize {
            target: Target::Host,
            message: m.to_string(),
        })?;
    let llvm_ir = module.print_to_string().to_string();
    let engine = module
        .create_jit_execution_engine(OptimizationLevel::Aggressive)
        .map_err(|m| HostError::internal(format!("LLVM's JIT: {m}")))?;
    math::bind(&engine, &module);
    // SAFETY: `KERNEL` is defined by `Lowering::kernel` with exactly the
    // signature of `Entry` (four pointers, an i32 result), and the engine
    // that owns its code lives in the returned kernel as long as `entry`.
    let entry = unsafe { engine.get_function::<Entry>(KERNEL) }
        .map_err(|e| HostError::internal(format!("the compiled kernel: {e}")))?;
    // SAFETY: as above; the raw pointer is used only while `_engine` lives.
    let entry = unsafe { entry.into_raw() };
    Ok(HostKernel {
        func: func.clone(),
        _engine: engine,
        _module: module,
        entry,
        frame_bytes: usize::try_from(frame_bytes)
            .map_err(|_| HostError::internal("a frame larger than memory"))?,
        checks,
        llvm_ir,
    })
}

/// Compiles `func` for the host and runs it over `grid` (see
/// [`HostKernel::run`]).
pub fn run(func: &Function, grid: [u32; 3], args: &mut [Arg]) -> Result<(), HostError> {
    let ctx = Context::create();
    let kernel = compile(&ctx, func)?;
    kernel.run(grid, args)
}

impl HostKernel<'_> {
    /// The module's LLVM IR after optimization.
    pub fn llvm_ir(&self) -> &str {
        &self.llvm_ir
    }

    /// The bytes of scratch memory each worker gives a program instance.
    pub fn frame_bytes(&self) -> usize {
        self.frame_bytes
    }

    /// Runs every program instance of `grid` over `args`, spread over the
    /// available cores. `args` are checked as the interpreter checks them;
    /// tensors must not alias themselves (see [`HostError::Aliasing`]). On
    /// failure, the error is the one of the first failing instance in the
    /// interpreter's order (x fastest, then y, then z); instances after it
    /// may or may not have run. As on a GPU, two instances that store one
    /// element race.
    pub fn run(&self, grid: [u32; 3], args: &mut [Arg]) -> Result<(), HostError> {
        interp::check_launch(&self.func, grid, args)?;
        let packet = abi::pack(&self.func, args)?;
        let [gx, gy, gz] = grid.map(|g| g as usize);
        let programs = gx * gy * gz;
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(programs);
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let first: Mutex<Option<(usize, Status)>> = Mutex::new(None);
        let (entry, frame_bytes) = (self.entry, self.frame_bytes);
        let worker = || {
            // Eight-byte words, so that every frame place is aligned.
            let mut frame = vec![0u64; frame_bytes.div_ceil(8).max(1)];
            while !stop.load(Ordering::Relaxed) {
                let p = next.fetch_add(1, Ordering::Relaxed);
                if p >= programs {
                    break;
                }
                let ids = [p % gx, p / gx % gy, p / (gx * gy), gx, gy, gz].map(|v| v as i32);
                let mut status = Status::default();
                // SAFETY: `entry` is the compiled kernel, alive with `self`.
                // The packet matches the kernel's parameters (built by
                // `abi::pack` after `check_launch`), its pointers point into
                // tensors borrowed mutably for this whole call, and every
                // access the kernel makes through them is bounds-checked
                // against their extents; `frame` has the size the kernel
                // needs and belongs to this thread alone.
                let code = unsafe {
                    entry(
                        packet.as_ptr(),
                        ids.as_ptr(),
                        frame.as_mut_ptr().cast::<u8>(),
                        &mut status,
                    )
                };
                if code != 0 {
                    stop.store(true, Ordering::Relaxed);
                    let mut first = first.lock().unwrap_or_else(|e| e.into_inner());
                    if first.as_ref().is_none_or(|(q, _)| p < *q) {
                        *first = Some((p, status));
                    }
                }
            }
        };
        std::thread::scope(|s| {
            for _ in 1..workers {
                s.spawn(worker);
            }
            worker();
        });
        let first = first.into_inner().unwrap_or_else(|e| e.into_inner());
        match first {
            None => Ok(()),
            Some((p, status)) => Err(self.failure(p, [gx, gy], status)),
        }
    }

    /// The error of program `p` that returned `status`.
    fn failure(&self, p: usize, [gx, gy]: [usize; 2], status: Status) -> HostError {
        let Some(site) = self.checks.get(status.check as usize) else {
            return HostError::internal(format!("status {status:?} names no check"));
        };
        match check::fault(status.code, &status.index, site.values) {
            Ok(fault) => HostError::Op {
                program: [p % gx, p / gx % gy, p / (gx * gy)].map(|v| v as u32),
                op: site.describe.clone(),
                fault,
            },
            Err(e) => e,
        }
    }
}

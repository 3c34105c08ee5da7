//! A kernel specialization through every stage, for every target: the tile
//! IR's pass pipeline, then for the GPU targets the thread-level program
//! (`tile_thread::lower`) and each target's image ([`crate::gpu`]), and for
//! the host levels one shared object each ([`crate::host`]).
//!
//! [`compile`] is what `#[tile_kernel]` runs for each specialization; with
//! [`Options::dump_dir`] every stage is written too (`dump.rs`):
//!
//! ```text
//! <dump_dir>/<kernel>/<specialization>/
//!   tile-ir.txt, tile-ir.opt.txt          the tile IR as lowered, and after the passes
//!   thread.txt                            the thread-level program (GPU targets)
//!   thread.mma_sync.txt                   the same with `mma.sync` (sm_80 and later)
//!   thread.wmma.txt                       the same with WMMA (gfx1100)
//!   thread.mfma.txt                       the same with MFMA (gfx90a, gfx942)
//!   <sm_*>.ll, .opt.ll, .ptx, .ptxas.txt  LLVM IR before and after LLVM's pipeline,
//!                                         PTX and `ptxas -v`'s resource usage
//!   <gfx*>.ll, .opt.ll, .s                LLVM IR and AMDGPU assembly
//!   <host level>.ll, .opt.ll, .s          LLVM IR and the shared object's disassembly
//!   host-plan.txt                         the host back end's decisions (`host::plan`)
//! ```

mod dump;
mod resources;

use crate::emulation::{self, EmulationImage};
use crate::gpu::{self, Emitted};
use crate::host::{self, HostError};
use crate::target::Target;
use crate::{CodegenOptions, EmitError};
use dump::Dump;
use std::path::PathBuf;
use tile_abi::{HostCheck, ImageKind};
use tile_ir::passes::PassManager;
use tile_ir::Function;
use tile_thread::lower::{self, LowerError, LowerOptions, TensorCores};
use tile_thread::Program;

/// The most tile elements one GPU thread may hold in registers for one
/// tile value (a GPU thread has at most 255 32-bit registers; beyond this
/// the code would live in local memory).
pub const MAX_ELEMENTS_PER_THREAD: usize = 1024;

/// What to compile a specialization for, and how.
#[derive(Clone, Debug)]
pub struct Options {
    /// The targets, GPU and host levels, in order.
    pub targets: Vec<Target>,
    /// Warps per program instance on a GPU.
    pub num_warps: u32,
    /// What changes the code LLVM produces.
    pub codegen: CodegenOptions,
    /// The stages of software-pipelined loops on targets with `cp.async`
    /// (`#[tile_kernel(num_stages = n)]`); `None`: the most up to
    /// [`DEFAULT_STAGES`] whose shared memory fits each target.
    pub num_stages: Option<u32>,
    /// `TILE_DUMP`: the directory every stage is written under.
    pub dump_dir: Option<PathBuf>,
}

/// The stages of a software-pipelined loop when the kernel does not say
/// (on targets with `cp.async`; fewer where the shared memory of three
/// does not fit).
pub const DEFAULT_STAGES: u32 = 3;

/// One compiled image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// What it holds.
    pub kind: ImageKind,
    /// The target it was compiled for.
    pub target: Target,
    /// The bytes (PTX as UTF-8 text).
    pub bytes: Vec<u8>,
    /// The shared memory a block of this image needs, in bytes (0 for
    /// host code).
    pub shared_memory_bytes: usize,
}

/// A specialization compiled for its targets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Compiled {
    /// One image per target, in the order of [`Options::targets`].
    pub images: Vec<Image>,
    /// The tile-IR ops of the GPU images' bounds checks, in the order their
    /// status records name them.
    pub bounds_checks: Vec<String>,
    /// The host images' checks, in the order their status records name
    /// them.
    pub host_checks: Vec<HostCheck>,
}

/// Why a specialization could not be compiled. Each message names the
/// kernel and the specialization.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The tile IR's pass pipeline failed (a compiler bug).
    #[error("internal error in the tile IR pipeline: {0}")]
    Passes(String),
    /// A tile too large for a GPU thread's registers.
    #[error("kernel `{kernel}` ({label}) is too large for a GPU: a tile of {elements} elements gives each of the {threads} threads of a block {per_thread} elements, more than the {MAX_ELEMENTS_PER_THREAD} a thread can hold in registers; use smaller tiles, more warps (`num_warps`), or `targets = \"host\"`")]
    TooLarge {
        /// The kernel.
        kernel: String,
        /// The specialization.
        label: String,
        /// The largest tile's elements.
        elements: usize,
        /// Threads per block.
        threads: usize,
        /// Elements per thread.
        per_thread: usize,
    },
    /// The lowering to the thread-level program failed.
    #[error("kernel `{kernel}` ({label}) cannot be lowered for a GPU: {error}")]
    Lower {
        /// The kernel.
        kernel: String,
        /// The specialization.
        label: String,
        /// Why.
        error: Box<LowerError>,
    },
    /// A GPU target's code generation failed.
    #[error("kernel `{kernel}` ({label}) cannot be compiled for {target}: {error}")]
    Gpu {
        /// The kernel.
        kernel: String,
        /// The specialization.
        label: String,
        /// The target.
        target: Target,
        /// Why.
        error: Box<EmitError>,
    },
    /// The host back end failed.
    #[error("kernel `{kernel}` ({label}) cannot be compiled for the host: {error}")]
    Host {
        /// The kernel.
        kernel: String,
        /// The specialization.
        label: String,
        /// Why.
        error: Box<HostError>,
    },
    /// A block needs more shared memory than the target has.
    #[error("kernel `{kernel}` ({label}) needs {bytes} bytes of shared memory per block, more than the {limit} of {target}; use smaller tiles or fewer `num_stages`")]
    SharedMemory {
        /// The kernel.
        kernel: String,
        /// The specialization.
        label: String,
        /// The target.
        target: Target,
        /// The bytes needed.
        bytes: usize,
        /// The target's limit.
        limit: usize,
    },
    /// A thread needs more registers than the target has.
    #[error("kernel `{kernel}` ({label}) needs {registers} registers per thread, more than the {limit} of {target}")]
    Registers {
        /// The kernel.
        kernel: String,
        /// The specialization.
        label: String,
        /// The target.
        target: Target,
        /// The registers needed.
        registers: usize,
        /// The target's limit.
        limit: usize,
    },
    /// A stage could not be dumped.
    #[error("TILE_DUMP: {0}")]
    Dump(String),
}

/// Runs the tile IR's default pass pipeline on `func`: the IR a kernel
/// embeds and every target compiles.
pub fn optimize(func: &mut Function) -> Result<(), PipelineError> {
    PassManager::default_pipeline()
        .run(func, |_, _| {})
        .map_err(|e| PipelineError::Passes(e.to_string()))
}

/// Runs the pass pipeline on `func` (specialization `label`, see
/// [`optimize`]), then compiles it for every target of `options`.
pub fn compile(
    func: &mut Function,
    label: &str,
    options: &Options,
) -> Result<Compiled, PipelineError> {
    let dump = Dump::new(options.dump_dir.as_deref(), &func.name, label)?;
    dump.text("tile-ir.txt", &func.to_string())?;
    optimize(func)?;
    dump.text("tile-ir.opt.txt", &func.to_string())?;
    let func = &*func;
    let named = |kernel: &Function| (kernel.name.clone(), label.to_string());
    let mut compiled = Compiled::default();
    let gpus: Vec<Target> = options
        .targets
        .iter()
        .copied()
        .filter(Target::is_gpu)
        .collect();
    if gpus.is_empty() {
        // The thread-level program is still dumped, or why there is none.
        if dump.is_on() {
            let text = match lower::lower(func, &LowerOptions::warps(options.num_warps)) {
                Ok(program) => program.to_string(),
                Err(e) => format!("the GPU lowering failed: {e}\n"),
            };
            dump.text("thread.txt", &text)?;
        }
    } else {
        check_registers(func, label, options.num_warps)?;
        // One program per set of tensor cores and stages the targets need.
        let mut programs = Programs::default();
        let mut dumped: Vec<(TensorCores, u32)> = Vec::new();
        for &target in &gpus {
            let (program, stages) = programs.for_target(func, label, options, target)?;
            let cores = target.tensor_cores();
            if dumped.contains(&(cores, stages)) {
                continue;
            }
            // A second stage count for the same cores (a target with less
            // shared memory) gets a file of its own.
            let name = if dumped.iter().any(|(c, _)| *c == cores) {
                format!("thread.{}.{stages}-stages.txt", cores_name(cores))
            } else {
                thread_file(cores)
            };
            dump.text(&name, &program.to_string())?;
            dumped.push((cores, stages));
        }
        // `thread.txt` is always the portable program, even when every
        // target has tensor cores.
        if dump.is_on() && gpus.iter().all(|t| t.tensor_cores() != TensorCores::None) {
            let program = lower_for(func, label, options.num_warps, (TensorCores::None, 1))?;
            dump.text(&thread_file(TensorCores::None), &program.to_string())?;
        }
        for &target in &gpus {
            let (program, _) = programs.for_target(func, label, options, target)?;
            let bytes = gpu::shared_bytes(&program);
            resources::check_shared_memory(&func.name, label, target, bytes)?;
            let out = gpu::emit(&program, target, &options.codegen).map_err(|error| {
                let (kernel, label) = named(func);
                PipelineError::Gpu {
                    kernel,
                    label,
                    target,
                    error: Box::new(error),
                }
            })?;
            dump.gpu(&out)?;
            if let Target::Amdgpu(gfx) = target {
                resources::check_amdgpu_registers(&func.name, label, gfx, &out.assembly)?;
            }
            compiled.bounds_checks = out.module.bounds_checks.clone();
            compiled.images.push(gpu_image(out, bytes));
        }
    }
    for &target in &options.targets {
        let Target::Host(isa) = target else { continue };
        let host_error = |error: HostError| {
            let (kernel, label) = named(func);
            PipelineError::Host {
                kernel,
                label,
                error: Box::new(error),
            }
        };
        let image = host::compile(func, isa, &options.codegen).map_err(host_error)?;
        dump.host(&image)?;
        compiled.host_checks = image.checks().to_vec();
        compiled.images.push(Image {
            kind: ImageKind::Host,
            target,
            bytes: image.shared_object().to_vec(),
            shared_memory_bytes: 0,
        });
    }
    if dump.is_on() && options.targets.iter().any(|t| !t.is_gpu()) {
        dump.text("host-plan.txt", &host::plan(func).to_string())?;
    }
    Ok(compiled)
}

/// A GPU target's image of a specialization with its emulation image: what
/// the driver stand-ins (`tile-standin`) run in place of the device image.
#[derive(Clone, Debug)]
pub struct Emulated {
    /// The PTX or code object, as [`compile`] embeds it.
    pub device: Image,
    /// The same module moved to the host.
    pub emulation: EmulationImage,
}

/// Compiles `func` (specialization `label`, its tile IR already through
/// [`optimize`], as a kernel embeds it) for the GPU `target` with
/// `options`, and moves the module to the host ([`crate::emulation`]).
pub fn emulate(
    func: &Function,
    label: &str,
    target: Target,
    options: &Options,
) -> Result<Emulated, PipelineError> {
    let failed = |error: EmitError| PipelineError::Gpu {
        kernel: func.name.clone(),
        label: label.to_string(),
        target,
        error: Box::new(error),
    };
    let (program, _) = Programs::default().for_target(func, label, options, target)?;
    let bytes = gpu::shared_bytes(&program);
    let out = gpu::emit(&program, target, &options.codegen).map_err(failed)?;
    let emulation = emulation::compile(&out.module).map_err(failed)?;
    Ok(Emulated {
        device: gpu_image(out, bytes),
        emulation,
    })
}

/// The thread-level programs of one specialization, by tensor cores and
/// stages, lowered once each.
#[derive(Default)]
struct Programs {
    lowered: Vec<((TensorCores, u32), Program)>,
}

impl Programs {
    /// The program for the GPU `target` and its stages: `options.num_stages`
    /// on a target with `cp.async` (1 elsewhere), or when the kernel does
    /// not say, the most up to [`DEFAULT_STAGES`] whose shared memory fits
    /// the target (a requested count that does not fit fails later, at the
    /// shared-memory check, with the figures).
    fn for_target(
        &mut self,
        func: &Function,
        label: &str,
        options: &Options,
        target: Target,
    ) -> Result<(Program, u32), PipelineError> {
        let cores = target.tensor_cores();
        let most = match (cores, options.num_stages) {
            (TensorCores::MmaSync | TensorCores::Wgmma, Some(n)) => n.max(1),
            (TensorCores::MmaSync | TensorCores::Wgmma, None) => DEFAULT_STAGES,
            _ => 1,
        };
        let mut stages = most;
        loop {
            let program = self.lowered(func, label, options.num_warps, (cores, stages))?;
            let fits = gpu::shared_bytes(&program) <= resources::shared_memory_limit(target);
            if fits || stages == 1 || options.num_stages.is_some() {
                return Ok((program, stages));
            }
            stages -= 1;
        }
    }

    fn lowered(
        &mut self,
        func: &Function,
        label: &str,
        num_warps: u32,
        key: (TensorCores, u32),
    ) -> Result<Program, PipelineError> {
        if let Some((_, program)) = self.lowered.iter().find(|(k, _)| *k == key) {
            return Ok(program.clone());
        }
        let program = lower_for(func, label, num_warps, key)?;
        self.lowered.push((key, program.clone()));
        Ok(program)
    }
}

/// The thread-level program of `func` for `num_warps` warps, with
/// `tensor_cores` and `stages` stages of software pipelining.
pub fn lower_for(
    func: &Function,
    label: &str,
    num_warps: u32,
    (tensor_cores, stages): (TensorCores, u32),
) -> Result<Program, PipelineError> {
    let options = LowerOptions::warps(num_warps)
        .with_tensor_cores(tensor_cores)
        .with_stages(stages);
    lower::lower(func, &options).map_err(|error| PipelineError::Lower {
        kernel: func.name.clone(),
        label: label.to_string(),
        error: Box::new(error),
    })
}

/// The `TILE_DUMP` file of the thread-level program for `tensor_cores`:
/// `thread.txt` without, `thread.mma_sync.txt` with `mma.sync`,
/// `thread.wgmma.txt` with Hopper's `wgmma`, `thread.wmma.txt` and
/// `thread.mfma.txt` with AMD's instructions.
fn thread_file(tensor_cores: TensorCores) -> String {
    match tensor_cores {
        TensorCores::None => "thread.txt".into(),
        cores => format!("thread.{}.txt", cores_name(cores)),
    }
}

/// The name of a set of tensor cores in dump files.
fn cores_name(tensor_cores: TensorCores) -> &'static str {
    match tensor_cores {
        TensorCores::None => "portable",
        TensorCores::MmaSync => "mma_sync",
        TensorCores::Wmma => "wmma",
        TensorCores::Mfma => "mfma",
        TensorCores::Wgmma => "wgmma",
    }
}

/// The image of a GPU target's output, PTX text or the linked code
/// object, whose blocks need `shared_memory_bytes`.
fn gpu_image(out: Emitted, shared_memory_bytes: usize) -> Image {
    let target = out.module.target;
    match out.code_object {
        Some(hsaco) => Image {
            kind: ImageKind::Hsaco,
            target,
            bytes: hsaco,
            shared_memory_bytes,
        },
        None => Image {
            kind: ImageKind::Ptx,
            target,
            bytes: out.assembly.into_bytes(),
            shared_memory_bytes,
        },
    }
}

/// An error unless every tile of `f` spreads over the block's threads with
/// at most [`MAX_ELEMENTS_PER_THREAD`] elements each.
fn check_registers(f: &Function, label: &str, num_warps: u32) -> Result<(), PipelineError> {
    let threads = 32 * num_warps as usize;
    let largest = f
        .values
        .iter()
        .filter_map(|(_, v)| v.ty.tile_shape().map(|s| s.numel()))
        .max()
        .unwrap_or(0);
    let per_thread = largest.div_ceil(threads);
    if per_thread > MAX_ELEMENTS_PER_THREAD {
        return Err(PipelineError::TooLarge {
            kernel: f.name.clone(),
            label: label.to_string(),
            elements: largest,
            threads,
            per_thread,
        });
    }
    Ok(())
}

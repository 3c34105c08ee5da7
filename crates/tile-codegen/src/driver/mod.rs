//! The compile driver: a kernel specialization through every stage, for
//! every target: the tile IR's pass pipeline, then for the GPU targets the
//! thread-level program (`tile_thread::lower`) and each target's image
//! ([`crate::gpu`]), and for the host levels one shared object each
//! ([`crate::host`]).
//!
//! [`compile`] is what `#[tile_kernel]` runs for each specialization; with
//! [`Options::dump_dir`] every stage is written too (`dump.rs`):
//!
//! ```text
//! <dump_dir>/<kernel>/<specialization>/
//!   tile-ir.txt, tile-ir.opt.txt          the tile IR as lowered, and after the passes
//!   thread.txt                            the thread-level program (GPU targets)
//!   thread.mma_sync.txt                   the same with `mma.sync` (sm_80 and later)
//!   thread.mma_sync_fp8.txt               the same with its FP8 form (sm_89, sm_90, sm_120a)
//!   thread.mma_sync_scaled.txt            the same with its block-scaled form (sm_120a)
//!   thread.wmma.txt                       the same with WMMA (gfx1100)
//!   thread.wmma12.txt                     the same with RDNA 4's WMMA (gfx1200, gfx1201)
//!   thread.mfma.txt                       the same with MFMA (gfx90a, gfx942)
//!   thread.mfma950.txt                    the same with CDNA 4's MFMA (gfx950)
//!   <sm_*>.ll, .opt.ll, .ptx, .ptxas.txt  LLVM IR before and after LLVM's pipeline,
//!                                         PTX and `ptxas -v`'s resource usage
//!   <gfx*>.ll, .opt.ll, .s                LLVM IR and AMDGPU assembly
//!   <host level>.ll, .opt.ll, .s          LLVM IR and the shared object's disassembly
//!   host-plan.txt                         the host back end's decisions (`host::plan`)
//! ```
//!
//! With [`Options::cache`], each target's output (its image, what the
//! kernel embeds beside it, and its dump files) is looked up in the kernel
//! cache ([`crate::cache`]) by the digest of the optimized tile IR and the
//! options, before any lowering or LLVM work, and stored there when it had
//! to be compiled (`cached.rs`). The targets that had to be compiled
//! (`targets.rs`) are compiled concurrently, each on its own thread with its
//! own LLVM context, as many at once as the build's jobserver or the
//! machine's cores allow (`parallel.rs`, `jobserver.rs`).
//!
//! [`check_only`] is what a build that produces no code runs instead: the passes
//! and the checks that need no LLVM (`check_only.rs`).

mod cached;
mod check_only;
mod dump;
mod jobserver;
mod options;
mod output;
mod parallel;
mod registers;
mod resources;
mod sites;
mod targets;

use crate::cache::KeyInputs;
use crate::emulation::{self, EmulationImage};
use crate::gpu;
use crate::host::{self, HostError};
use crate::target::Target;
use crate::EmitError;
use cached::CachedTargets;
pub use check_only::check_only;
use dump::Dump;
pub use options::Options;
pub use registers::{RegisterUsage, Spills};
use sites::Sites;
use targets::{gpu_image, Compilation};
use tile_abi::{HostCheck, ImageKind};
use tile_ir::passes::PassManager;
use tile_ir::Function;
use tile_thread::lower::{self, LowerError, LowerOptions, TensorCores};
use tile_thread::Program;

/// The most tile elements one GPU thread may hold in registers for one
/// tile value (a GPU thread has at most 255 32-bit registers; beyond this
/// the code would live in local memory).
pub const MAX_ELEMENTS_PER_THREAD: usize = 1024;

/// The most threads a block of any GPU target holds.
pub const MAX_BLOCK_THREADS: u32 = 1024;

/// The stages of a software-pipelined loop when the kernel does not say
/// (on targets with `cp.async`; fewer where the shared memory of three
/// does not fit).
pub const DEFAULT_STAGES: u32 = 3;

/// One image as the compiler produces it (owned); a kernel embeds it as the
/// runtime's `tile_runtime::Image`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompiledImage {
    /// What it holds.
    pub kind: ImageKind,
    /// The target it was compiled for.
    pub target: Target,
    /// The bytes (PTX as UTF-8 text).
    pub bytes: Vec<u8>,
    /// The shared memory a block of this image needs, in bytes (0 for
    /// host code).
    pub shared_memory_bytes: usize,
    /// The threads of a block of this image ([`Target::block_threads`]; 0
    /// for host code).
    pub block_threads: u32,
}

/// One target's stages as text, beside its image: what a kernel embeds
/// for its `thread_program(target)` and `asm(target)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetText {
    /// The target.
    pub target: Target,
    /// The thread-level program the GPU image was compiled from (`None`
    /// for host code, which is compiled from the tile IR).
    pub thread_program: Option<String>,
    /// The AMDGPU assembly of a code object (`None` for the other targets:
    /// a PTX image is its own text, a host image is a shared object).
    pub amdgpu_assembly: Option<String>,
}

/// A specialization compiled for its targets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Compiled {
    /// One image per target, in the order of [`Options::targets`].
    pub images: Vec<CompiledImage>,
    /// The text of each image's stages, in the order of the images.
    pub texts: Vec<TargetText>,
    /// The tile-IR ops of the GPU images' bounds checks, in the order their
    /// status records name them.
    pub bounds_checks: Vec<String>,
    /// The host images' checks, in the order their status records name
    /// them.
    pub host_checks: Vec<HostCheck>,
    /// The targets whose output came from the kernel cache.
    pub cached: Vec<Target>,
    /// What went wrong with the kernel cache (an entry that could not be
    /// used and was rebuilt, one that could not be stored); the compilation
    /// went on without it.
    pub cache_notes: Vec<String>,
    /// The registers of the GPU images that were measured, in target
    /// order: every AMD image (from its metadata) and the first `sm_*`
    /// target's (from `ptxas -v`, when ptxas is installed).
    pub registers: Vec<RegisterUsage>,
}

/// Why a specialization could not be compiled. Each message names the
/// kernel and the specialization.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// A target's blocks would hold more threads than its GPUs allow.
    #[error("kernel `{kernel}` ({label}) asks for {num_warps} warps, which on {target} are {threads} threads a block (its warps are {lanes}-lane wavefronts), more than the 1024 a block holds; use fewer warps there: `num_warps({} = n)` sets its own", target.attribute_name())]
    TooManyThreads {
        /// The kernel's name.
        kernel: String,
        /// The specialization.
        label: String,
        /// The target.
        target: Target,
        /// The kernel's `num_warps`.
        num_warps: u32,
        /// The threads of a block on the target.
        threads: u32,
        /// The lanes of one of the target's warps.
        lanes: u32,
    },
    /// A target's blocks would hold no thread.
    #[error(
        "kernel `{kernel}` ({label}) asks for 0 warps on {target}; a block needs at least one"
    )]
    NoWarps {
        /// The kernel's name.
        kernel: String,
        /// The specialization.
        label: String,
        /// The target.
        target: Target,
    },
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
    #[error("kernel `{kernel}` ({label}) needs {bytes} bytes of shared memory per block, more than the {limit} of {target}; the largest buffers (`TILE_DUMP`'s thread program shows their uses): {largest}; {advice}")]
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
        /// The largest buffers, with their bytes.
        largest: String,
        /// What would make the block fit.
        advice: String,
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
pub fn optimize(func: &mut Function) -> Result<(), CompileError> {
    PassManager::default_pipeline()
        .run(func, |_, _| {})
        .map_err(|e| CompileError::Passes(e.to_string()))
}

/// Runs the pass pipeline on `func` (specialization `label`, see
/// [`optimize`]), then compiles it for every target of `options`: the GPU
/// targets' images first, then the host levels', each in the order of
/// [`Options::targets`].
pub fn compile(
    func: &mut Function,
    label: &str,
    options: &Options,
) -> Result<Compiled, CompileError> {
    let dump = Dump::new(options.dump_dir.as_deref(), &func.name, label)?;
    dump.text("tile-ir.txt", &func.to_string())?;
    optimize(func)?;
    dump.text("tile-ir.opt.txt", &func.to_string())?;
    // Compiled and keyed without source locations; the checks get them back
    // at the end (`sites.rs`).
    let plain = func.without_locations();
    let sites = Sites::new(func, &plain);
    let ir = plain.to_string();
    let func = &plain;
    let (gpus, hosts): (Vec<Target>, Vec<Target>) =
        options.targets.iter().copied().partition(Target::is_gpu);
    if !gpus.is_empty() {
        check_blocks(func, label, options, &gpus)?;
    }
    let targets: Vec<Target> = gpus.iter().chain(&hosts).copied().collect();
    let mut compiled = Compiled::default();
    let cached = CachedTargets::new(options.cache.as_ref(), &targets, |target| KeyInputs {
        ir: &ir,
        label,
        target,
        num_warps: options.warps_on(target),
        codegen: &options.codegen,
        num_stages: options.stages_on(target),
        dumps: dump.is_on(),
    });
    let mut outputs = cached.look_up(&mut compiled);
    let missing: Vec<usize> = (0..targets.len())
        .filter(|&i| outputs[i].is_none())
        .collect();
    let compilation = Compilation {
        func,
        label,
        options,
        dump: &dump,
        targets: &targets,
    };
    let programs = compilation.lower_missing(&missing)?;
    let mut first_error: Option<CompileError> = None;
    for (i, result) in compilation.compile_missing(&missing, &programs) {
        match result {
            Ok(output) => outputs[i] = Some(output),
            // Results come in target order: the first error is the first target's.
            Err(error) => {
                first_error.get_or_insert(error);
            }
        }
    }
    cached.store(&missing, &outputs, &mut compiled.cache_notes);
    for output in outputs.iter().flatten() {
        for (name, contents) in &output.dumps {
            dump.file(name, contents)?;
        }
    }
    if let Some(error) = first_error {
        return Err(error);
    }
    if dump.is_on() && !hosts.is_empty() {
        dump.text("host-plan.txt", &host::plan(func).to_string())?;
    }
    for output in outputs.into_iter().flatten() {
        compiled.registers.extend(output.registers);
        if output.image.target.is_gpu() {
            compiled.bounds_checks = output
                .bounds_checks
                .iter()
                .map(|c| sites.locate(c))
                .collect();
        } else {
            compiled.host_checks = output
                .host_checks
                .iter()
                .map(|c| HostCheck {
                    op: sites.locate(&c.op).into(),
                    values: c.values,
                })
                .collect();
        }
        compiled.images.push(output.image);
        compiled.texts.push(output.text);
    }
    Ok(compiled)
}

/// A GPU target's image of a specialization with its emulation image: what
/// the driver stand-ins (`tile-standin`) run in place of the device image.
#[derive(Clone, Debug)]
pub struct Emulated {
    /// The PTX or code object, as [`compile`] embeds it.
    pub device: CompiledImage,
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
) -> Result<Emulated, CompileError> {
    let failed = |error: EmitError| CompileError::Gpu {
        kernel: func.name.clone(),
        label: label.to_string(),
        target,
        error: Box::new(error),
    };
    check_blocks(func, label, options, &[target])?;
    let (program, _) = Programs::default().for_target(func, label, options, target)?;
    let bytes = gpu::shared_bytes(&program);
    let out = gpu::emit(&program, target, &options.codegen).map_err(failed)?;
    let emulation = emulation::compile(&out.module).map_err(failed)?;
    Ok(Emulated {
        device: gpu_image(out, bytes, program.block_threads()),
        emulation,
    })
}

/// How a specialization is lowered for a target: its tensor cores,
/// stages, warps and whether the TMA copies pipelined operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LoweringKey {
    cores: TensorCores,
    stages: u32,
    warps: u32,
    tma: bool,
}

/// The thread-level programs of one specialization, by [`LoweringKey`],
/// lowered once each.
#[derive(Default)]
struct Programs {
    lowered: Vec<(LoweringKey, Program)>,
}

impl Programs {
    /// The program for the GPU `target` and its stages: the kernel's
    /// ([`Options::stages_on`]) on a target with `cp.async` (1 elsewhere), or when the kernel does
    /// not say, the most up to [`DEFAULT_STAGES`] whose shared memory fits
    /// the target (a requested count that does not fit fails later, at the
    /// shared-memory check, with the figures).
    fn for_target(
        &mut self,
        func: &Function,
        label: &str,
        options: &Options,
        target: Target,
    ) -> Result<(Program, u32), CompileError> {
        let cores = shared_cores(func, target.tensor_cores());
        let asked = options.stages_on(target);
        let most = match (cores.cp_async(), asked) {
            (true, Some(n)) => n.max(1),
            (true, None) => DEFAULT_STAGES,
            (false, _) => 1,
        };
        let mut stages = most;
        loop {
            let warps = target.lowering_warps(options.warps_on(target));
            let key = LoweringKey {
                cores,
                stages,
                warps,
                tma: options.codegen.tma && target.has_tma(),
            };
            let program = self.lowered(func, label, options, key)?;
            let fits = gpu::shared_bytes(&program) <= resources::shared_memory_limit(target);
            if fits || stages == 1 || asked.is_some() {
                return Ok((program, stages));
            }
            stages -= 1;
        }
    }

    fn lowered(
        &mut self,
        func: &Function,
        label: &str,
        options: &Options,
        key: LoweringKey,
    ) -> Result<Program, CompileError> {
        if let Some((_, program)) = self.lowered.iter().find(|(k, _)| *k == key) {
            return Ok(program.clone());
        }
        let lowering = options
            .lowering_with(key.warps)
            .with_tensor_cores(key.cores)
            .with_stages(key.stages)
            .with_tma(key.tma);
        let program = lower_for(func, label, &lowering)?;
        self.lowered.push((key, program.clone()));
        Ok(program)
    }
}

/// `cores`, or `mma.sync` without its block-scaled form when `func` has no
/// `dot_scaled` for it, and without its FP8 form when it has no FP8 `dot`
/// either: sm_120a, sm_89 and sm_90 then share sm_80's program, lowered
/// once.
pub(super) fn shared_cores(func: &Function, cores: TensorCores) -> TensorCores {
    let fp8_dot = func.ops.iter().any(|(_, op)| {
        matches!(op.kind, tile_ir::OpKind::Dot { .. })
            && op
                .operands
                .iter()
                .take(2)
                .any(|&x| func.ty(x).dtype().is_f8())
    });
    let scaled_dot = func
        .ops
        .iter()
        .any(|(_, op)| op.kind == tile_ir::OpKind::DotScaled);
    match cores {
        TensorCores::MmaSyncScaled if scaled_dot => cores,
        TensorCores::MmaSyncScaled | TensorCores::MmaSyncFp8 if fp8_dot => TensorCores::MmaSyncFp8,
        TensorCores::MmaSyncScaled | TensorCores::MmaSyncFp8 => TensorCores::MmaSync,
        cores => cores,
    }
}

/// The thread-level program of `func` (the specialization `label`) lowered
/// with `options`.
pub fn lower_for(
    func: &Function,
    label: &str,
    options: &LowerOptions,
) -> Result<Program, CompileError> {
    lower::lower(func, options).map_err(|error| CompileError::Lower {
        kernel: func.name.clone(),
        label: label.to_string(),
        error: Box::new(error),
    })
}

/// An error unless, on every GPU target of `gpus`, a block of the kernel's
/// warps holds at most [`MAX_BLOCK_THREADS`] threads and every tile of `f`
/// spreads over them with at most [`MAX_ELEMENTS_PER_THREAD`] elements each.
fn check_blocks(
    f: &Function,
    label: &str,
    options: &Options,
    gpus: &[Target],
) -> Result<(), CompileError> {
    let largest = f
        .values
        .iter()
        .filter_map(|(_, v)| v.ty.tile_shape().map(|s| s.numel()))
        .max()
        .unwrap_or(0);
    for &target in gpus {
        let num_warps = options.warps_on(target);
        let threads = target.block_threads(num_warps);
        if threads == 0 {
            return Err(CompileError::NoWarps {
                kernel: f.name.clone(),
                label: label.to_string(),
                target,
            });
        }
        if threads > MAX_BLOCK_THREADS {
            return Err(CompileError::TooManyThreads {
                kernel: f.name.clone(),
                label: label.to_string(),
                target,
                num_warps,
                threads,
                lanes: threads / num_warps,
            });
        }
        let threads = threads as usize;
        let per_thread = largest.div_ceil(threads);
        if per_thread > MAX_ELEMENTS_PER_THREAD {
            return Err(CompileError::TooLarge {
                kernel: f.name.clone(),
                label: label.to_string(),
                elements: largest,
                threads,
                per_thread,
            });
        }
    }
    Ok(())
}

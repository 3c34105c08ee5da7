//! One target's output of a specialization: the thread-level programs the
//! GPU targets share (lowered once per set of tensor cores), then each
//! target compiled on its own ([`Compilation::compile_missing`] runs them
//! concurrently, `parallel.rs`), with its resource checks and dump files.

use super::dump::{self, Dump, DumpFile};
use super::output::TargetOutput;
use super::{lower_for, parallel, resources, Image, Options, PipelineError};
use crate::gpu::{self, Emitted};
use crate::host;
use crate::target::Target;
use std::num::NonZeroUsize;
use tile_abi::{HostIsa, ImageKind};
use tile_ir::Function;
use tile_thread::lower::{self, LowerOptions, TensorCores};
use tile_thread::Program;

/// A thread-level program for one set of tensor cores, and the shared
/// memory of a block.
pub(super) type Lowered = (TensorCores, Program, usize);

/// A specialization being compiled: its optimized tile IR, label, options,
/// dump and targets (the GPU targets first).
pub(super) struct Compilation<'a> {
    /// The kernel after the passes.
    pub(super) func: &'a Function,
    /// The specialization's label.
    pub(super) label: &'a str,
    /// What to compile for, and how.
    pub(super) options: &'a Options,
    /// Where its stages are dumped, if anywhere.
    pub(super) dump: &'a Dump,
    /// Its targets.
    pub(super) targets: &'a [Target],
}

impl Compilation<'_> {
    /// The thread-level programs the GPU targets among `missing` (indices
    /// into the targets) need, one per set of tensor cores, each dumped;
    /// with a dump, also the portable program (`thread.txt`), or when there
    /// is no GPU target at all, why the kernel cannot be lowered for one.
    pub(super) fn lower_missing(&self, missing: &[usize]) -> Result<Vec<Lowered>, PipelineError> {
        let (func, label, warps) = (self.func, self.label, self.options.num_warps);
        let mut programs: Vec<Lowered> = Vec::new();
        for target in missing.iter().map(|&i| self.targets[i]) {
            let cores = target.tensor_cores();
            if !target.is_gpu() || programs.iter().any(|(c, _, _)| *c == cores) {
                continue;
            }
            let program = lower_for(func, label, warps, cores)?;
            self.dump.text(&thread_file(cores), &program.to_string())?;
            let bytes = program
                .shared
                .iter()
                .map(|(_, a)| a.len * a.dtype.size_bytes())
                .sum();
            programs.push((cores, program, bytes));
        }
        let portable_target = self
            .targets
            .iter()
            .any(|t| t.is_gpu() && t.tensor_cores() == TensorCores::None);
        if !self.dump.is_on() || portable_target {
            return Ok(programs);
        }
        // `thread.txt` is always the portable program, even when every
        // target has tensor cores, and says why there is none when lowering
        // fails without GPU targets.
        let portable = if self.targets.iter().any(Target::is_gpu) {
            lower_for(func, label, warps, TensorCores::None)?.to_string()
        } else {
            match lower::lower(func, &LowerOptions::warps(warps)) {
                Ok(program) => program.to_string(),
                Err(e) => format!("the GPU lowering failed: {e}\n"),
            }
        };
        self.dump.text(&thread_file(TensorCores::None), &portable)?;
        Ok(programs)
    }

    /// Compiles the targets that `missing` indexes, from `programs`,
    /// concurrently, the slowest back ends first (so that they do not
    /// finish last alone); the results come back in the order of `missing`.
    pub(super) fn compile_missing(
        &self,
        missing: &[usize],
        programs: &[Lowered],
    ) -> Vec<(usize, Result<TargetOutput, PipelineError>)> {
        let mut order = missing.to_vec();
        order.sort_by_key(|&i| match self.targets[i] {
            Target::Amdgpu(_) => 0,
            Target::Host(_) => 1,
            Target::Nvptx(_) => 2,
        });
        let max_threads = self.options.max_threads.unwrap_or(NonZeroUsize::MAX);
        let built = parallel::run(order.len(), max_threads, |job| {
            let target = self.targets[order[job]];
            match target {
                Target::Host(isa) => self.compile_host(isa),
                _ => {
                    let lowered = programs
                        .iter()
                        .find(|(c, _, _)| *c == target.tensor_cores())
                        .expect("every GPU target that is compiled has its program");
                    self.compile_gpu(target, lowered)
                }
            }
        });
        let mut results: Vec<_> = order.into_iter().zip(built).collect();
        results.sort_by_key(|(i, _)| *i);
        results
    }

    /// A GPU target's output from its thread-level program, with the checks
    /// of its shared memory and registers.
    fn compile_gpu(
        &self,
        target: Target,
        (cores, program, bytes): &Lowered,
    ) -> Result<TargetOutput, PipelineError> {
        let (func, label) = (self.func, self.label);
        resources::check_shared_memory(&func.name, label, target, *bytes)?;
        let out = gpu::emit(program, target, &self.options.codegen).map_err(|error| {
            PipelineError::Gpu {
                kernel: func.name.clone(),
                label: label.to_string(),
                target,
                error: Box::new(error),
            }
        })?;
        let mut files: Vec<DumpFile> = Vec::new();
        if self.dump.is_on() {
            files.push((thread_file(*cores), program.to_string().into_bytes()));
            files.extend(dump::gpu_files(&out)?);
        }
        if let Target::Amdgpu(gfx) = target {
            resources::check_amdgpu_registers(&func.name, label, gfx, &out.assembly)?;
        }
        Ok(TargetOutput {
            bounds_checks: out.module.bounds_checks.clone(),
            image: gpu_image(out),
            shared_memory_bytes: *bytes,
            host_checks: Vec::new(),
            dumps: files,
        })
    }

    /// A host level's output.
    fn compile_host(&self, isa: HostIsa) -> Result<TargetOutput, PipelineError> {
        let image = host::compile(self.func, isa, &self.options.codegen).map_err(|error| {
            PipelineError::Host {
                kernel: self.func.name.clone(),
                label: self.label.to_string(),
                error: Box::new(error),
            }
        })?;
        let files = if self.dump.is_on() {
            dump::host_files(&image)?
        } else {
            Vec::new()
        };
        Ok(TargetOutput {
            image: Image {
                kind: ImageKind::Host,
                target: Target::Host(isa),
                bytes: image.shared_object().to_vec(),
            },
            shared_memory_bytes: 0,
            bounds_checks: Vec::new(),
            host_checks: image.checks().to_vec(),
            dumps: files,
        })
    }
}

/// The `TILE_DUMP` file of the thread-level program for `tensor_cores`:
/// `thread.txt` without, `thread.mma_sync.txt` with `mma.sync`.
fn thread_file(tensor_cores: TensorCores) -> String {
    match tensor_cores {
        TensorCores::None => "thread.txt".into(),
        TensorCores::MmaSync => "thread.mma_sync.txt".into(),
        TensorCores::Wmma => "thread.wmma.txt".into(),
    }
}

/// The image of a GPU target's output: PTX text or the linked code object.
pub(super) fn gpu_image(out: Emitted) -> Image {
    match out.code_object {
        Some(hsaco) => Image {
            kind: ImageKind::Hsaco,
            target: out.module.target,
            bytes: hsaco,
        },
        None => Image {
            kind: ImageKind::Ptx,
            target: out.module.target,
            bytes: out.assembly.into_bytes(),
        },
    }
}

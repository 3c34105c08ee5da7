//! One target's output of a specialization: the thread-level programs the
//! GPU targets share (lowered once per set of tensor cores and stages,
//! [`Programs`]), then each
//! target compiled on its own ([`Compilation::compile_missing`] runs them
//! concurrently, `parallel.rs`), with its resource checks and dump files.

use super::dump::{self, Dump};
use super::output::TargetOutput;
use super::registers::RegisterUsage;
use super::{parallel, resources, CompileError, CompiledImage, Options, Programs, TargetText};
use crate::gpu::{self, Emitted};
use crate::host;
use crate::target::Target;
use crate::tools::{self, Tool};
use std::num::NonZeroUsize;
use tile_abi::{HostIsa, ImageKind};
use tile_ir::Function;
use tile_thread::lower::{self, TensorCores};
use tile_thread::Program;

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
    /// The thread-level program of each GPU target among `missing`
    /// (indices into the targets; `None` for the others), lowered once per
    /// set of tensor cores and stages. With a dump, every GPU target's
    /// program is dumped (hits too: lowering costs little beside LLVM), and
    /// the portable one (`thread.txt`), or when there is no GPU target at
    /// all, why the kernel cannot be lowered for one.
    pub(super) fn lower_missing(
        &self,
        missing: &[usize],
    ) -> Result<Vec<Option<Program>>, CompileError> {
        let (func, label, options) = (self.func, self.label, self.options);
        let mut programs = Programs::default();
        if self.dump.is_on() {
            self.dump_programs(&mut programs)?;
        }
        let mut lowered = vec![None; self.targets.len()];
        for &i in missing {
            if self.targets[i].is_gpu() {
                let (program, _) = programs.for_target(func, label, options, self.targets[i])?;
                lowered[i] = Some(program);
            }
        }
        Ok(lowered)
    }

    /// Dumps the program of every GPU target, one file per set of tensor
    /// cores, stages and warps (a second stage count for the same cores, on
    /// a target with less shared memory, or a second warp count, on a
    /// target with warps of its own, gets a file of its own), and the
    /// portable program.
    fn dump_programs(&self, programs: &mut Programs) -> Result<(), CompileError> {
        let (func, label) = (self.func, self.label);
        let gpus: Vec<Target> = self
            .targets
            .iter()
            .copied()
            .filter(Target::is_gpu)
            .collect();
        let mut dumped: Vec<(TensorCores, u32, u32)> = Vec::new();
        for &target in &gpus {
            let (program, stages) = programs.for_target(func, label, self.options, target)?;
            let cores = super::shared_cores(func, target.tensor_cores());
            let key = (cores, stages, program.num_warps);
            if dumped.contains(&key) {
                continue;
            }
            let name = program_file(&dumped, key);
            self.dump.text(&name, &program.to_string())?;
            dumped.push(key);
        }
        if gpus.iter().any(|t| t.tensor_cores() == TensorCores::None) {
            return Ok(());
        }
        // A program that does not lower is reported in its file: the GPU
        // targets' own programs decide whether the kernel builds.
        let portable = match lower::lower(func, &self.options.lowering(None)) {
            Ok(program) => program.to_string(),
            Err(e) => format!("the GPU lowering failed: {e}\n"),
        };
        self.dump.text(&thread_file(TensorCores::None), &portable)
    }

    /// Compiles the targets that `missing` indexes, the GPU targets from
    /// their `programs`, concurrently, the slowest back ends first (so that
    /// they do not finish last alone); the results come back in the order of
    /// `missing`.
    pub(super) fn compile_missing(
        &self,
        missing: &[usize],
        programs: &[Option<Program>],
    ) -> Vec<(usize, Result<TargetOutput, CompileError>)> {
        let mut order = missing.to_vec();
        order.sort_by_key(|&i| match self.targets[i] {
            Target::Amdgpu(_) => 0,
            Target::Host(_) => 1,
            Target::Nvptx(_) => 2,
        });
        let max_threads = self.options.max_threads.unwrap_or(NonZeroUsize::MAX);
        let built = parallel::run(order.len(), max_threads, |job| {
            let i = order[job];
            match (self.targets[i], &programs[i]) {
                (Target::Host(isa), _) => self.compile_host(isa),
                (target, Some(program)) => self.compile_gpu(target, program),
                (target, None) => unreachable!("{target} is compiled without its program"),
            }
        });
        let mut results: Vec<_> = order.into_iter().zip(built).collect();
        results.sort_by_key(|(i, _)| *i);
        results
    }

    /// A GPU target's output from its thread-level program, with the checks
    /// of its shared memory and registers.
    fn compile_gpu(&self, target: Target, program: &Program) -> Result<TargetOutput, CompileError> {
        let (func, label) = (self.func, self.label);
        resources::check_shared_memory(&func.name, label, target, program)?;
        let bytes = gpu::shared_bytes(program);
        let out = gpu::emit(program, target, &self.options.codegen).map_err(|error| {
            CompileError::Gpu {
                kernel: func.name.clone(),
                label: label.to_string(),
                target,
                error: Box::new(error),
            }
        })?;
        let report = self.ptxas_report(target, &out.assembly);
        let files = if self.dump.is_on() {
            let report = report.clone().transpose().map_err(CompileError::Dump)?;
            dump::gpu_files(&out, report)?
        } else {
            Vec::new()
        };
        let registers = match target {
            Target::Amdgpu(gfx) => {
                resources::check_amdgpu_registers(&func.name, label, gfx, &out.assembly)?;
                RegisterUsage::from_amdgpu(target, &out.assembly)
            }
            _ if self.is_first_nvptx(target) => report
                .and_then(Result::ok)
                .and_then(|text| RegisterUsage::from_ptxas(target, &text)),
            _ => None,
        };
        let text = TargetText {
            target,
            thread_program: Some(program.to_string()),
            amdgpu_assembly: match target {
                Target::Amdgpu(_) => Some(out.assembly.clone()),
                _ => None,
            },
        };
        Ok(TargetOutput {
            bounds_checks: out.module.bounds_checks.clone(),
            image: gpu_image(out, bytes, program.block_threads()),
            text,
            host_checks: Vec::new(),
            dumps: files,
            registers,
        })
    }

    /// Whether `target` is the first `sm_*` of the specialization's
    /// targets: the one whose registers are measured (assembling the PTX of
    /// every `sm_*` would cost a `ptxas` run each; the others use within a
    /// few registers of it, docs/benchmarks.md).
    fn is_first_nvptx(&self, target: Target) -> bool {
        self.targets
            .iter()
            .find(|t| matches!(t, Target::Nvptx(_)))
            .is_some_and(|&first| first == target)
    }

    /// `ptxas -v`'s report on the PTX of the NVPTX `target`, when a dump or
    /// the register usage wants it and ptxas is installed.
    fn ptxas_report(&self, target: Target, ptx: &str) -> Option<Result<String, String>> {
        let Target::Nvptx(sm) = target else {
            return None;
        };
        let wanted = self.dump.is_on() || self.is_first_nvptx(target);
        if !wanted || Tool::Ptxas.find().is_err() {
            return None;
        }
        Some(tools::ptxas_resource_usage(ptx, sm).map_err(|e| e.to_string()))
    }

    /// A host level's output.
    fn compile_host(&self, isa: HostIsa) -> Result<TargetOutput, CompileError> {
        let image = host::compile(self.func, isa, &self.options.codegen).map_err(|error| {
            CompileError::Host {
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
            image: CompiledImage {
                kind: ImageKind::Host,
                target: Target::Host(isa),
                bytes: image.shared_object().to_vec(),
                shared_memory_bytes: 0,
                block_threads: 0,
            },
            text: TargetText {
                target: Target::Host(isa),
                thread_program: None,
                amdgpu_assembly: None,
            },
            bounds_checks: Vec::new(),
            host_checks: image.checks().to_vec(),
            dumps: files,
            registers: None,
        })
    }
}

/// The `TILE_DUMP` file of the thread-level program for `tensor_cores`:
/// `thread.txt` without, `thread.mma_sync.txt` with `mma.sync`
/// (`thread.mma_sync_fp8.txt` with its FP8 form, for FP8 `dot`s),
/// `thread.wgmma.txt` with Hopper's `wgmma`, `thread.wmma.txt`,
/// `thread.wmma12.txt`, `thread.mfma.txt` and `thread.mfma950.txt` with
/// AMD's instructions.
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
        TensorCores::MmaSyncFp8 => "mma_sync_fp8",
        TensorCores::MmaSyncScaled => "mma_sync_scaled",
        TensorCores::Wmma => "wmma",
        TensorCores::Wmma12 => "wmma12",
        TensorCores::Mfma => "mfma",
        TensorCores::Mfma950 => "mfma950",
        TensorCores::Wgmma => "wgmma",
        TensorCores::Tcgen05 => "tcgen05",
    }
}

/// The image of a GPU target's output, PTX text or the linked code
/// object, whose blocks need `shared_memory_bytes` and have `block_threads`
/// threads.
pub(super) fn gpu_image(
    out: Emitted,
    shared_memory_bytes: usize,
    block_threads: u32,
) -> CompiledImage {
    let target = out.module.target;
    match out.code_object {
        Some(hsaco) => CompiledImage {
            kind: ImageKind::Hsaco,
            target,
            bytes: hsaco,
            shared_memory_bytes,
            block_threads,
        },
        None => CompiledImage {
            kind: ImageKind::Ptx,
            target,
            bytes: out.assembly.into_bytes(),
            shared_memory_bytes,
            block_threads,
        },
    }
}

/// The dump file of the program lowered for `(cores, stages, warps)`, after
/// those `dumped`: `thread_file(cores)` for the first of its cores, else
/// that name with the stages and the warps that tell it apart.
fn program_file(
    dumped: &[(TensorCores, u32, u32)],
    (cores, stages, warps): (TensorCores, u32, u32),
) -> String {
    let same_cores: Vec<_> = dumped.iter().filter(|(c, _, _)| *c == cores).collect();
    if same_cores.is_empty() {
        return thread_file(cores);
    }
    let mut name = format!("thread.{}", cores_name(cores));
    if same_cores.iter().any(|&&(_, s, _)| s != stages) {
        name += &format!(".{stages}-stages");
    }
    if same_cores.iter().any(|&&(_, _, w)| w != warps) {
        name += &format!(".{warps}-warps");
    }
    name + ".txt"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_files_name_what_tells_them_apart() {
        let mma = TensorCores::MmaSync;
        assert_eq!(program_file(&[], (mma, 3, 4)), "thread.mma_sync.txt");
        let one = [(mma, 3, 4)];
        assert_eq!(
            program_file(&one, (mma, 2, 4)),
            "thread.mma_sync.2-stages.txt"
        );
        assert_eq!(
            program_file(&one, (mma, 3, 8)),
            "thread.mma_sync.8-warps.txt"
        );
        assert_eq!(
            program_file(&one, (mma, 2, 8)),
            "thread.mma_sync.2-stages.8-warps.txt"
        );
        assert_eq!(
            program_file(&one, (TensorCores::Mfma, 1, 8)),
            "thread.mfma.txt"
        );
    }
}

//! Device code at expansion time: each specialization lowered to the
//! thread-level program once, then emitted for every GPU target of the
//! kernel (PTX per `sm_*`, a linked HSACO per `gfx*`), and, for `host`,
//! compiled from the tile IR to a shared object per instruction-set level of
//! this architecture (`x86_64-v3` and `x86_64`, or `aarch64`). With
//! `TILE_DUMP` the stages are written next to the tile IR: `thread.txt`, and
//! per target `<target>.ll` (as emitted), `<target>.opt.ll` (after LLVM's
//! pipeline), `<target>.ptx` or `<target>.s` (for host code, the shared
//! object's disassembly), and `<target>.ptxas.txt` (the resource usage
//! `ptxas -v` reports, when ptxas is installed).

use crate::attr::KernelAttr;
use std::path::Path;
use std::str::FromStr;
use tile_abi::HostIsa;
use tile_codegen::emit::{emit, EmitOptions};
use tile_codegen::host;
use tile_codegen::tools;
use tile_codegen::Target;
use tile_ir::Function;
use tile_thread::lower::{lower, Options};

/// The format of a device image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageFormat {
    /// PTX text.
    Ptx,
    /// An AMDGPU code object.
    Hsaco,
    /// A shared object of host code.
    Host,
}

/// One compiled image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceImage {
    /// Its format.
    pub format: ImageFormat,
    /// The target name, e.g. `sm_80`.
    pub target: String,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// The device code of one specialization.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceCode {
    /// One image per GPU target.
    pub images: Vec<DeviceImage>,
    /// The tile-IR ops of the bounds checks, in program order.
    pub bounds_checks: Vec<String>,
    /// Shared memory per block, in bytes.
    pub shared_memory_bytes: usize,
    /// The host code's checks, in status-record order: the op and how many
    /// values its failures record.
    pub host_checks: Vec<(String, u8)>,
}

/// Compiles `f` (optimized tile IR) for `targets` (the specialization's, see
/// [`KernelAttr::targets_of`]): the GPU ones and, with `host`, host code.
/// Errors are messages for a compile error naming the specialization
/// `label`.
pub fn compile(
    f: &Function,
    label: &str,
    attr: &KernelAttr,
    targets: &[String],
    dump_dir: Option<&Path>,
) -> Result<DeviceCode, String> {
    let emit_options = EmitOptions {
        fast_math: attr.fast_math,
        ..EmitOptions::default()
    };
    let mut code = compile_gpu(f, label, attr.num_warps, targets, &emit_options, dump_dir)?;
    if targets.iter().any(|t| t == "host") {
        compile_host(f, label, &emit_options, dump_dir, &mut code)?;
    }
    Ok(code)
}

/// Adds the host images of `f`, one per instruction-set level of this
/// architecture, and their checks to `code`.
fn compile_host(
    f: &Function,
    label: &str,
    emit_options: &EmitOptions,
    dump_dir: Option<&Path>,
    code: &mut DeviceCode,
) -> Result<(), String> {
    let stage_dir = dump_dir.map(|d| d.join(&f.name).join(label));
    let error = |e: &dyn std::fmt::Display| {
        format!(
            "kernel `{}` ({label}) cannot be compiled for the host: {e}",
            f.name
        )
    };
    for isa in HostIsa::for_this_architecture() {
        let image = host::compile(f, isa, emit_options).map_err(|e| error(&e))?;
        if let Some(dir) = &stage_dir {
            write(&dir.join(format!("{isa}.ll")), image.llvm_ir())?;
            write(&dir.join(format!("{isa}.opt.ll")), image.llvm_ir_opt())?;
            let listing = tools::disassemble(image.shared_object()).map_err(|e| error(&e))?;
            write(&dir.join(format!("{isa}.s")), &listing)?;
        }
        code.host_checks = image
            .checks()
            .iter()
            .map(|c| (c.op.to_string(), c.values))
            .collect();
        code.images.push(DeviceImage {
            format: ImageFormat::Host,
            target: isa.name().to_string(),
            bytes: image.shared_object().to_vec(),
        });
    }
    Ok(())
}

/// The GPU part of [`compile`]: the thread-level program and an image per
/// GPU target.
fn compile_gpu(
    f: &Function,
    label: &str,
    num_warps: u32,
    targets: &[String],
    emit_options: &EmitOptions,
    dump_dir: Option<&Path>,
) -> Result<DeviceCode, String> {
    let stage_dir = dump_dir.map(|d| d.join(&f.name).join(label));
    let gpu: Vec<Target> = targets
        .iter()
        .filter_map(|t| Target::from_str(t).ok())
        .filter(|t| *t != Target::Host)
        .collect();
    if !gpu.is_empty() {
        check_registers(f, label, num_warps)?;
    }
    let program = match lower(f, &Options::warps(num_warps)) {
        Ok(p) => p,
        Err(e) if gpu.is_empty() => {
            if let Some(dir) = &stage_dir {
                write(
                    &dir.join("thread.txt"),
                    &format!("the GPU lowering failed: {e}\n"),
                )?;
            }
            return Ok(DeviceCode::default());
        }
        Err(e) => {
            return Err(format!(
                "kernel `{}` ({label}) cannot be lowered for a GPU: {e}",
                f.name
            ))
        }
    };
    if let Some(dir) = &stage_dir {
        write(&dir.join("thread.txt"), &program.to_string())?;
    }
    let mut code = DeviceCode {
        shared_memory_bytes: program
            .shared
            .iter()
            .map(|(_, a)| a.len * a.dtype.size_bytes())
            .sum(),
        ..DeviceCode::default()
    };
    for target in gpu {
        let out = emit(&program, target, emit_options).map_err(|e| {
            format!(
                "kernel `{}` ({label}) cannot be compiled for {target}: {e}",
                f.name
            )
        })?;
        if let Some(dir) = &stage_dir {
            write(&dir.join(format!("{target}.ll")), &out.llvm_ir)?;
            write(&dir.join(format!("{target}.opt.ll")), &out.llvm_ir_opt)?;
            match target {
                Target::Nvptx(sm) => {
                    write(&dir.join(format!("{target}.ptx")), &out.assembly)?;
                    if tools::Tool::Ptxas.find().is_ok() {
                        let usage = tools::ptxas_resource_usage(&out.assembly, sm)
                            .map_err(|e| format!("kernel `{}` ({label}): {e}", f.name))?;
                        write(&dir.join(format!("{target}.ptxas.txt")), &usage)?;
                    }
                }
                _ => write(&dir.join(format!("{target}.s")), &out.assembly)?,
            }
        }
        code.bounds_checks = out.bounds_checks;
        let (format, bytes) = match (target, out.code_object) {
            (Target::Amdgpu(_), Some(hsaco)) => (ImageFormat::Hsaco, hsaco),
            _ => (ImageFormat::Ptx, out.assembly.into_bytes()),
        };
        code.images.push(DeviceImage {
            format,
            target: target.to_string(),
            bytes,
        });
    }
    Ok(code)
}

/// The most tile elements one GPU thread may hold in registers for one
/// tile value (a GPU thread has at most 255 32-bit registers; beyond this
/// the code would live in local memory).
pub const MAX_ELEMENTS_PER_THREAD: usize = 1024;

/// An error unless every tile of `f` spreads over the block's threads with
/// at most [`MAX_ELEMENTS_PER_THREAD`] elements each.
fn check_registers(f: &Function, label: &str, num_warps: u32) -> Result<(), String> {
    let threads = 32 * num_warps as usize;
    let largest = f
        .values
        .iter()
        .filter_map(|(_, v)| v.ty.tile_shape().map(|s| s.numel()))
        .max()
        .unwrap_or(0);
    let per_thread = largest.div_ceil(threads);
    if per_thread > MAX_ELEMENTS_PER_THREAD {
        return Err(format!(
            "kernel `{}` ({label}) is too large for a GPU: a tile of {largest} elements gives each of the {threads} threads of a block {per_thread} elements, more than the {MAX_ELEMENTS_PER_THREAD} a thread can hold in registers; use smaller tiles, more warps (`num_warps`), or `targets = \"host\"`",
            f.name
        ));
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text)
        .map_err(|e| format!("TILE_DUMP: cannot write {}: {e}", path.display()))
}

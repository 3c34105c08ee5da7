//! The resources a block needs, checked against each target's limits when
//! the kernel is built, so a kernel that no device of the target could run
//! is a compile error rather than a failed launch.
//!
//! * Shared memory per block: on NVIDIA the most a block may opt in to
//!   (163 KiB on sm_80 and sm_87, 99 KiB on sm_86 and sm_89, 227 KiB on
//!   sm_90, 64 KiB on sm_75; above 48 KiB a kernel declares it dynamically
//!   and the runtime opts the function in, `tile_abi::image`), and 64 KiB of
//!   LDS on AMD.
//! * Registers per thread on AMD, from the code object's metadata: 512
//!   on CDNA (gfx90a, gfx942), whose `.vgpr_count` is the unified file's
//!   total (the AGPRs start at `.amdhsa_accum_offset`, inside it), 256
//!   VGPRs on RDNA 3.
//!   On NVIDIA, the kernel's `.reqntid` makes `ptxas` fit the registers to
//!   the block (spilling if it must), so a launch never lacks them.

use super::{registers, CompileError};
use crate::gpu;
use crate::target::{Gfx, Sm, Target};
use tile_thread::{Program, ThreadOpKind};

/// The shared memory one block may use on `target`, in bytes.
pub(super) fn shared_memory_limit(target: Target) -> usize {
    match target {
        Target::Nvptx(Sm::Sm75) => 64 * 1024,
        Target::Nvptx(Sm::Sm80 | Sm::Sm87) => 163 * 1024,
        Target::Nvptx(Sm::Sm86 | Sm::Sm89) => 99 * 1024,
        Target::Nvptx(Sm::Sm90 | Sm::Sm90a | Sm::Sm100a | Sm::Sm103a) => 227 * 1024,
        Target::Nvptx(Sm::Sm120a) => 99 * 1024,
        Target::Amdgpu(Gfx::Gfx950) => 160 * 1024,
        _ => 64 * 1024,
    }
}

/// An error unless the shared memory of `program`'s blocks fits `target`,
/// naming its largest buffers; fewer `num_stages` is advised only where a
/// pipeline's stages hold some of them.
pub(super) fn check_shared_memory(
    kernel: &str,
    label: &str,
    target: Target,
    program: &Program,
) -> Result<(), CompileError> {
    let (bytes, limit) = (gpu::shared_bytes(program), shared_memory_limit(target));
    if bytes <= limit {
        return Ok(());
    }
    let mut buffers: Vec<(usize, String)> = program
        .shared
        .iter()
        .map(|(id, a)| {
            let size = a.len * a.dtype.size_bytes();
            let over = match a.aliases {
                Some(root) => format!(", over the bytes of @s{}", root.index()),
                None => String::new(),
            };
            (
                size,
                format!(
                    "@s{} {}[{}] ({size} bytes{over})",
                    id.index(),
                    a.dtype,
                    a.len
                ),
            )
        })
        .collect();
    buffers.sort_by_key(|(size, _)| std::cmp::Reverse(*size));
    let largest: Vec<String> = buffers.into_iter().take(3).map(|(_, b)| b).collect();
    let pipelined = program.ops.iter().any(|(_, op)| {
        matches!(
            op.kind,
            ThreadOpKind::CopyAsync { .. } | ThreadOpKind::TmaLoad { .. }
        )
    });
    Err(CompileError::SharedMemory {
        kernel: kernel.to_string(),
        label: label.to_string(),
        target,
        bytes,
        limit,
        largest: largest.join(", "),
        advice: if pipelined {
            format!(
                "use smaller tiles or fewer `num_stages` (`num_stages({} = n)` sets its own)",
                target.attribute_name()
            )
        } else {
            "use smaller tiles".to_string()
        },
    })
}

/// An error unless the registers the AMDGPU code object's metadata (in
/// `assembly`) reports fit `gfx`.
pub(super) fn check_amdgpu_registers(
    kernel: &str,
    label: &str,
    gfx: Gfx,
    assembly: &str,
) -> Result<(), CompileError> {
    let registers = registers::metadata(assembly, ".vgpr_count").unwrap_or(0) as usize;
    let limit = match gfx {
        gfx if gfx.is_cdna() => 512,
        _ => 256,
    };
    if registers > limit {
        return Err(CompileError::Registers {
            kernel: kernel.to_string(),
            label: label.to_string(),
            target: Target::Amdgpu(gfx),
            registers,
            limit,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A program whose blocks need `bytes` (a multiple of 16) of shared
    /// memory: one f32 buffer of that size, and one of 16 bytes.
    fn needing(bytes: usize) -> Program {
        let mut program = Program::new("k", 4);
        program.alloc_shared(tile_ir::DType::F32, (bytes - 16) / 4);
        program.alloc_shared(tile_ir::DType::F16, 8);
        program
    }

    #[test]
    fn limits_name_the_amount_the_target_and_the_buffers() {
        let sm80 = Target::Nvptx(Sm::Sm80);
        assert!(check_shared_memory("k", "B=64", sm80, &needing(166_912)).is_ok());
        let error = check_shared_memory("k", "B=64", sm80, &needing(166_928)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "kernel `k` (B=64) needs 166928 bytes of shared memory per block, more than the 166912 of sm_80; the largest buffers (`TILE_DUMP`'s thread program shows their uses): @s0 f32[41728] (166912 bytes), @s1 f16[8] (16 bytes); use smaller tiles"
        );
        let sm86 = Target::Nvptx(Sm::Sm86);
        assert!(check_shared_memory("k", "B=64", sm86, &needing(101_376)).is_ok());
        assert!(check_shared_memory("k", "B=64", sm86, &needing(101_392)).is_err());
        let gfx = Target::Amdgpu(Gfx::Gfx942);
        assert!(check_shared_memory("k", "B=64", gfx, &needing(65_536)).is_ok());
        assert!(check_shared_memory("k", "B=64", gfx, &needing(65_552)).is_err());
        // CDNA's `.vgpr_count` counts the AGPRs already (here 256 + 204).
        let metadata = "  - .agpr_count:     204\n    .vgpr_count:     460\n";
        assert!(check_amdgpu_registers("k", "B=64", Gfx::Gfx90a, metadata).is_ok());
        assert!(check_amdgpu_registers("k", "B=64", Gfx::Gfx1100, metadata).is_err());
        let full = "  - .vgpr_count:     524\n";
        let error = check_amdgpu_registers("k", "B=64", Gfx::Gfx942, full).unwrap_err();
        assert_eq!(
            error.to_string(),
            "kernel `k` (B=64) needs 524 registers per thread, more than the 512 of gfx942"
        );
    }
}

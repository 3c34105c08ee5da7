//! What a GPU image uses of a thread's registers, and what it spills to
//! memory, as its own tools report it: `ptxas -v` for NVIDIA (which is where
//! PTX gets its registers; the driver's JIT does the same), the code
//! object's metadata for AMD (`.vgpr_count`, `.vgpr_spill_count`,
//! `.sgpr_spill_count`). The macro turns them into warnings
//! (`tile-frontend`); nothing here refuses a kernel (`resources.rs` does,
//! for what a device could not run).

use crate::target::Target;
use std::fmt;

/// The registers of one GPU image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterUsage {
    /// The image's target.
    pub target: Target,
    /// Registers per thread: ptxas's count on NVIDIA, the VGPRs on AMD
    /// (AGPRs included on CDNA, whose register file is unified).
    pub registers: u32,
    /// What spills.
    pub spills: Spills,
}

/// What a GPU image spills to memory, in its vendor's terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spills {
    /// NVIDIA: the bytes of spill stores and loads per thread.
    Bytes {
        /// Bytes stored.
        stores: u32,
        /// Bytes loaded.
        loads: u32,
    },
    /// AMD: the registers spilled.
    Registers {
        /// Vector registers spilled to scratch memory.
        vgprs: u32,
        /// Scalar registers spilled (to VGPR lanes or scratch).
        sgprs: u32,
    },
}

impl RegisterUsage {
    /// Whether registers spill to memory: on NVIDIA any spill store or
    /// load, on AMD a spilled VGPR (SGPRs spill to lanes of VGPRs first, at
    /// the cost of a lane write and read, so their count alone is no memory
    /// traffic).
    pub fn spills(&self) -> bool {
        match self.spills {
            Spills::Bytes { stores, loads } => stores + loads > 0,
            Spills::Registers { vgprs, .. } => vgprs > 0,
        }
    }

    /// The usage `ptxas -v`'s report `text` gives for the one kernel it
    /// assembled (`Used 255 registers`, `968 bytes stack frame, 1084 bytes
    /// spill stores, 1060 bytes spill loads`), if it gives one.
    pub(super) fn from_ptxas(target: Target, text: &str) -> Option<RegisterUsage> {
        // From the `Used N registers` line: notes before it may say
        // "registers" too (sm_90a's `wgmma.wait_group is injected ... to
        // allow use of registers defined by GMMA`).
        let used = &text[text.find("Used ")?..];
        let registers = number_before(used, " registers")?;
        Some(RegisterUsage {
            target,
            registers,
            spills: Spills::Bytes {
                stores: number_before(text, " bytes spill stores")?,
                loads: number_before(text, " bytes spill loads")?,
            },
        })
    }

    /// The usage an AMDGPU code object's metadata (in its `assembly`)
    /// gives.
    pub(super) fn from_amdgpu(target: Target, assembly: &str) -> Option<RegisterUsage> {
        Some(RegisterUsage {
            target,
            registers: metadata(assembly, ".vgpr_count")?,
            spills: Spills::Registers {
                vgprs: metadata(assembly, ".vgpr_spill_count")?,
                sgprs: metadata(assembly, ".sgpr_spill_count")?,
            },
        })
    }
}

/// `sm_80: 255 registers per thread, 1084 bytes of spill stores and 1060
/// of spill loads`; `gfx942: 512 VGPRs per thread, 66 VGPRs and 36 SGPRs
/// spilled`.
impl fmt::Display for RegisterUsage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.spills {
            Spills::Bytes { stores, loads } => write!(
                f,
                "{}: {} registers per thread, {stores} bytes of spill stores and {loads} of spill loads",
                self.target, self.registers
            ),
            Spills::Registers { vgprs, sgprs } => write!(
                f,
                "{}: {} VGPRs per thread, {vgprs} VGPRs and {sgprs} SGPRs spilled",
                self.target, self.registers
            ),
        }
    }
}

/// The number that ends right before the first `suffix` in `text`.
fn number_before(text: &str, suffix: &str) -> Option<u32> {
    let before = &text[..text.find(suffix)?];
    let digits = before.rsplit(|c: char| !c.is_ascii_digit()).next()?;
    digits.parse().ok()
}

/// The value of the metadata key `key` (a YAML key, which may open its
/// list item: `  - .vgpr_count: 460`).
pub(super) fn metadata(assembly: &str, key: &str) -> Option<u32> {
    assembly.lines().find_map(|line| {
        let value = line.trim().trim_start_matches("- ").strip_prefix(key)?;
        value.strip_prefix(':')?.trim().parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::{Gfx, Sm};

    #[test]
    fn ptxas_reports_are_read() {
        // What ptxas 13 printed for the attention_f16 example on sm_80.
        let text = "ptxas info    : 0 bytes gmem\nptxas info    : Compiling entry function 'attention_f16' for 'sm_80'\nptxas info    : Function properties for attention_f16\n    968 bytes stack frame, 1084 bytes spill stores, 1060 bytes spill loads\nptxas info    : Used 255 registers, used 1 barriers, 968 bytes cumulative stack size, 40992 bytes smem, 496 bytes cmem[0], 144 bytes cmem[2]\n";
        let sm80 = Target::Nvptx(Sm::Sm80);
        let usage = RegisterUsage::from_ptxas(sm80, text).unwrap();
        assert_eq!(usage.registers, 255);
        assert!(usage.spills());
        assert_eq!(
            usage.to_string(),
            "sm_80: 255 registers per thread, 1084 bytes of spill stores and 1060 of spill loads"
        );
        let clean = "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\nptxas info    : Used 40 registers, used 0 barriers, 380 bytes cmem[0]\n";
        let usage = RegisterUsage::from_ptxas(sm80, clean).unwrap();
        assert_eq!((usage.registers, usage.spills()), (40, false));
        assert_eq!(
            RegisterUsage::from_ptxas(sm80, "ptxas info : 0 bytes gmem"),
            None
        );
        // What ptxas 13.5 printed for the corpus's FlashAttention kernel on
        // sm_90a: its notes on wgmma come first.
        let wgmma = "ptxas info    : (C7517) wgmma.wait_group is injected in around line 5021 by compiler to allow use of registers defined by GMMA in function 'flash_attn_fwd'\nptxas info    : 0 bytes gmem\nptxas info    : Compiling entry function 'flash_attn_fwd' for 'sm_90a'\nptxas info    : Function properties for flash_attn_fwd\n    4720 bytes stack frame, 4716 bytes spill stores, 5380 bytes spill loads\nptxas info    : Used 255 registers, used 1 barriers, 4720 bytes cumulative stack size, 464 bytes cmem[0]\n";
        let usage = RegisterUsage::from_ptxas(Target::Nvptx(Sm::Sm90a), wgmma).unwrap();
        assert_eq!((usage.registers, usage.spills()), (255, true));
    }

    #[test]
    fn amdgpu_metadata_is_read() {
        // From the attention_f16 example's gfx942 code object.
        let assembly = "amdhsa.kernels:\n  - .agpr_count:     256\n    .private_segment_fixed_size: 264\n    .sgpr_count:     106\n    .sgpr_spill_count: 36\n    .vgpr_count:     512\n    .vgpr_spill_count: 66\n";
        let gfx = Target::Amdgpu(Gfx::Gfx942);
        let usage = RegisterUsage::from_amdgpu(gfx, assembly).unwrap();
        assert_eq!(usage.registers, 512);
        assert!(usage.spills());
        assert_eq!(
            usage.to_string(),
            "gfx942: 512 VGPRs per thread, 66 VGPRs and 36 SGPRs spilled"
        );
        let clean = "  - .sgpr_spill_count: 0\n    .vgpr_count:     40\n    .vgpr_spill_count: 0\n";
        let usage = RegisterUsage::from_amdgpu(gfx, clean).unwrap();
        assert_eq!((usage.registers, usage.spills()), (40, false));
        // SGPRs spilled to VGPR lanes (the attention example on gfx942).
        let lanes =
            "  - .sgpr_spill_count: 16\n    .vgpr_count:     168\n    .vgpr_spill_count: 0\n";
        assert!(!RegisterUsage::from_amdgpu(gfx, lanes).unwrap().spills());
        assert_eq!(RegisterUsage::from_amdgpu(gfx, "  .vgpr_count: 40\n"), None);
    }
}

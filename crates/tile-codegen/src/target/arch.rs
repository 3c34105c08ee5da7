//! The GPU architectures the targets name: NVIDIA's `sm_*` ([`Sm`]) and
//! AMD's `gfx*` ([`Gfx`]), with what the code generator asks of each.

use std::fmt;

/// An NVIDIA GPU architecture (`sm_*`) that LLVM 22's NVPTX backend and `ptxas` both accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sm {
    /// Turing (`sm_75`).
    Sm75,
    /// Ampere A100 (`sm_80`).
    Sm80,
    /// Ampere GA10x (`sm_86`).
    Sm86,
    /// Ampere Orin (`sm_87`).
    Sm87,
    /// Ada Lovelace (`sm_89`).
    Sm89,
    /// Hopper (`sm_90`).
    Sm90,
    /// Hopper with the architecture-specific features (`sm_90a`: wgmma, setmaxnreg, …).
    Sm90a,
    /// Blackwell B200/GB200 with the architecture-specific features
    /// (`sm_100a`: `tcgen05.mma` and tensor memory).
    Sm100a,
    /// Blackwell Ultra B300/GB300 (`sm_103a`).
    Sm103a,
    /// Blackwell consumer and workstation parts, RTX 50 and RTX PRO
    /// (`sm_120a`: `mma.sync` with block-scaled forms and the TMA, no
    /// tcgen05).
    Sm120a,
}

impl Sm {
    /// Every supported architecture, oldest first.
    pub const ALL: [Sm; 10] = [
        Sm::Sm75,
        Sm::Sm80,
        Sm::Sm86,
        Sm::Sm87,
        Sm::Sm89,
        Sm::Sm90,
        Sm::Sm90a,
        Sm::Sm100a,
        Sm::Sm103a,
        Sm::Sm120a,
    ];

    /// The name used by LLVM and `ptxas`, e.g. `"sm_90a"`.
    pub fn name(self) -> &'static str {
        match self {
            Sm::Sm75 => "sm_75",
            Sm::Sm80 => "sm_80",
            Sm::Sm86 => "sm_86",
            Sm::Sm87 => "sm_87",
            Sm::Sm89 => "sm_89",
            Sm::Sm90 => "sm_90",
            Sm::Sm90a => "sm_90a",
            Sm::Sm100a => "sm_100a",
            Sm::Sm103a => "sm_103a",
            Sm::Sm120a => "sm_120a",
        }
    }

    /// The compute capability as a number, e.g. `90` for both `sm_90` and `sm_90a`.
    pub fn number(self) -> u32 {
        match self {
            Sm::Sm75 => 75,
            Sm::Sm80 => 80,
            Sm::Sm86 => 86,
            Sm::Sm87 => 87,
            Sm::Sm89 => 89,
            Sm::Sm90 | Sm::Sm90a => 90,
            Sm::Sm100a => 100,
            Sm::Sm103a => 103,
            Sm::Sm120a => 120,
        }
    }

    /// The oldest PTX ISA version that supports this architecture, times ten (`78` is PTX 7.8).
    ///
    /// This is what the target asks LLVM to emit (`.version` in the PTX): the oldest version
    /// keeps the PTX loadable by the widest range of drivers. LLVM 22 accepts PTX 3.2 to 9.0.
    pub fn ptx_version(self) -> u32 {
        match self {
            Sm::Sm75 => 63,
            Sm::Sm80 => 70,
            Sm::Sm86 => 71,
            Sm::Sm87 => 74,
            Sm::Sm89 | Sm::Sm90 => 78,
            Sm::Sm90a => 80,
            Sm::Sm100a => 86,
            Sm::Sm120a => 87,
            Sm::Sm103a => 88,
        }
    }
}

impl fmt::Display for Sm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An AMD GPU architecture (`gfx*`) that LLVM 22's AMDGPU backend accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Gfx {
    /// CDNA 2: MI200 series (`gfx90a`).
    Gfx90a,
    /// CDNA 3: MI300 series (`gfx942`).
    Gfx942,
    /// CDNA 4: MI350 series (`gfx950`; 160 KiB of LDS).
    Gfx950,
    /// RDNA 3: RX 7900 series (`gfx1100`).
    Gfx1100,
    /// RDNA 4: RX 9060 series (`gfx1200`).
    Gfx1200,
    /// RDNA 4: RX 9070 series and Radeon AI PRO R9700 (`gfx1201`).
    Gfx1201,
    /// CDNA 3 and 4 in one code object, MI300 and MI350 series
    /// (`gfx9-4-generic`: gfx942's instructions but FP8, BF8 and XF32,
    /// none of which tile's code uses; gfx942's 64 KiB of LDS).
    Gfx94Generic,
    /// RDNA 3 and 3.5 in one code object, RX 7000 series and Ryzen AI
    /// (`gfx11-generic`: gfx1100 to gfx1103 and gfx1150 to gfx1153).
    Gfx11Generic,
    /// RDNA 4 in one code object, RX 9060 and 9070 series
    /// (`gfx12-generic`: gfx1200 and gfx1201).
    Gfx12Generic,
}

impl Gfx {
    /// Every supported architecture.
    pub const ALL: [Gfx; 9] = [
        Gfx::Gfx90a,
        Gfx::Gfx942,
        Gfx::Gfx950,
        Gfx::Gfx1100,
        Gfx::Gfx1200,
        Gfx::Gfx1201,
        Gfx::Gfx94Generic,
        Gfx::Gfx11Generic,
        Gfx::Gfx12Generic,
    ];

    /// The name used by LLVM and ROCm, e.g. `"gfx942"`.
    pub fn name(self) -> &'static str {
        match self {
            Gfx::Gfx90a => "gfx90a",
            Gfx::Gfx942 => "gfx942",
            Gfx::Gfx950 => "gfx950",
            Gfx::Gfx1100 => "gfx1100",
            Gfx::Gfx1200 => "gfx1200",
            Gfx::Gfx1201 => "gfx1201",
            Gfx::Gfx94Generic => "gfx9-4-generic",
            Gfx::Gfx11Generic => "gfx11-generic",
            Gfx::Gfx12Generic => "gfx12-generic",
        }
    }

    /// Whether this is a generic processor, whose one code object runs on
    /// every member of its family (`tile_abi::amd_generic`).
    pub fn is_generic(self) -> bool {
        tile_abi::amd_generic::is_generic(self.name())
    }

    /// Whether this is an RDNA 3 part (wave32, WMMA).
    pub fn is_rdna3(self) -> bool {
        matches!(self, Gfx::Gfx1100 | Gfx::Gfx11Generic)
    }

    /// Whether this is an RDNA 4 part (wave32, gfx12's WMMA).
    pub fn is_rdna4(self) -> bool {
        matches!(self, Gfx::Gfx1200 | Gfx::Gfx1201 | Gfx::Gfx12Generic)
    }

    /// Whether this is a CDNA part (wave64, MFMA).
    pub fn is_cdna(self) -> bool {
        matches!(
            self,
            Gfx::Gfx90a | Gfx::Gfx942 | Gfx::Gfx950 | Gfx::Gfx94Generic
        )
    }

    /// The lanes of a wavefront: 64 on CDNA, 32 on RDNA.
    pub fn wave_lanes(self) -> u32 {
        if self.is_cdna() {
            64
        } else {
            32
        }
    }
}

impl fmt::Display for Gfx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

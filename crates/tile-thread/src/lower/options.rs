//! The options of one specialization's lowering: warps, bounds checks,
//! the shared-memory swizzle, the tensor-core instructions a target offers,
//! software-pipeline stages, the TMA and the order of float sums.

/// LowerOptions of one specialization.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LowerOptions {
    /// Warps per block (a power of two); a block has `32 * num_warps` threads.
    pub num_warps: u32,
    /// Whether unmasked loads and stores that are not proven in bounds get a
    /// `bounds_check` (private: only [`LowerOptions::without_bounds_checks`],
    /// which is `unsafe`, turns it off).
    bounds_checks: bool,
    /// Whether shared-memory stagings read across rows (layout conversions,
    /// `permute`) are XOR-swizzled against bank conflicts (true by default;
    /// false to measure what the swizzle saves).
    pub swizzle_shared: bool,
    /// The tensor-core instructions `dot`s of precision `tensor` may use.
    pub tensor_cores: TensorCores,
    /// The stages of a loop's software pipeline: a loop whose tensor-core
    /// `dot`s load their operands by its induction variable copies them
    /// `num_stages − 1` iterations ahead (`lower/software_pipeline.rs`); 1 copies
    /// each iteration's operands in that iteration.
    pub num_stages: u32,
    /// Whether a pipelined loop's tensor-core operands are copied by the
    /// TMA (`lower/tma.rs`) rather than `cp.async`, which only a target with
    /// the TMA (sm_90 and later) may ask: the program then needs a tensor
    /// map for each tensor so copied, which the runtime can build only for
    /// some tensors (`tile_abi::tma`).
    pub tma: bool,
    /// Whether float `reduce sum`s may combine their elements in any order
    /// and grouping (`fast_math`): then they run as trees (in thread,
    /// shuffles, across warps; `lower/reduce_tree.rs`) instead of the
    /// interpreter's left-to-right fold, within the bound of
    /// docs/semantics.md §6.
    pub reassociate_sums: bool,
}

/// The tensor-core instructions a target offers the lowering.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TensorCores {
    /// None: every `dot` is a chain of fused multiply-adds.
    #[default]
    None,
    /// PTX `mma.sync.aligned.m16n8k16` on `f16` and `bf16`, and
    /// `m16n8k8` on TF32 (sm_80 and later).
    MmaSync,
    /// [`MmaSync`](Self::MmaSync) and its FP8 form, `m16n8k32` on `e4m3`
    /// and `e5m2` (sm_89 and later).
    MmaSyncFp8,
    /// [`MmaSyncFp8`](Self::MmaSyncFp8) and its block-scaled form,
    /// `m16n8k32.kind::mxf8f6f4.block_scale` with E8M0 scales, which runs
    /// the `dot_scaled`s of E4M3, E5M2, E2M3, E3M2 or E2M1 operands, one
    /// format on both sides (sm_120a).
    MmaSyncScaled,
    /// RDNA3's `v_wmma_f32_16x16x16` on `f16` and `bf16` in wave32 (gfx11).
    Wmma,
    /// RDNA4's `v_wmma_f32_16x16x16` on `f16`, `bf16` and OCP FP8 in
    /// wave32 (gfx12), with operands that are not replicated.
    Wmma12,
    /// CDNA's `v_mfma_f32_32x32x8` and `v_mfma_f32_16x16x16` on `f16` and
    /// `bf16` in wave64 (gfx90a, gfx942): a wave is two of the program's
    /// warps.
    Mfma,
    /// [`Mfma`](Self::Mfma) and CDNA 4's forms of twice the `K`,
    /// `v_mfma_f32_32x32x16` and `v_mfma_f32_16x16x32` on `f16`, `bf16`
    /// and OCP FP8 (gfx950), which the lowering prefers, and its
    /// block-scaled `v_mfma_scale_f32_{32x32x64,16x16x128}_f8f6f4`, which
    /// run `dot_scaled`s.
    Mfma950,
    /// Hopper's `wgmma.mma_async.m64n64k16` on `f16` and `bf16` from shared
    /// memory (sm_90a), for the dots whose tiles it fits; `mma.sync` (with
    /// its FP8 form) for the others.
    Wgmma,
    /// Blackwell's `tcgen05.mma` on `f16` and `bf16` from shared memory
    /// into tensor memory (sm_100a, sm_103a), for the dots whose tiles it
    /// fits; `mma.sync` (with its FP8 form) for the others.
    Tcgen05,
}

impl TensorCores {
    /// The instruction set, if any.
    pub fn family(self) -> Option<tile_hw::mma::MmaFamily> {
        use tile_hw::mma::MmaFamily;
        match self {
            TensorCores::None => None,
            TensorCores::MmaSync | TensorCores::MmaSyncFp8 | TensorCores::MmaSyncScaled => {
                Some(MmaFamily::MmaSync)
            }
            TensorCores::Wmma => Some(MmaFamily::Wmma),
            TensorCores::Wmma12 => Some(MmaFamily::Wmma12),
            TensorCores::Mfma | TensorCores::Mfma950 => Some(MmaFamily::Mfma),
            TensorCores::Wgmma | TensorCores::Tcgen05 => Some(MmaFamily::MmaSync),
        }
    }

    /// Whether the target offers the instruction `kind`: one of its
    /// family's, FP8 only with [`fp8`](Self::fp8), CDNA 4's only on gfx950,
    /// a block-scaled one only with [`block_scaled`](Self::block_scaled).
    pub fn offers(self, kind: tile_hw::mma::MmaKind) -> bool {
        self.family() == Some(kind.family())
            && (!kind.is_fp8() || self.fp8())
            && (!kind.is_cdna4() || self == TensorCores::Mfma950)
            && (!kind.is_block_scaled() || self.block_scaled())
    }

    /// Whether the tensor cores have block-scaled forms (E8M0 scales on
    /// E4M3 or E5M2 operands, and on sm_120a FP6 and FP4 ones), which run
    /// `dot_scaled`s: sm_120a's `mma.sync` and gfx950's MFMA.
    pub fn block_scaled(self) -> bool {
        matches!(self, TensorCores::MmaSyncScaled | TensorCores::Mfma950)
    }

    /// Whether the tensor cores have FP8 forms of the formats `tile`'s
    /// `f8e4m3` and `f8e5m2` are (OCP's): `mma.sync`'s (sm_89 and later),
    /// RDNA 4's WMMA and CDNA 4's MFMA (gfx942's MFMA takes FNUZ, another
    /// format).
    pub fn fp8(self) -> bool {
        matches!(
            self,
            TensorCores::MmaSyncFp8
                | TensorCores::MmaSyncScaled
                | TensorCores::Wgmma
                | TensorCores::Tcgen05
                | TensorCores::Wmma12
                | TensorCores::Mfma950
        )
    }

    /// The lanes of the target's hardware wave: 64 on CDNA (MFMA), where a
    /// wave is two of the program's warps and a shuffle may span both
    /// (`Shuffle` of width 64), else 32.
    pub fn wave_lanes(self) -> u32 {
        match self {
            TensorCores::Mfma | TensorCores::Mfma950 => crate::program::WAVE64,
            _ => crate::program::WARP_SIZE,
        }
    }

    /// The lanes a shuffle may span in a block of `num_warps` warps: the
    /// hardware wave's ([`Self::wave_lanes`]) where the warps pair into
    /// such waves, else a warp's.
    pub fn shuffle_span(self, num_warps: u32) -> u32 {
        let wave = self.wave_lanes();
        match (num_warps * crate::program::WARP_SIZE).is_multiple_of(wave) {
            true => wave,
            false => crate::program::WARP_SIZE,
        }
    }

    /// Whether a masked element load is one instruction under a predicate
    /// (NVIDIA's `ld.global`), not a branch around the load (AMD's loads
    /// take no predicate).
    pub fn predicated_loads(self) -> bool {
        !matches!(
            self,
            TensorCores::Mfma | TensorCores::Mfma950 | TensorCores::Wmma | TensorCores::Wmma12
        )
    }

    /// Whether the target has `cp.async` (and so pipelines the copies of
    /// tensor-core operands): the NVIDIA ones.
    pub fn cp_async(self) -> bool {
        matches!(
            self,
            TensorCores::MmaSync
                | TensorCores::MmaSyncFp8
                | TensorCores::MmaSyncScaled
                | TensorCores::Wgmma
                | TensorCores::Tcgen05
        )
    }
}

impl LowerOptions {
    /// Safe options for `num_warps` warps.
    pub fn warps(num_warps: u32) -> LowerOptions {
        LowerOptions {
            num_warps,
            bounds_checks: true,
            swizzle_shared: true,
            tensor_cores: TensorCores::None,
            num_stages: 1,
            tma: false,
            reassociate_sums: false,
        }
    }

    /// These options with float sums reassociated (as trees), or not.
    pub fn with_reassociated_sums(self, reassociate_sums: bool) -> LowerOptions {
        LowerOptions {
            reassociate_sums,
            ..self
        }
    }

    /// These options with the TMA copying pipelined tensor-core operands,
    /// or not.
    pub fn with_tma(self, tma: bool) -> LowerOptions {
        LowerOptions { tma, ..self }
    }

    /// These options with `num_stages` stages for pipelined loops (at
    /// least 1).
    pub fn with_stages(self, num_stages: u32) -> LowerOptions {
        LowerOptions {
            num_stages: num_stages.max(1),
            ..self
        }
    }

    /// These options with the tensor cores of a target.
    pub fn with_tensor_cores(self, tensor_cores: TensorCores) -> LowerOptions {
        LowerOptions {
            tensor_cores,
            ..self
        }
    }

    /// These options with the swizzle of shared-memory stagings on or off.
    pub fn with_swizzle_shared(self, swizzle_shared: bool) -> LowerOptions {
        LowerOptions {
            swizzle_shared,
            ..self
        }
    }

    /// These options without the bounds checks of unmasked accesses that are
    /// not proven in bounds (the `unsafe` mode; proven accesses never carry
    /// a check and masked ones stay masked).
    ///
    /// # Safety
    ///
    /// A program lowered with these options reads and writes wherever its
    /// unmasked accesses point: launching it is undefined behaviour unless
    /// the caller guarantees that every unmasked load and store lies inside
    /// its tensor, and every partition view's window has offsets and
    /// extents of at least 0, for the shapes, arguments and grid of that
    /// launch.
    pub unsafe fn without_bounds_checks(self) -> LowerOptions {
        LowerOptions {
            bounds_checks: false,
            ..self
        }
    }

    /// Whether unproven unmasked accesses are checked (true unless built by
    /// [`LowerOptions::without_bounds_checks`]).
    pub fn checks_bounds(&self) -> bool {
        self.bounds_checks
    }
}

impl Default for LowerOptions {
    fn default() -> Self {
        LowerOptions::warps(4)
    }
}

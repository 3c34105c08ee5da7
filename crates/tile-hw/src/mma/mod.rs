//! Tensor-core instructions as every emulator models them: the lane layouts
//! of the instruction-set manuals, and one arithmetic for a step.
//!
//! The layouts are those of the PTX ISA ("Matrix Fragments for
//! `mma.m16n8k16` with floating point type"), written here from the manual's
//! formulas and not from the compiler's lowering, so that a lowering that
//! puts an element in the wrong register computes a wrong product in the
//! emulators. With `g = lane / 4` and `t = lane % 4`:
//!
//! | fragment | elements per lane | element `i` of lane `l` |
//! |---|---|---|
//! | A, 16×16 | 8 (4 × `b32`) | row `g + 8·((i/2) % 2)`, column `2t + i%2 + 8·(i/4)` |
//! | B, 16×8 | 4 (2 × `b32`) | row (k) `2t + i%2 + 8·(i/2)`, column `g` |
//! | C and D, 16×8 | 4 × `f32` | row `g + 8·(i/2)`, column `2t + i%2` |
//!
//! Two 16-bit elements share a `b32` register, element `2j` in the low half
//! of register `j`.
//!
//! `mma.m16n8k8` with `.tf32` operands (PTX ISA, "Matrix Fragments for
//! `mma.m16n8k8`"): one 32-bit element per register; the instruction reads
//! a TF32 value from each, its low 13 bits ignored (the lowering rounds each
//! operand with `cvt.rna.tf32.f32` first):
//!
//! | fragment | elements per lane | element `i` of lane `l` |
//! |---|---|---|
//! | A, 16×8 | 4 × `b32` | row `g + 8·(i%2)`, column `t + 4·(i/2)` |
//! | B, 8×8 | 2 × `b32` | row (k) `t + 4·i`, column `g` |
//! | C and D, 16×8 | 4 × `f32` | as for `m16n8k16` |
//!
//! `mma.m16n8k32` with `.e4m3` or `.e5m2` operands (PTX ISA, "Matrix
//! Fragments for `mma.m16n8k32`"; sm_89 and later, PTX 8.4): four 8-bit
//! elements per register, element `4j` in the low byte of register `j`:
//!
//! | fragment | elements per lane | element `i` of lane `l` |
//! |---|---|---|
//! | A, 16×32 | 16 (4 × `b32`) | row `g + 8·((i/4) % 2)`, column `4t + i%4 + 16·(i/8)` |
//! | B, 32×8 | 8 (2 × `b32`) | row (k) `4t + i%4 + 16·(i/4)`, column `g` |
//! | C and D, 16×8 | 4 × `f32` | as for `m16n8k16` |
//!
//! RDNA 3's WMMA in wave32 (`v_wmma_f32_16x16x16_{f16,bf16}`, the layouts
//! of AMD's matrix instruction calculator): A and B are held twice, lanes
//! `16..32` repeating lanes `0..16` (the instruction requires it; a warp
//! that breaks it is an error here):
//!
//! | fragment | elements per lane | element `i` of lane `l` |
//! |---|---|---|
//! | A, 16×16 | 16 | row `l % 16`, column `i` |
//! | B, 16×16 | 16 | row (k) `i`, column `l % 16` |
//! | C and D, 16×16 | 8 × `f32` | row `2i + l / 16`, column `l % 16` |
//!
//! RDNA 4's WMMA in wave32 (`v_wmma_f32_16x16x16_{f16,bf16}` on gfx1200 and
//! gfx1201; AMD's matrix instruction calculator, `-a gfx1200`): no
//! replication, each lane holding 8 `k` of one row of A and of one column
//! of B, in two runs of 4 that the two half-waves interleave:
//!
//! | fragment | elements per lane | element `i` of lane `l` |
//! |---|---|---|
//! | A, 16×16 | 8 | row `l % 16`, column `i%4 + 4·(l/16) + 8·(i/4)` |
//! | B, 16×16 | 8 | row (k) `i%4 + 4·(l/16) + 8·(i/4)`, column `l % 16` |
//! | C and D, 16×16 | 8 × `f32` | row `8·(l/16) + i`, column `l % 16` |
//!
//! Its FP8 forms (`v_wmma_f32_16x16x16_{fp8_fp8,bf8_bf8}`, OCP E4M3 and
//! E5M2, 8 bytes a lane in two registers) hold 8 consecutive `k` instead:
//! A's element `i` is row `l % 16`, column `i + 8·(l/16)`; B's row (k)
//! `i + 8·(l/16)`, column `l % 16`; D as above.
//!
//! CDNA's MFMA in wave64 (`v_mfma_f32_32x32x8{f16,bf16_1k}` and
//! `v_mfma_f32_16x16x16{f16,bf16_1k}` on gfx90a, the `_f16`/`_bf16` forms
//! on gfx942; AMD's matrix instruction calculator): 64 lanes, each holding
//! 4 consecutive `k` of one row of A and of one column of B, and a column of
//! D:
//!
//! | instruction | fragment | elements per lane | element `i` of lane `l` |
//! |---|---|---|---|
//! | 32×32×8 | A, 32×8 | 4 | row `l % 32`, column `4·(l/32) + i` |
//! | 32×32×8 | B, 8×32 | 4 | row (k) `4·(l/32) + i`, column `l % 32` |
//! | 32×32×8 | C and D, 32×32 | 16 × `f32` | row `8·(i/4) + 4·(l/32) + i%4`, column `l % 32` |
//! | 16×16×16 | A, 16×16 | 4 | row `l % 16`, column `4·(l/16) + i` |
//! | 16×16×16 | B, 16×16 | 4 | row (k) `4·(l/16) + i`, column `l % 16` |
//! | 16×16×16 | C and D, 16×16 | 4 × `f32` | row `4·(l/16) + i`, column `l % 16` |
//!
//! CDNA 4 (gfx950) adds forms of twice the `K` at twice the rate
//! (`v_mfma_f32_32x32x16_{f16,bf16}`, `v_mfma_f32_16x16x32_{f16,bf16}`;
//! LLVM's `SIInstrInfo.td` and AMD's CDNA 4 ISA reference): each lane holds
//! 8 consecutive `k`, D as in the CDNA 3 form of its block:
//!
//! | instruction | fragment | elements per lane | element `i` of lane `l` |
//! |---|---|---|---|
//! | 32×32×16 | A, 32×16 | 8 | row `l % 32`, column `8·(l/32) + i` |
//! | 32×32×16 | B, 16×32 | 8 | row (k) `8·(l/32) + i`, column `l % 32` |
//! | 16×16×32 | A, 16×32 | 8 | row `l % 16`, column `8·(l/16) + i` |
//! | 16×16×32 | B, 32×16 | 8 | row (k) `8·(l/16) + i`, column `l % 16` |
//!
//! Its FP8 forms of the same shapes (`v_mfma_f32_{32x32x16,16x16x32}_{fp8_fp8,
//! bf8_bf8}`, OCP E4M3 and E5M2 on gfx950; 8 bytes a lane in two
//! registers) have the same layouts.
//!
//! **Block scales.** The block-scaled `m16n8k32` forms (PTX
//! `mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X`
//! with `.ue8m0` scales, sm_120a) take the FP8 fragments above, and from
//! each lane a 32-bit register of A scales and one of B scales with
//! immediate selectors `byte-id` and `thread-id`, which tile always sets
//! to 0: the scale is the register's low byte, and lanes `4g` and `4g + 2`
//! supply row `g`'s scale of A, lanes `4g + 1` and `4g + 3` row `g + 8`'s,
//! and every lane of quad `g` column `g`'s scale of B (CuTe's
//! `SFALayout ((2,2,8),V):((8,0,1),16)` and `SFBLayout ((4,8),V):((0,1),8)`,
//! as CUTLASS issues the instruction). A scale `s` stands for `2^(s − 127)`,
//! `0xFF` for NaN. The lanes holding one scale must agree. The same
//! instruction names FP6 (`.e2m3`, `.e3m2`) and FP4 (`.e2m1`) operands,
//! one value a byte in the same fragments: FP6 in bits 5..0 of its byte,
//! FP4 in bits 5..2 (CUTLASS shifts the nibbles `ldmatrix … b4x16_p64`
//! leaves in bits 3..0 left by two for it); [`MmaKind::container`] says
//! how, and the emulators read each value there.
//!
//! CDNA 4's block-scaled MFMA (`v_mfma_scale_f32_{32x32x64,16x16x128}_f8f6f4`
//! with OCP E4M3 or E5M2 operands, gfx950; the operand layouts of the
//! ROCm blog's kernels and Triton's `ScaledBlockedToScaledMFMAF8F6F4`, not
//! checked against AMD's calculator): lane `l` holds 32 bytes of row `l %
//! s` of A (`s` the block's side, 32 or 16), `k = 16·(l / s) + i % 16 +
//! (K / 2)·(i / 16)`, two runs of 16; B mirrors it, column `l % s`; D as
//! in the unscaled form of the block. Each lane supplies one scale, the low
//! byte of its register (`op_sel` 0): row `l % s`'s (column `l % s`'s) for
//! the group of 32 `k` numbered `l / s`.
//!
//! **Arithmetic.** The tile IR's `dot` with precision `tensor` lets a
//! device sum a step's products in any order within a bound
//! (`tile_ir::DotPrecision`). The emulators pick one exact order so that
//! they agree with each other bit for bit: each element of D is `c`
//! followed by the step's `K` products in ascending `k`, summed in `f64`
//! (the products of 16-bit floats and of TF32 values are exact there) and
//! rounded once to `f32`; a NaN result is the canonical `f32` NaN. (The
//! products of FP8 values are exact in `f64` too.) A block-scaled step
//! multiplies each product by its row's and its column's scale factors,
//! exactly (powers of two from `2^-254` to `2^254` in `f64`), before the
//! sum.

mod layouts;
mod scaled;
mod warp;

pub use warp::{operand_value, scaled_step_sum, step_sum, warp_mma, warp_mma_scaled};

/// A warp-wide matrix multiply-accumulate instruction the targets use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u64)]
pub enum MmaKind {
    /// `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`.
    F16M16N8K16 = 1,
    /// `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`.
    Bf16M16N8K16 = 2,
    /// `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`: `f32`
    /// operands read as TF32 (precision `tf32`).
    Tf32M16N8K8 = 9,
    /// `mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32` (sm_89 and
    /// later).
    E4m3M16N8K32 = 10,
    /// `mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32` (sm_89 and
    /// later).
    E5m2M16N8K32 = 11,
    /// RDNA3's `v_wmma_f32_16x16x16_f16` in wave32.
    WmmaF16M16N16K16 = 3,
    /// RDNA3's `v_wmma_f32_16x16x16_bf16` in wave32.
    WmmaBf16M16N16K16 = 4,
    /// RDNA 4's `v_wmma_f32_16x16x16_f16` in wave32 (gfx12).
    Wmma12F16M16N16K16 = 12,
    /// RDNA 4's `v_wmma_f32_16x16x16_bf16` in wave32 (gfx12).
    Wmma12Bf16M16N16K16 = 13,
    /// CDNA's `v_mfma_f32_32x32x8f16` in wave64.
    MfmaF16M32N32K8 = 5,
    /// CDNA's `v_mfma_f32_32x32x8bf16_1k` in wave64.
    MfmaBf16M32N32K8 = 6,
    /// CDNA's `v_mfma_f32_16x16x16f16` in wave64.
    MfmaF16M16N16K16 = 7,
    /// CDNA's `v_mfma_f32_16x16x16bf16_1k` in wave64.
    MfmaBf16M16N16K16 = 8,
    /// CDNA 4's `v_mfma_f32_32x32x16_f16` in wave64 (gfx950).
    MfmaF16M32N32K16 = 14,
    /// CDNA 4's `v_mfma_f32_32x32x16_bf16` in wave64 (gfx950).
    MfmaBf16M32N32K16 = 15,
    /// CDNA 4's `v_mfma_f32_16x16x32_f16` in wave64 (gfx950).
    MfmaF16M16N16K32 = 16,
    /// CDNA 4's `v_mfma_f32_16x16x32_bf16` in wave64 (gfx950).
    MfmaBf16M16N16K32 = 17,
    /// RDNA 4's `v_wmma_f32_16x16x16_fp8_fp8` in wave32 (gfx12; OCP E4M3).
    Wmma12E4m3M16N16K16 = 18,
    /// RDNA 4's `v_wmma_f32_16x16x16_bf8_bf8` in wave32 (gfx12; OCP E5M2).
    Wmma12E5m2M16N16K16 = 19,
    /// CDNA 4's `v_mfma_f32_32x32x16_fp8_fp8` in wave64 (gfx950, where the
    /// format is OCP E4M3; gfx942's is FNUZ, another format).
    MfmaE4m3M32N32K16 = 20,
    /// CDNA 4's `v_mfma_f32_32x32x16_bf8_bf8` (OCP E5M2, gfx950).
    MfmaE5m2M32N32K16 = 21,
    /// CDNA 4's `v_mfma_f32_16x16x32_fp8_fp8` (OCP E4M3, gfx950).
    MfmaE4m3M16N16K32 = 22,
    /// CDNA 4's `v_mfma_f32_16x16x32_bf8_bf8` (OCP E5M2, gfx950).
    MfmaE5m2M16N16K32 = 23,
    /// `mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e4m3.f32.ue8m0`
    /// (sm_120a): [`E4m3M16N8K32`](Self::E4m3M16N8K32) with one E8M0
    /// scale per row of A and per column of B (module docs, "Block
    /// scales").
    E4m3Ue8m0M16N8K32 = 24,
    /// The block-scaled form of [`E5m2M16N8K32`](Self::E5m2M16N8K32)
    /// (sm_120a).
    E5m2Ue8m0M16N8K32 = 25,
    /// CDNA 4's `v_mfma_scale_f32_32x32x64_f8f6f4` on OCP E4M3 (`cbsz` =
    /// `blgp` = 0) with E8M0 scales (gfx950; module docs, "Block scales").
    /// Its code is one below its E5M2 form's, as the format codes are.
    MfmaE4m3Ue8m0M32N32K64 = 26,
    /// The same on OCP E5M2 (`cbsz` = `blgp` = 1).
    MfmaE5m2Ue8m0M32N32K64 = 27,
    /// CDNA 4's `v_mfma_scale_f32_16x16x128_f8f6f4` on OCP E4M3.
    MfmaE4m3Ue8m0M16N16K128 = 28,
    /// The same on OCP E5M2.
    MfmaE5m2Ue8m0M16N16K128 = 29,
    /// `mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e2m3.e2m3.f32.ue8m0`
    /// (sm_120a): FP6 E2M3 operands, one a byte (module docs, "Block
    /// scales").
    E2m3Ue8m0M16N8K32 = 30,
    /// The same on FP6 E3M2.
    E3m2Ue8m0M16N8K32 = 31,
    /// The same on FP4 E2M1, each value in bits 5..2 of its byte.
    E2m1Ue8m0M16N8K32 = 32,
}

/// The instruction sets of [`MmaKind`]s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmaFamily {
    /// NVIDIA's `mma.sync` (sm_80 and later).
    MmaSync,
    /// AMD RDNA3's WMMA (gfx11, wave32).
    Wmma,
    /// AMD RDNA4's WMMA (gfx12, wave32), whose operands are not replicated.
    Wmma12,
    /// AMD CDNA's MFMA (gfx90a, gfx942; wave64).
    Mfma,
}

impl MmaFamily {
    /// The lanes that issue one instruction together: a warp of 32, or
    /// MFMA's wave of 64.
    pub fn lanes(self) -> usize {
        match self {
            MmaFamily::MmaSync | MmaFamily::Wmma | MmaFamily::Wmma12 => 32,
            MmaFamily::Mfma => 64,
        }
    }
}

/// Which operand of an instruction a fragment belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fragment {
    /// The `M × K` left operand.
    A,
    /// The `K × N` right operand.
    B,
    /// The `M × N` accumulator (and result).
    C,
}

impl MmaKind {
    /// Every instruction, each family's in the order the lowering prefers
    /// them (MFMA: CDNA 4's double-`K` forms first, then 32×32 blocks
    /// before 16×16 ones).
    pub const ALL: [MmaKind; 32] = [
        MmaKind::F16M16N8K16,
        MmaKind::Bf16M16N8K16,
        MmaKind::Tf32M16N8K8,
        MmaKind::E4m3M16N8K32,
        MmaKind::E5m2M16N8K32,
        MmaKind::E4m3Ue8m0M16N8K32,
        MmaKind::E5m2Ue8m0M16N8K32,
        MmaKind::E2m3Ue8m0M16N8K32,
        MmaKind::E3m2Ue8m0M16N8K32,
        MmaKind::E2m1Ue8m0M16N8K32,
        MmaKind::WmmaF16M16N16K16,
        MmaKind::WmmaBf16M16N16K16,
        MmaKind::Wmma12F16M16N16K16,
        MmaKind::Wmma12Bf16M16N16K16,
        MmaKind::Wmma12E4m3M16N16K16,
        MmaKind::Wmma12E5m2M16N16K16,
        MmaKind::MfmaE4m3M32N32K16,
        MmaKind::MfmaE5m2M32N32K16,
        MmaKind::MfmaE4m3M16N16K32,
        MmaKind::MfmaE5m2M16N16K32,
        MmaKind::MfmaE4m3Ue8m0M32N32K64,
        MmaKind::MfmaE5m2Ue8m0M32N32K64,
        MmaKind::MfmaE4m3Ue8m0M16N16K128,
        MmaKind::MfmaE5m2Ue8m0M16N16K128,
        MmaKind::MfmaF16M32N32K16,
        MmaKind::MfmaBf16M32N32K16,
        MmaKind::MfmaF16M16N16K32,
        MmaKind::MfmaBf16M16N16K32,
        MmaKind::MfmaF16M32N32K8,
        MmaKind::MfmaBf16M32N32K8,
        MmaKind::MfmaF16M16N16K16,
        MmaKind::MfmaBf16M16N16K16,
    ];

    /// The instruction set.
    pub fn family(self) -> MmaFamily {
        match self {
            MmaKind::F16M16N8K16
            | MmaKind::Bf16M16N8K16
            | MmaKind::Tf32M16N8K8
            | MmaKind::E4m3M16N8K32
            | MmaKind::E5m2M16N8K32
            | MmaKind::E4m3Ue8m0M16N8K32
            | MmaKind::E5m2Ue8m0M16N8K32
            | MmaKind::E2m3Ue8m0M16N8K32
            | MmaKind::E3m2Ue8m0M16N8K32
            | MmaKind::E2m1Ue8m0M16N8K32 => MmaFamily::MmaSync,
            MmaKind::WmmaF16M16N16K16 | MmaKind::WmmaBf16M16N16K16 => MmaFamily::Wmma,
            MmaKind::Wmma12F16M16N16K16
            | MmaKind::Wmma12Bf16M16N16K16
            | MmaKind::Wmma12E4m3M16N16K16
            | MmaKind::Wmma12E5m2M16N16K16 => MmaFamily::Wmma12,
            MmaKind::MfmaF16M32N32K8
            | MmaKind::MfmaBf16M32N32K8
            | MmaKind::MfmaF16M16N16K16
            | MmaKind::MfmaBf16M16N16K16
            | MmaKind::MfmaF16M32N32K16
            | MmaKind::MfmaBf16M32N32K16
            | MmaKind::MfmaF16M16N16K32
            | MmaKind::MfmaBf16M16N16K32
            | MmaKind::MfmaE4m3M32N32K16
            | MmaKind::MfmaE5m2M32N32K16
            | MmaKind::MfmaE4m3M16N16K32
            | MmaKind::MfmaE5m2M16N16K32
            | MmaKind::MfmaE4m3Ue8m0M32N32K64
            | MmaKind::MfmaE5m2Ue8m0M32N32K64
            | MmaKind::MfmaE4m3Ue8m0M16N16K128
            | MmaKind::MfmaE5m2Ue8m0M16N16K128 => MmaFamily::Mfma,
        }
    }

    /// Whether the instruction is CDNA 4's own (gfx950), not CDNA 3's: the
    /// MFMA shapes of twice CDNA 3's `K`, and the block-scaled ones.
    pub fn is_cdna4(self) -> bool {
        self.family() == MmaFamily::Mfma
            && matches!(
                self.shape(),
                (32, 32, 16) | (16, 16, 32) | (32, 32, 64) | (16, 16, 128)
            )
    }

    /// The lanes that issue the instruction together (its family's).
    pub fn lanes(self) -> usize {
        self.family().lanes()
    }

    /// The instruction encoded as `code`.
    pub fn from_u64(code: u64) -> Option<MmaKind> {
        MmaKind::ALL.into_iter().find(|k| *k as u64 == code)
    }

    /// The dtype of the A and B elements.
    pub fn operand_dtype(self) -> tile_ir::DType {
        match self {
            MmaKind::F16M16N8K16
            | MmaKind::WmmaF16M16N16K16
            | MmaKind::Wmma12F16M16N16K16
            | MmaKind::MfmaF16M32N32K8
            | MmaKind::MfmaF16M16N16K16
            | MmaKind::MfmaF16M32N32K16
            | MmaKind::MfmaF16M16N16K32 => tile_ir::DType::F16,
            MmaKind::Bf16M16N8K16
            | MmaKind::WmmaBf16M16N16K16
            | MmaKind::Wmma12Bf16M16N16K16
            | MmaKind::MfmaBf16M32N32K8
            | MmaKind::MfmaBf16M16N16K16
            | MmaKind::MfmaBf16M32N32K16
            | MmaKind::MfmaBf16M16N16K32 => tile_ir::DType::BF16,
            MmaKind::Tf32M16N8K8 => tile_ir::DType::F32,
            MmaKind::E4m3M16N8K32
            | MmaKind::E4m3Ue8m0M16N8K32
            | MmaKind::Wmma12E4m3M16N16K16
            | MmaKind::MfmaE4m3M32N32K16
            | MmaKind::MfmaE4m3M16N16K32
            | MmaKind::MfmaE4m3Ue8m0M32N32K64
            | MmaKind::MfmaE4m3Ue8m0M16N16K128 => tile_ir::DType::F8E4M3,
            MmaKind::E5m2M16N8K32
            | MmaKind::E5m2Ue8m0M16N8K32
            | MmaKind::Wmma12E5m2M16N16K16
            | MmaKind::MfmaE5m2M32N32K16
            | MmaKind::MfmaE5m2M16N16K32
            | MmaKind::MfmaE5m2Ue8m0M32N32K64
            | MmaKind::MfmaE5m2Ue8m0M16N16K128 => tile_ir::DType::F8E5M2,
            MmaKind::E2m3Ue8m0M16N8K32 => tile_ir::DType::F6E2M3,
            MmaKind::E3m2Ue8m0M16N8K32 => tile_ir::DType::F6E3M2,
            MmaKind::E2m1Ue8m0M16N8K32 => tile_ir::DType::F4E2M1,
        }
    }

    /// Whether the instruction takes one-byte operands, four to a
    /// register: FP8, or FP6 and FP4 in byte containers (and so needs
    /// sm_89 or later, and PTX 8.4).
    pub fn is_fp8(self) -> bool {
        self.operand_dtype().size_bytes() == 1
    }

    /// The `dot` precision whose products the instruction computes:
    /// `tf32` for the TF32 instruction, `tensor` for the others.
    pub fn precision(self) -> tile_ir::DotPrecision {
        match self {
            MmaKind::Tf32M16N8K8 => tile_ir::DotPrecision::Tf32,
            _ => tile_ir::DotPrecision::Tensor,
        }
    }

    /// The instructions of `family` for a `dot` of `precision` on operands
    /// of `dtype`, in the order the lowering prefers them (none of them
    /// block-scaled).
    pub fn for_dot(
        family: MmaFamily,
        precision: tile_ir::DotPrecision,
        dtype: tile_ir::DType,
    ) -> impl Iterator<Item = MmaKind> {
        MmaKind::ALL.into_iter().filter(move |k| {
            k.family() == family
                && k.operand_dtype() == dtype
                && k.precision() == precision
                && !k.is_block_scaled()
        })
    }

    /// The operand elements one 32-bit register holds: four FP8 ones, two
    /// 16-bit ones, or one TF32.
    pub fn per_register(self) -> usize {
        4 / self.operand_dtype().size_bytes()
    }

    /// The operands' type in the instruction's name: `f16`, `bf16`, `tf32`,
    /// `e4m3`, `e5m2`, `e2m3`, `e3m2`, `e2m1`.
    pub fn operand_name(self) -> String {
        match (self, self.operand_dtype()) {
            (MmaKind::Tf32M16N8K8, _) => "tf32".into(),
            (_, tile_ir::DType::F8E4M3) => "e4m3".into(),
            (_, tile_ir::DType::F8E5M2) => "e5m2".into(),
            (_, tile_ir::DType::F6E2M3) => "e2m3".into(),
            (_, tile_ir::DType::F6E3M2) => "e3m2".into(),
            (_, tile_ir::DType::F4E2M1) => "e2m1".into(),
            (_, dtype) => dtype.to_string(),
        }
    }

    /// The instruction's name in thread-level programs: `m16n8k16.f16`,
    /// `m16n8k8.tf32`, `m16n8k32.e4m3`, `m16n8k32.e4m3.ue8m0`,
    /// `wmma16x16x16.f16`, `mfma32x32x8.bf16`, `mfma32x32x64.e4m3.ue8m0`,
    /// `wmma12.16x16x16.f16`.
    pub fn name(self) -> String {
        let (m, n, k) = self.shape();
        let mut operands = self.operand_name();
        if self.is_block_scaled() {
            operands.push_str(".ue8m0");
        }
        match self.family() {
            MmaFamily::MmaSync => format!("m{m}n{n}k{k}.{operands}"),
            MmaFamily::Wmma => format!("wmma{m}x{n}x{k}.{operands}"),
            MmaFamily::Wmma12 => format!("wmma12.{m}x{n}x{k}.{operands}"),
            MmaFamily::Mfma => format!("mfma{m}x{n}x{k}.{operands}"),
        }
    }

    /// The instruction's `(M, N, K)`.
    pub fn shape(self) -> (usize, usize, usize) {
        match self {
            MmaKind::F16M16N8K16 | MmaKind::Bf16M16N8K16 => (16, 8, 16),
            MmaKind::Tf32M16N8K8 => (16, 8, 8),
            MmaKind::E4m3M16N8K32
            | MmaKind::E5m2M16N8K32
            | MmaKind::E4m3Ue8m0M16N8K32
            | MmaKind::E5m2Ue8m0M16N8K32
            | MmaKind::E2m3Ue8m0M16N8K32
            | MmaKind::E3m2Ue8m0M16N8K32
            | MmaKind::E2m1Ue8m0M16N8K32 => (16, 8, 32),
            MmaKind::MfmaF16M32N32K8 | MmaKind::MfmaBf16M32N32K8 => (32, 32, 8),
            MmaKind::MfmaF16M32N32K16
            | MmaKind::MfmaBf16M32N32K16
            | MmaKind::MfmaE4m3M32N32K16
            | MmaKind::MfmaE5m2M32N32K16 => (32, 32, 16),
            MmaKind::MfmaF16M16N16K32
            | MmaKind::MfmaBf16M16N16K32
            | MmaKind::MfmaE4m3M16N16K32
            | MmaKind::MfmaE5m2M16N16K32 => (16, 16, 32),
            MmaKind::MfmaE4m3Ue8m0M32N32K64 | MmaKind::MfmaE5m2Ue8m0M32N32K64 => (32, 32, 64),
            MmaKind::MfmaE4m3Ue8m0M16N16K128 | MmaKind::MfmaE5m2Ue8m0M16N16K128 => (16, 16, 128),
            MmaKind::WmmaF16M16N16K16
            | MmaKind::WmmaBf16M16N16K16
            | MmaKind::Wmma12F16M16N16K16
            | MmaKind::Wmma12Bf16M16N16K16
            | MmaKind::Wmma12E4m3M16N16K16
            | MmaKind::Wmma12E5m2M16N16K16
            | MmaKind::MfmaF16M16N16K16
            | MmaKind::MfmaBf16M16N16K16 => (16, 16, 16),
        }
    }

    /// The elements per lane of a fragment.
    pub fn elements(self, fragment: Fragment) -> usize {
        let (m, n, k) = self.shape();
        match (self.family(), fragment) {
            // The fragments over the warp's 32 lanes.
            (MmaFamily::MmaSync, Fragment::A) => m * k / 32,
            (MmaFamily::MmaSync, Fragment::B) => k * n / 32,
            (MmaFamily::MmaSync, Fragment::C) => m * n / 32,
            (MmaFamily::Wmma, Fragment::A | Fragment::B) => 16,
            (MmaFamily::Wmma, Fragment::C) => 8,
            (MmaFamily::Wmma12, _) => 8,
            // The blocks over the wave's 64 lanes: A and B 4 (CDNA 3) or 8
            // (CDNA 4), C 16 or 4.
            (MmaFamily::Mfma, Fragment::A) => m * k / 64,
            (MmaFamily::Mfma, Fragment::B) => k * n / 64,
            (MmaFamily::Mfma, Fragment::C) => m * n / 64,
        }
    }

    /// The 32-bit registers a lane passes: its A and B elements
    /// ([`per_register`](Self::per_register) to a register), then its C
    /// elements, then (block-scaled) its scale for A and its scale for B.
    pub fn words(self) -> usize {
        self.c_word() + self.elements(Fragment::C) + 2 * usize::from(self.is_block_scaled())
    }

    /// The first of a lane's [`words`](Self::words) that holds C (and
    /// receives D).
    pub fn c_word(self) -> usize {
        (self.elements(Fragment::A) + self.elements(Fragment::B)) / self.per_register()
    }

    /// The bits of each operand element in `regs`, 32-bit registers of A or
    /// B: the low half (byte) first for 16-bit (8-bit) elements.
    pub fn unpack(self, regs: &[u32]) -> Vec<u32> {
        let per = self.per_register();
        let bits = 32 / per as u32;
        let mask = u32::MAX >> (32 - bits);
        regs.iter()
            .flat_map(|&r| (0..per as u32).map(move |j| (r >> (j * bits)) & mask))
            .collect()
    }

    /// `c + a · b` for row-major `a` (`M × K`), `b` (`K × N`) and `c` (`M ×
    /// N`), with the arithmetic of the module docs.
    pub fn step(self, a: &[f32], b: &[f32], c: &[f32]) -> Vec<f32> {
        let (m, n, k) = self.shape();
        let mut d = Vec::with_capacity(m * n);
        for row in 0..m {
            for col in 0..n {
                let products = (0..k).map(|kk| (a[row * k + kk], b[kk * n + col]));
                d.push(step_sum(c[row * n + col], products));
            }
        }
        d
    }

    /// The value the instruction reads from an operand element with bits
    /// `bits` (a 16-bit or 8-bit float in the low bits, FP6 and FP4 in
    /// their [`container`](Self::container)'s bits, or a TF32 value: an
    /// `f32` whose low 13 bits are not read).
    pub fn operand_value(self, bits: u32) -> f32 {
        let bits = match self.container() {
            Some((mask, shift)) => (bits >> shift) & mask & 0xFF,
            None => bits,
        };
        operand_value(self.operand_dtype(), bits)
    }
}

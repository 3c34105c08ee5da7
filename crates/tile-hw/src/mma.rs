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
//! **Arithmetic.** The tile IR's `dot` with precision `tensor` lets a
//! device sum a step's products in any order within a bound
//! (`tile_ir::DotPrecision`). The emulators pick one exact order so that
//! they agree with each other bit for bit: each element of D is `c`
//! followed by the step's `K` products in ascending `k`, summed in `f64`
//! (the products of 16-bit floats and of TF32 values are exact there) and
//! rounded once to `f32`; a NaN result is the canonical `f32` NaN. (The
//! products of FP8 values are exact in `f64` too.)

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
    /// CDNA's `v_mfma_f32_32x32x8f16` in wave64.
    MfmaF16M32N32K8 = 5,
    /// CDNA's `v_mfma_f32_32x32x8bf16_1k` in wave64.
    MfmaBf16M32N32K8 = 6,
    /// CDNA's `v_mfma_f32_16x16x16f16` in wave64.
    MfmaF16M16N16K16 = 7,
    /// CDNA's `v_mfma_f32_16x16x16bf16_1k` in wave64.
    MfmaBf16M16N16K16 = 8,
}

/// The instruction sets of [`MmaKind`]s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmaFamily {
    /// NVIDIA's `mma.sync` (sm_80 and later).
    MmaSync,
    /// AMD RDNA3's WMMA (gfx11, wave32).
    Wmma,
    /// AMD CDNA's MFMA (gfx90a, gfx942; wave64).
    Mfma,
}

impl MmaFamily {
    /// The lanes that issue one instruction together: a warp of 32, or
    /// MFMA's wave of 64.
    pub fn lanes(self) -> usize {
        match self {
            MmaFamily::MmaSync | MmaFamily::Wmma => 32,
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
    /// them (MFMA's 32×32 blocks before its 16×16 ones).
    pub const ALL: [MmaKind; 11] = [
        MmaKind::F16M16N8K16,
        MmaKind::Bf16M16N8K16,
        MmaKind::Tf32M16N8K8,
        MmaKind::E4m3M16N8K32,
        MmaKind::E5m2M16N8K32,
        MmaKind::WmmaF16M16N16K16,
        MmaKind::WmmaBf16M16N16K16,
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
            | MmaKind::E5m2M16N8K32 => MmaFamily::MmaSync,
            MmaKind::WmmaF16M16N16K16 | MmaKind::WmmaBf16M16N16K16 => MmaFamily::Wmma,
            MmaKind::MfmaF16M32N32K8
            | MmaKind::MfmaBf16M32N32K8
            | MmaKind::MfmaF16M16N16K16
            | MmaKind::MfmaBf16M16N16K16 => MmaFamily::Mfma,
        }
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
            | MmaKind::MfmaF16M32N32K8
            | MmaKind::MfmaF16M16N16K16 => tile_ir::DType::F16,
            MmaKind::Bf16M16N8K16
            | MmaKind::WmmaBf16M16N16K16
            | MmaKind::MfmaBf16M32N32K8
            | MmaKind::MfmaBf16M16N16K16 => tile_ir::DType::BF16,
            MmaKind::Tf32M16N8K8 => tile_ir::DType::F32,
            MmaKind::E4m3M16N8K32 => tile_ir::DType::F8E4M3,
            MmaKind::E5m2M16N8K32 => tile_ir::DType::F8E5M2,
        }
    }

    /// Whether the instruction takes FP8 operands (and so needs sm_89 or
    /// later, and PTX 8.4).
    pub fn is_fp8(self) -> bool {
        self.operand_dtype().is_f8()
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
    /// of `dtype`, in the order the lowering prefers them.
    pub fn for_dot(
        family: MmaFamily,
        precision: tile_ir::DotPrecision,
        dtype: tile_ir::DType,
    ) -> impl Iterator<Item = MmaKind> {
        MmaKind::ALL.into_iter().filter(move |k| {
            k.family() == family && k.operand_dtype() == dtype && k.precision() == precision
        })
    }

    /// The operand elements one 32-bit register holds: four FP8 ones, two
    /// 16-bit ones, or one TF32.
    pub fn per_register(self) -> usize {
        4 / self.operand_dtype().size_bytes()
    }

    /// The operands' type in the instruction's name: `f16`, `bf16`, `tf32`,
    /// `e4m3`, `e5m2`.
    pub fn operand_name(self) -> String {
        match self {
            MmaKind::Tf32M16N8K8 => "tf32".into(),
            MmaKind::E4m3M16N8K32 => "e4m3".into(),
            MmaKind::E5m2M16N8K32 => "e5m2".into(),
            _ => self.operand_dtype().to_string(),
        }
    }

    /// The instruction's name in thread-level programs: `m16n8k16.f16`,
    /// `m16n8k8.tf32`, `m16n8k32.e4m3`, `wmma16x16x16.f16`,
    /// `mfma32x32x8.bf16`.
    pub fn name(self) -> String {
        let (m, n, k) = self.shape();
        let operands = self.operand_name();
        match self.family() {
            MmaFamily::MmaSync => format!("m{m}n{n}k{k}.{operands}"),
            MmaFamily::Wmma => format!("wmma{m}x{n}x{k}.{operands}"),
            MmaFamily::Mfma => format!("mfma{m}x{n}x{k}.{operands}"),
        }
    }

    /// The instruction's `(M, N, K)`.
    pub fn shape(self) -> (usize, usize, usize) {
        match self {
            MmaKind::F16M16N8K16 | MmaKind::Bf16M16N8K16 => (16, 8, 16),
            MmaKind::Tf32M16N8K8 => (16, 8, 8),
            MmaKind::E4m3M16N8K32 | MmaKind::E5m2M16N8K32 => (16, 8, 32),
            MmaKind::MfmaF16M32N32K8 | MmaKind::MfmaBf16M32N32K8 => (32, 32, 8),
            MmaKind::WmmaF16M16N16K16
            | MmaKind::WmmaBf16M16N16K16
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
            (MmaFamily::Mfma, Fragment::A | Fragment::B) => 4,
            // The M×N block over the wave's 64 lanes: 16 or 4.
            (MmaFamily::Mfma, Fragment::C) => m * n / 64,
        }
    }

    /// The 32-bit registers a lane passes: its A and B elements
    /// ([`per_register`](Self::per_register) to a register), then its C
    /// elements.
    pub fn words(self) -> usize {
        (self.elements(Fragment::A) + self.elements(Fragment::B)) / self.per_register()
            + self.elements(Fragment::C)
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

    /// The `(row, column)` of the matrix element that element `i` of `lane`'s
    /// `fragment` holds (see the module docs). WMMA's A and B are held
    /// twice: lanes `16..32` must hold what lanes `0..16` hold.
    pub fn element(self, fragment: Fragment, lane: usize, i: usize) -> (usize, usize) {
        let (g, t) = (lane / 4, lane % 4);
        match (self.family(), fragment) {
            (MmaFamily::MmaSync, Fragment::A) if self == MmaKind::Tf32M16N8K8 => {
                (g + 8 * (i % 2), t + 4 * (i / 2))
            }
            (MmaFamily::MmaSync, Fragment::B) if self == MmaKind::Tf32M16N8K8 => (t + 4 * i, g),
            (MmaFamily::MmaSync, Fragment::A) if self.is_fp8() => {
                (g + 8 * ((i / 4) % 2), 4 * t + i % 4 + 16 * (i / 8))
            }
            (MmaFamily::MmaSync, Fragment::B) if self.is_fp8() => (4 * t + i % 4 + 16 * (i / 4), g),
            (MmaFamily::MmaSync, Fragment::A) => {
                (g + 8 * ((i / 2) % 2), 2 * t + i % 2 + 8 * (i / 4))
            }
            (MmaFamily::MmaSync, Fragment::B) => (2 * t + i % 2 + 8 * (i / 2), g),
            (MmaFamily::MmaSync, Fragment::C) => (g + 8 * (i / 2), 2 * t + i % 2),
            (MmaFamily::Wmma, Fragment::A) => (lane % 16, i),
            (MmaFamily::Wmma, Fragment::B) => (i, lane % 16),
            (MmaFamily::Wmma, Fragment::C) => (2 * i + lane / 16, lane % 16),
            (MmaFamily::Mfma, _) => self.mfma_element(fragment, lane, i),
        }
    }

    /// [`element`](Self::element) for MFMA, the calculator's table of the
    /// module docs.
    fn mfma_element(self, fragment: Fragment, lane: usize, i: usize) -> (usize, usize) {
        match (self.shape(), fragment) {
            ((32, 32, 8), Fragment::A) => (lane % 32, 4 * (lane / 32) + i),
            ((32, 32, 8), Fragment::B) => (4 * (lane / 32) + i, lane % 32),
            ((32, 32, 8), Fragment::C) => (8 * (i / 4) + 4 * (lane / 32) + i % 4, lane % 32),
            (_, Fragment::A) => (lane % 16, 4 * (lane / 16) + i),
            (_, Fragment::B) => (4 * (lane / 16) + i, lane % 16),
            (_, Fragment::C) => (4 * (lane / 16) + i, lane % 16),
        }
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
    /// `bits` (a 16-bit or 8-bit float in the low bits, or a TF32 value: an
    /// `f32` whose low 13 bits are not read).
    pub fn operand_value(self, bits: u32) -> f32 {
        use tile_ir::f8::{F8E4M3, F8E5M2};
        match self.operand_dtype() {
            tile_ir::DType::BF16 => half::bf16::from_bits(bits as u16).to_f32(),
            tile_ir::DType::F32 => f32::from_bits(bits & !0x1fff),
            tile_ir::DType::F8E4M3 => F8E4M3::from_bits(bits as u8).to_f32(),
            tile_ir::DType::F8E5M2 => F8E5M2::from_bits(bits as u8).to_f32(),
            _ => half::f16::from_bits(bits as u16).to_f32(),
        }
    }
}

/// One element of a step's `D`, with the arithmetic of the module docs:
/// `c` and the `products` (`a·b` pairs, in ascending `k`) summed in `f64`
/// and rounded once to `f32`, a NaN result the canonical `f32` NaN. Every
/// tensor-core instruction the emulators model (this module's and
/// `wgmma`'s) computes its steps with it.
pub fn step_sum(c: f32, products: impl IntoIterator<Item = (f32, f32)>) -> f32 {
    let sum = products.into_iter().fold(f64::from(c), |acc, (x, y)| {
        acc + f64::from(x) * f64::from(y)
    });
    let rounded = sum as f32;
    if rounded.is_nan() {
        f32::NAN
    } else {
        rounded
    }
}

/// PTX `ldmatrix.sync.aligned.m8n8.x<count>{.trans}.shared.b16`: a warp
/// loads `count` 8×8 matrices of 16-bit elements from shared memory. Lane
/// `8j + r` supplies the address of row `r` of matrix `j` (8 consecutive
/// elements, 16-byte aligned); register `j` of lane `l` receives two
/// elements of matrix `j` (`g = l/4`, `t = l%4`): `M[g][2t]` and
/// `M[g][2t+1]`, or with `.trans` `M[2t][g]` and `M[2t+1][g]`, the first in
/// the low half (PTX ISA, "ldmatrix").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LdMatrix {
    /// The matrices: 1, 2 or 4.
    pub count: u8,
    /// Whether each matrix is read transposed.
    pub trans: bool,
}

impl LdMatrix {
    /// The instruction's code in an emulation call: `count | trans << 8`.
    pub fn code(self) -> u64 {
        u64::from(self.count) | (u64::from(self.trans) << 8)
    }

    /// The instruction of `code`, if it is one.
    pub fn from_code(code: u64) -> Option<LdMatrix> {
        let count = (code & 0xff) as u8;
        let trans = match code >> 8 {
            0 => false,
            1 => true,
            _ => return None,
        };
        matches!(count, 1 | 2 | 4).then_some(LdMatrix { count, trans })
    }

    /// The lanes whose addresses are read: `0..8·count`.
    pub fn address_lanes(self) -> usize {
        8 * usize::from(self.count)
    }

    /// `(matrix, row, column)` of the element in half `half` (0 low, 1
    /// high) of register `reg` of `lane`.
    pub fn element(self, lane: usize, reg: usize, half: usize) -> (usize, usize, usize) {
        let (g, t) = (lane / 4, lane % 4);
        if self.trans {
            (reg, 2 * t + half, g)
        } else {
            (reg, g, 2 * t + half)
        }
    }

    /// Each lane's registers, from the 8 elements at each address lane's
    /// row: `rows[l]` is what lane `l`'s address holds (only the first
    /// [`address_lanes`](Self::address_lanes) are read).
    pub fn distribute(self, rows: &[[u16; 8]]) -> Vec<Vec<u32>> {
        (0..32)
            .map(|lane| {
                (0..usize::from(self.count))
                    .map(|reg| {
                        let half = |h| {
                            let (m, r, c) = self.element(lane, reg, h);
                            u32::from(rows[8 * m + r][c])
                        };
                        half(0) | (half(1) << 16)
                    })
                    .collect()
            })
            .collect()
    }
}

/// One warp's (MFMA: one wave's) instruction, from the fragments of its
/// [`MmaKind::lanes`] lanes: the `D` fragment of each lane. `a[l]`, `b[l]`
/// and `c[l]` are lane `l`'s elements (operand bits as
/// [`MmaKind::unpack`] gives them, `f32` accumulators). Fragments of another count than the instruction's, and
/// an operand element that two lanes hold with different bits (WMMA's
/// replication broken), are errors.
pub fn warp_mma(
    kind: MmaKind,
    a: &[Vec<u32>],
    b: &[Vec<u32>],
    c: &[Vec<f32>],
) -> Result<Vec<Vec<f32>>, String> {
    let (m, n, k) = kind.shape();
    let lanes = kind.lanes();
    for (what, fragment, counts) in [
        ("A", Fragment::A, a.iter().map(Vec::len).collect::<Vec<_>>()),
        ("B", Fragment::B, b.iter().map(Vec::len).collect()),
        ("C", Fragment::C, c.iter().map(Vec::len).collect()),
    ] {
        let want = kind.elements(fragment);
        if counts.len() != lanes || counts.iter().any(|&n| n != want) {
            return Err(format!(
                "{what} fragments of {counts:?} elements, not {lanes} lanes of {want}"
            ));
        }
    }
    let mut ma: Vec<Option<u32>> = vec![None; m * k];
    let mut mb: Vec<Option<u32>> = vec![None; k * n];
    let mut mc = vec![0.0f32; m * n];
    let place = |matrix: &mut [Option<u32>], at: usize, bits: u32, lane: usize, what: &str| {
        match matrix[at] {
            Some(held) if held != bits => Err(format!(
                "lane {lane} holds {what} element {at} as {bits:#06x}, another lane as {held:#06x}"
            )),
            _ => {
                matrix[at] = Some(bits);
                Ok(())
            }
        }
    };
    for lane in 0..lanes {
        for (i, &bits) in a[lane].iter().enumerate() {
            let (row, col) = kind.element(Fragment::A, lane, i);
            place(&mut ma, row * k + col, bits, lane, "A")?;
        }
        for (i, &bits) in b[lane].iter().enumerate() {
            let (row, col) = kind.element(Fragment::B, lane, i);
            place(&mut mb, row * n + col, bits, lane, "B")?;
        }
        for (i, &v) in c[lane].iter().enumerate() {
            let (row, col) = kind.element(Fragment::C, lane, i);
            mc[row * n + col] = v;
        }
    }
    let widen = |matrix: Vec<Option<u32>>| -> Vec<f32> {
        matrix
            .into_iter()
            .map(|b| kind.operand_value(b.unwrap_or(0)))
            .collect()
    };
    let d = kind.step(&widen(ma), &widen(mb), &mc);
    Ok((0..lanes)
        .map(|lane| {
            (0..kind.elements(Fragment::C))
                .map(|i| {
                    let (row, col) = kind.element(Fragment::C, lane, i);
                    d[row * n + col]
                })
                .collect()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every element of every fragment is held by exactly one of the
    /// instruction's lanes (WMMA's A and B by two: lanes `l` and `l + 16`).
    #[test]
    fn fragments_cover_their_matrices_once() {
        for kind in MmaKind::ALL {
            let (m, n, k) = kind.shape();
            for (fragment, rows, cols) in [
                (Fragment::A, m, k),
                (Fragment::B, k, n),
                (Fragment::C, m, n),
            ] {
                let mut seen = vec![0; rows * cols];
                for lane in 0..kind.lanes() {
                    for i in 0..kind.elements(fragment) {
                        let (r, c) = kind.element(fragment, lane, i);
                        seen[r * cols + c] += 1;
                    }
                }
                let copies = match (kind.family(), fragment) {
                    (MmaFamily::Wmma, Fragment::A | Fragment::B) => 2,
                    _ => 1,
                };
                assert!(seen.iter().all(|&s| s == copies), "{kind:?} {fragment:?}");
            }
        }
    }

    /// A step sums exactly and rounds once: `1 + 2⁻²⁴ + 2⁻²⁴` is `1 + 2⁻²³`
    /// (an in-order f32 chain would give 1).
    /// The PTX ISA's example: lane 0 receives elements (0,0),(0,1) of each
    /// matrix, lane 5 row 1's columns 2 and 3; transposed, the columns and
    /// rows swap.
    #[test]
    fn ldmatrix_hands_out_rows_by_groups_of_four_lanes() {
        let rows: Vec<[u16; 8]> = (0..32)
            .map(|l| std::array::from_fn(|c| (l * 8 + c) as u16))
            .collect();
        let x4 = LdMatrix {
            count: 4,
            trans: false,
        }
        .distribute(&rows);
        assert_eq!(x4[0][0], 1 << 16, "elements 1 (high) and 0 (low)");
        assert_eq!(x4[5][0], (11 << 16) | 10);
        assert_eq!(x4[5][3], ((24 * 8 + 11) << 16) | (24 * 8 + 10));
        let t = LdMatrix {
            count: 2,
            trans: true,
        }
        .distribute(&rows);
        // Lane 5: g = 1, t = 1: M[2][1] and M[3][1] of matrix 1 (rows 8..16).
        assert_eq!(t[5][1], ((11 * 8 + 1) << 16) | (10 * 8 + 1));
        for code in [1, 2, 4, 0x101, 0x102, 0x104] {
            assert_eq!(LdMatrix::from_code(code).map(LdMatrix::code), Some(code));
        }
        assert_eq!(LdMatrix::from_code(3), None);
        assert_eq!(LdMatrix::from_code(0x204), None);
    }

    /// WMMA needs lanes 16..32 to repeat lanes 0..16's A and B: a lane that
    /// does not is an error, not an arbitrary result.
    #[test]
    fn wmma_rejects_operands_not_replicated() {
        let kind = MmaKind::WmmaF16M16N16K16;
        let one = u32::from(half::f16::ONE.to_bits());
        let a = vec![vec![one; 16]; 32];
        let b = vec![vec![one; 16]; 32];
        let c = vec![vec![0.0; 8]; 32];
        let d = warp_mma(kind, &a, &b, &c).unwrap();
        assert!(d.iter().flatten().all(|&v| v == 16.0));
        let mut broken = a.clone();
        broken[20][3] = 0;
        let error = warp_mma(kind, &broken, &b, &c).unwrap_err();
        assert_eq!(
            error,
            "lane 20 holds A element 67 as 0x0000, another lane as 0x3c00"
        );
    }

    /// The TF32 fragments against CuTe's `SM80_16x8x8_F32TF32TF32F32_TN`
    /// traits, an independent statement of the PTX ISA's table: `ALayout =
    /// ((4,8),(2,2)):((16,1),(8,64))` into the column-major 16×8 A,
    /// `BLayout = ((4,8),2):((8,1),32)` into the column-major 8×8 Bᵀ (`n +
    /// 8·k`), lane `l = t + 4·g`.
    #[test]
    fn tf32_fragments_are_cutes() {
        let kind = MmaKind::Tf32M16N8K8;
        for lane in 0..32 {
            let (t, g) = (lane % 4, lane / 4);
            for i in 0..4 {
                let index = 16 * t + g + 8 * (i % 2) + 64 * (i / 2);
                let (row, col) = kind.element(Fragment::A, lane, i);
                assert_eq!(row + 16 * col, index, "A lane {lane} element {i}");
            }
            for i in 0..2 {
                let index = 8 * t + g + 32 * i;
                let (k, n) = kind.element(Fragment::B, lane, i);
                assert_eq!(n + 8 * k, index, "B lane {lane} element {i}");
            }
        }
        assert_eq!(kind.words(), 10);
        assert_eq!(kind.name(), "m16n8k8.tf32");
        assert_eq!(kind.unpack(&[7, 9]), [7, 9]);
        assert_eq!(MmaKind::F16M16N8K16.unpack(&[0x0002_0001]), [1, 2]);
    }

    /// The FP8 fragments against CuTe's `SM89_16x8x32_F32E4M3E4M3F32_TN`
    /// traits (those of `SM80_16x8x32_S32S8S8S32_TN`), an independent
    /// statement of the PTX ISA's table: `ALayout =
    /// ((4,8),(4,2,2)):((64,1),(16,8,256))` into the column-major 16×32 A,
    /// `BLayout = ((4,8),(4,2)):((32,1),(8,128))` into the column-major
    /// 8×32 Bᵀ (`n + 8·k`), lane `l = t + 4·g`.
    #[test]
    fn fp8_fragments_are_cutes() {
        for kind in [MmaKind::E4m3M16N8K32, MmaKind::E5m2M16N8K32] {
            for lane in 0..32 {
                let (t, g) = (lane % 4, lane / 4);
                for i in 0..16 {
                    let index = 64 * t + g + 16 * (i % 4) + 8 * ((i / 4) % 2) + 256 * (i / 8);
                    let (row, col) = kind.element(Fragment::A, lane, i);
                    assert_eq!(row + 16 * col, index, "A lane {lane} element {i}");
                }
                for i in 0..8 {
                    let index = 32 * t + g + 8 * (i % 4) + 128 * (i / 4);
                    let (k, n) = kind.element(Fragment::B, lane, i);
                    assert_eq!(n + 8 * k, index, "B lane {lane} element {i}");
                }
            }
            assert_eq!(kind.words(), 4 + 2 + 4);
            assert!(kind.is_fp8());
        }
        assert_eq!(MmaKind::E4m3M16N8K32.name(), "m16n8k32.e4m3");
        assert_eq!(
            MmaKind::E5m2M16N8K32.unpack(&[0x4433_2211]),
            [0x11, 0x22, 0x33, 0x44]
        );
        // e4m3 0x38 is 1.0, 0x7e is 448; e5m2 0x3c is 1.0, 0x7c infinity.
        assert_eq!(MmaKind::E4m3M16N8K32.operand_value(0x7e), 448.0);
        assert_eq!(MmaKind::E5m2M16N8K32.operand_value(0x7c), f32::INFINITY);
        // Thirty-two products 448 · 1 and 0.5 sum exactly.
        let kind = MmaKind::E4m3M16N8K32;
        let a = vec![vec![0x7e; 16]; 32];
        let b = vec![vec![0x38; 8]; 32];
        let c = vec![vec![0.5; 4]; 32];
        let d = warp_mma(kind, &a, &b, &c).unwrap();
        assert!(d.iter().flatten().all(|&v| v == 32.0 * 448.0 + 0.5));
    }

    /// The instruction reads TF32: the low 13 bits of an operand do not
    /// count, so `1 + 2⁻¹¹` times 1 is 1, and `1 + 2⁻¹⁰` is itself.
    #[test]
    fn tf32_operands_drop_their_low_bits() {
        let kind = MmaKind::Tf32M16N8K8;
        let (m, n, k) = kind.shape();
        let ones = |len| -> Vec<Vec<u32>> { vec![vec![1f32.to_bits(); len]; 32] };
        let mut a = vec![vec![0u32; 4]; 32];
        // Lane 0's element 0 is A[0][0]; B is all ones, C zero.
        a[0][0] = (1.0 + 2f32.powi(-11)).to_bits();
        a[1][0] = (1.0 + 2f32.powi(-10)).to_bits();
        let c = vec![vec![0.0; 4]; 32];
        let d = warp_mma(kind, &a, &ones(2), &c).unwrap();
        // D[0][0], lane 0's first, sums row 0 of A: A[0][0] (lane 0's
        // element 0) and A[0][1] (lane 1's).
        assert_eq!(d[0][0], 2.0 + 2f32.powi(-10));
        assert_eq!((m, n, k), (16, 8, 8));
    }

    #[test]
    fn a_step_rounds_once() {
        let kind = MmaKind::F16M16N8K16;
        let (m, n, k) = kind.shape();
        let mut a = vec![0.0; m * k];
        let mut b = vec![0.0; k * n];
        let c = vec![1.0; m * n];
        a[0] = 2f32.powi(-12);
        a[1] = 2f32.powi(-12);
        b[0] = 2f32.powi(-12);
        b[n] = 2f32.powi(-12);
        let d = kind.step(&a, &b, &c);
        assert_eq!(d[0], 1.0 + 2f32.powi(-23));
        assert_eq!(d[1], 1.0);
    }
}

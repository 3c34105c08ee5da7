//! Blackwell's fifth-generation tensor cores (`tcgen05`, sm_100a and
//! sm_103a) as every emulator models them, written from the PTX ISA
//! ("Tensor Memory", "tcgen05.mma", "Matrix Descriptors", "tcgen05.ld")
//! and CUTLASS's descriptions of the same fields (`UMMA::InstrDescriptor`,
//! `UMMA::SmemDescriptor`).
//!
//! **Tensor memory.** Each block has [`LANES`] lanes of [`COLUMNS`]
//! 32-bit columns. An address is 32 bits, the lane in bits 31–16 and the
//! column in bits 15–0 ([`address`]). `tcgen05.alloc` hands out columns
//! only (every lane of each): a power of two from 32 to 512
//! ([`allocation_columns`]), its base written to a word of shared memory,
//! issued by one whole warp; the same warp frees them with
//! `tcgen05.dealloc` before the block exits.
//!
//! **`tcgen05.mma.cta_group::1.kind::f16`** (and **`kind::f8f6f4`** on
//! E4M3 and E5M2, one byte an element, and **`kind::tf32`** on `f32`
//! elements whose low 13 bits it does not read, [`Qualifier`]). One thread
//! issues the whole product `D = A·B (+ D)` of a 128×`N` block: A
//! (128×`K`) and B (`K`×`N`), `K` being 32 bytes of elements (16 f16, 32
//! FP8, 8 TF32), in shared
//! memory through matrix descriptors, D in tensor memory from an
//! address whose lane is 0: element `(m, n)` of D is lane `m`, column
//! `n` (one `f32` a column). The instruction is asynchronous; its
//! completion is observed only through `tcgen05.commit`, which arrives
//! once on an mbarrier when all of the thread's earlier `tcgen05.mma`s are
//! done. Its 32-bit **instruction descriptor** ([`Tcgen05Kind::descriptor`]):
//!
//! | bits | field |
//! |---|---|
//! | 4–5 | D's format: 1 = f32 |
//! | 7–9, 10–12 | A's and B's: 0 = f16, 1 = bf16 (`kind::f8f6f4`: 0 = E4M3, 1 = E5M2; `kind::tf32`: 2) |
//! | 15, 16 | A, B MN-major (1) or K-major (0) |
//! | 17–22 | `N >> 3` |
//! | 24–28 | `M >> 4` |
//!
//! **Shared-memory descriptors** are Hopper's ([`crate::wgmma`], same
//! layouts, same fields) with the version `0b001` in bits 46–48 and the
//! swizzle in bits 61–63 (0 none, 2 = 128 bytes, 4 = 64, 6 = 32: Hopper's
//! two-bit code shifted once), [`smem_descriptor`].
//!
//! **`tcgen05.ld.sync.aligned.32x32b.x<n>` / `tcgen05.st`**: warp `w` of a
//! warpgroup reaches lanes `32·(w % 4)` to `32·(w % 4) + 31` only; its lane
//! `l` reads (writes) lane `32·(w % 4) + l` of tensor memory, register `r`
//! being column `r` from the address's column ([`load_element`]). So an
//! accumulator of 128 rows is one row a thread. The loaded registers are
//! valid after `tcgen05.wait::ld`, stored ones written after
//! `tcgen05.wait::st`.
//!
//! **A in tensor memory** (`tcgen05.mma … [d], [a], b_desc, …`, the
//! `.kind::f16` form CUTLASS calls "TS"): the 128×`K` block of A sits in
//! the lanes D's rows do, row `m` in lane `m`, its `K` elements packed
//! into consecutive 32-bit columns from the address's, two 16-bit ones a
//! column, the lower `k` in the low half ([`tensor_a_element`]; CuTe's
//! `tmem_frg_1sm` of the operand type, a derived layout that a GPU run
//! confirms). A must be K-major there; B still comes from shared memory.
//!
//! **Block-scaled products** (`kind::mxf8f6f4.block_scale`, E8M0 scales
//! per row of A and column of B read from tensor memory) are in
//! `block_scaled.rs`.
//!
//! **Arithmetic** as [`crate::mma`]'s: each element of D is its old value
//! (or 0 without accumulation) and the `K` products of the instruction
//! summed in `f64` in ascending `k`, rounded once to `f32`.

use crate::wgmma::{Descriptor, Major};
use tile_ir::DType;

mod block_scaled;

pub use block_scaled::{
    block_mma_scaled, read_scales, scale_cell, scale_columns, GROUPS_PER_COLUMN, GROUP_K,
};

/// The lanes (rows) of a block's tensor memory.
pub const LANES: usize = 128;

/// The 32-bit columns of a block's tensor memory.
pub const COLUMNS: usize = 512;

/// The rows of A and D of every `tcgen05.mma` the lowering issues.
pub const M: usize = 128;

/// The `K` of every `tcgen05.mma` on 16-bit operands (256 bits of a row).
pub const K: usize = 16;

/// The lanes of tensor memory one warp reaches.
pub const WARP_LANES: usize = 32;

/// The columns `tcgen05.alloc` hands out for a need of `columns`: the
/// power of two at or above it, at least 32; `None` past [`COLUMNS`].
pub fn allocation_columns(columns: usize) -> Option<u32> {
    let n = columns.max(32).next_power_of_two();
    (n <= COLUMNS).then_some(n as u32)
}

/// The tensor-memory address of `lane`, `column`.
pub fn address(lane: u32, column: u32) -> u32 {
    (lane << 16) | (column & 0xffff)
}

/// The lane and column of a tensor-memory address.
pub fn split_address(address: u32) -> (u32, u32) {
    (address >> 16, address & 0xffff)
}

/// The tensor-memory lane and column (from the warp's address) of register
/// `r` of lane `lane` of a warp whose `warp % 4` is `quarter` in a
/// `32x32b` load or store.
pub fn load_element(quarter: usize, lane: usize, r: usize) -> (usize, usize) {
    (WARP_LANES * quarter + lane, r)
}

/// Where element `(m, k)` of a 128×`K` A of `bytes`-byte elements read
/// from tensor memory sits: lane `m`, the column `k / (4 / bytes)` after
/// A's first, and the element's first bit in that column (the lower `k`
/// in the lower bits).
pub fn tensor_a_element(m: usize, k: usize, bytes: usize) -> (usize, usize, u32) {
    let per = 4 / bytes;
    (m, k / per, (8 * bytes * (k % per)) as u32)
}

/// The row-major 128×`K` A of `kind` read from tensor memory from column
/// `column`, each cell's bits from `cell(lane, column)`, widened to `f32`.
pub fn read_tensor_a<E>(
    kind: Tcgen05Kind,
    column: usize,
    mut cell: impl FnMut(usize, usize) -> Result<u32, E>,
) -> Result<Vec<f32>, E> {
    let (k, bytes) = (kind.k(), kind.dtype.size_bytes());
    let mask = if bytes == 4 {
        u32::MAX
    } else {
        (1 << (8 * bytes)) - 1
    };
    let mut a = Vec::with_capacity(M * k);
    for m in 0..M {
        for kk in 0..k {
            let (lane, at, shift) = tensor_a_element(m, kk, bytes);
            let bits = cell(lane, column + at)?;
            a.push(kind.widen((bits >> shift) & mask));
        }
    }
    Ok(a)
}

/// The 32-bit columns a 128×`K` A of `kind` takes in tensor memory.
pub fn tensor_a_columns(kind: Tcgen05Kind) -> usize {
    kind.k() * kind.dtype.size_bytes() / 4
}

/// The bytes of a row of A (and of a K-major B) one instruction reads:
/// its `K` is this many bytes of its operands' elements.
pub const K_BYTES: usize = 32;

/// The `.kind` of a `tcgen05.mma`: which element types the format codes of
/// its instruction descriptor name (the same codes mean f16 and E4M3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Qualifier {
    /// `kind::f16`: f16 (0) or bf16 (1) operands.
    F16,
    /// `kind::f8f6f4`: E4M3 (0) or E5M2 (1) operands, one byte each (the
    /// model has no FP6 or FP4 ones).
    F8F6F4,
    /// `kind::tf32`: TF32 operands (2) in `f32` elements.
    Tf32,
    /// `kind::mxf8f6f4.block_scale`: `kind::f8f6f4`'s operands, each row
    /// of A and column of B scaled by an E8M0 from tensor memory
    /// (`block_scaled.rs`).
    Mxf8f6f4,
}

impl Qualifier {
    /// The qualifiers of products without scales.
    pub const DENSE: [Qualifier; 3] = [Qualifier::F16, Qualifier::F8F6F4, Qualifier::Tf32];

    /// Its name in PTX, after `kind::`.
    pub fn ptx(self) -> &'static str {
        match self {
            Qualifier::F16 => "f16",
            Qualifier::F8F6F4 => "f8f6f4",
            Qualifier::Tf32 => "tf32",
            Qualifier::Mxf8f6f4 => "mxf8f6f4.block_scale",
        }
    }

    /// Its code in an emulation call: LLVM's `kind` operand (0, 2 or 1)
    /// for the dense ones, 3 for the block-scaled one (whose intrinsic
    /// has no such operand).
    pub fn code(self) -> u64 {
        match self {
            Qualifier::F16 => 0,
            Qualifier::F8F6F4 => 2,
            Qualifier::Tf32 => 1,
            Qualifier::Mxf8f6f4 => 3,
        }
    }

    /// The qualifier of `code`, if it is one.
    pub fn from_code(code: u64) -> Option<Qualifier> {
        match code {
            0 => Some(Qualifier::F16),
            1 => Some(Qualifier::Tf32),
            2 => Some(Qualifier::F8F6F4),
            3 => Some(Qualifier::Mxf8f6f4),
            _ => None,
        }
    }
}

/// A `tcgen05.mma.cta_group::1.kind::f16` (`kind::f8f6f4`, `kind::tf32`)
/// of 128×`N`×`K` with `f32` accumulators and A K-major: `K` is 16 for
/// f16 and bf16, 32 for E4M3 and E5M2, 8 for TF32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tcgen05Kind {
    /// The operands' dtype: `f16`, `bf16`, `f8e4m3`, `f8e5m2`, or `f32`
    /// for TF32.
    pub dtype: DType,
    /// `N`: a multiple of 16 from 16 to 256.
    pub n: usize,
    /// How B's rows run: [`Major::Mn`] (rows along K) or [`Major::K`] (rows
    /// along N, B transposed).
    pub b_major: Major,
}

impl Tcgen05Kind {
    /// The instruction for `dtype` operands, `n` columns and B `b_major`,
    /// if it exists.
    pub fn new(dtype: DType, n: usize, b_major: Major) -> Option<Tcgen05Kind> {
        let valid = matches!(
            dtype,
            DType::F16 | DType::BF16 | DType::F8E4M3 | DType::F8E5M2 | DType::F32
        ) && n.is_multiple_of(16)
            && (16..=256).contains(&n);
        valid.then_some(Tcgen05Kind { dtype, n, b_major })
    }

    /// Its `.kind`.
    pub fn qualifier(self) -> Qualifier {
        match self.dtype.size_bytes() {
            1 => Qualifier::F8F6F4,
            4 => Qualifier::Tf32,
            _ => Qualifier::F16,
        }
    }

    /// The instruction's `K`: [`K_BYTES`] of its operands' elements (16,
    /// 32 or 8).
    pub fn k(self) -> usize {
        K_BYTES / self.dtype.size_bytes()
    }

    /// The same instruction with B's rows running as `b_major` says.
    pub fn with_b_major(self, b_major: Major) -> Tcgen05Kind {
        Tcgen05Kind { b_major, ..self }
    }

    /// Its 32-bit instruction descriptor (the module docs).
    pub fn descriptor(self) -> u32 {
        let format = match self.dtype {
            DType::BF16 | DType::F8E5M2 => 1,
            DType::F32 => 2,
            _ => 0,
        };
        let b_mn = u32::from(self.b_major == Major::Mn);
        (1 << 4)
            | (format << 7)
            | (format << 10)
            | (b_mn << 16)
            | ((self.n as u32 >> 3) << 17)
            | ((M as u32 >> 4) << 24)
    }

    /// The instruction an instruction descriptor of a `tcgen05.mma` of
    /// `qualifier` names, if the model has it.
    pub fn from_descriptor(bits: u32, qualifier: Qualifier) -> Result<Tcgen05Kind, String> {
        let field = |at: u32, width: u32| (bits >> at) & ((1 << width) - 1);
        let dtype = match (qualifier, field(7, 3), field(10, 3)) {
            (Qualifier::F16, 0, 0) => DType::F16,
            (Qualifier::F16, 1, 1) => DType::BF16,
            (Qualifier::F8F6F4, 0, 0) => DType::F8E4M3,
            (Qualifier::F8F6F4, 1, 1) => DType::F8E5M2,
            (Qualifier::Tf32, 2, 2) => DType::F32,
            (_, a, b) => {
                let kind = qualifier.ptx();
                return Err(format!(
                    "kind::{kind} operand formats {a} and {b} are not modelled"
                ));
            }
        };
        let b_major = if field(16, 1) == 1 {
            Major::Mn
        } else {
            Major::K
        };
        let modelled = field(4, 2) == 1
            && field(15, 1) == 0
            && field(24, 5) == (M as u32 >> 4)
            && bits & !((0x3f << 17) | (1 << 16) | (0x3f << 7) | (0x1f << 24) | (3 << 4)) == 0;
        let n = field(17, 6) as usize * 8;
        match Tcgen05Kind::new(dtype, n, b_major) {
            Some(kind) if modelled => Ok(kind),
            _ => Err(format!(
                "instruction descriptor {bits:#010x} is not a modelled form (f32 D, K-major A, M = 128, N a multiple of 16)"
            )),
        }
    }

    /// Its name in thread-level programs: `m128n64k16.f16`, with `.bk`
    /// after it for a K-major B (`m128n64k32.f8e4m3.bk`).
    pub fn name(self) -> String {
        let b = if self.b_major == Major::K { ".bk" } else { "" };
        format!("m{M}n{}k{}.{}{b}", self.n, self.k(), self.dtype)
    }

    /// The `f32` value of an operand element with bits `bits` (in the low
    /// bits for 8- and 16-bit operands; a TF32's low 13 bits not read).
    pub fn widen(self, bits: u32) -> f32 {
        crate::mma::operand_value(self.dtype, bits)
    }
}

/// Hopper's descriptor `d` in sm_100's encoding (the module docs).
pub fn smem_descriptor(d: Descriptor) -> u64 {
    let hopper = d.encode();
    let swizzle = (hopper >> 62) << 1;
    (hopper & !(3 << 62)) | (1 << 46) | (swizzle << 61)
}

/// The descriptor that sm_100's encoding `bits` holds, or why the model
/// does not read it.
pub fn decode_smem_descriptor(bits: u64) -> Result<Descriptor, String> {
    let version = (bits >> 46) & 7;
    let swizzle = bits >> 61;
    let reserved = (bits >> 52) & 0x1ff;
    if version != 1 || reserved != 0 || !matches!(swizzle, 0 | 2 | 4 | 6) {
        return Err(format!(
            "shared-memory descriptor {bits:#018x} is not modelled (version {version}, swizzle code {swizzle})"
        ));
    }
    let hopper = (bits & ((1 << 46) - 1)) | (bits & (7 << 49)) | ((swizzle >> 1) << 62);
    Ok(Descriptor::decode(hopper))
}

/// One `tcgen05.mma` of `kind` on the row-major 128×`K` `a` and `K`×`N`
/// `b` into the row-major 128×`N` `d`, adding to it where `accumulate`
/// holds (the module docs' arithmetic).
pub fn block_mma(
    kind: Tcgen05Kind,
    a: &[f32],
    b: &[f32],
    d: &mut [f32],
    accumulate: bool,
) -> Result<(), String> {
    let sum =
        |c, products: &mut dyn Iterator<Item = (f32, f32)>, _, _| crate::mma::step_sum(c, products);
    block_product(kind, (a, b), (d, accumulate), sum)
}

/// One product of `kind` on the row-major 128×`K` `a` and `K`×`N` `b` into
/// the row-major 128×`N` `d`: each element `sum(c, products, row,
/// column)` of its old value (or 0 without `accumulate`) and its `K`
/// products in ascending `k`.
fn block_product(
    kind: Tcgen05Kind,
    (a, b): (&[f32], &[f32]),
    (d, accumulate): (&mut [f32], bool),
    sum: impl Fn(f32, &mut dyn Iterator<Item = (f32, f32)>, usize, usize) -> f32,
) -> Result<(), String> {
    let (n, k) = (kind.n, kind.k());
    if a.len() != M * k || b.len() != k * n || d.len() != M * n {
        return Err(format!(
            "operands of {}, {} and {} elements for {}",
            a.len(),
            b.len(),
            d.len(),
            kind.name()
        ));
    }
    for (e, out) in d.iter_mut().enumerate() {
        let (row, col) = (e / n, e % n);
        let c = if accumulate { *out } else { 0.0 };
        let mut products = (0..k).map(|kk| (a[row * k + kk], b[kk * n + col]));
        *out = sum(c, &mut products, row, col);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wgmma::Swizzle;

    #[test]
    fn instruction_descriptors_match_cutlass_fields() {
        // CUTLASS `UMMA::InstrDescriptor` for an f16 × f16 → f32, K-major
        // A, MN-major B, 128×64: c_format_ 1 (bit 4), b_major_ (bit 16),
        // n_dim_ 64 >> 3 = 8 (bits 17–22), m_dim_ 128 >> 4 = 8 (bits 24–28).
        let kind = Tcgen05Kind::new(DType::F16, 64, Major::Mn).unwrap();
        assert_eq!(
            kind.descriptor(),
            (1 << 4) | (1 << 16) | (8 << 17) | (8 << 24)
        );
        let bf16 = Tcgen05Kind::new(DType::BF16, 256, Major::K).unwrap();
        assert_eq!(
            bf16.descriptor(),
            (1 << 4) | (1 << 7) | (1 << 10) | (32 << 17) | (8 << 24)
        );
        for kind in [kind, bf16] {
            let qualifier = Qualifier::F16;
            assert_eq!(
                Tcgen05Kind::from_descriptor(kind.descriptor(), qualifier),
                Ok(kind)
            );
        }
        // `kind::f8f6f4` (CUTLASS `MXF8F6F4Format`): E4M3 is 0, E5M2 1, the
        // same codes as f16 and bf16; K is 32 bytes of them.
        let e4m3 = Tcgen05Kind::new(DType::F8E4M3, 128, Major::K).unwrap();
        let e5m2 = Tcgen05Kind::new(DType::F8E5M2, 64, Major::K).unwrap();
        assert_eq!(e4m3.descriptor(), (1 << 4) | (16 << 17) | (8 << 24));
        assert_eq!(e5m2.descriptor() & (0x3f << 7), (1 << 7) | (1 << 10));
        for kind in [e4m3, e5m2] {
            assert_eq!((kind.k(), kind.qualifier()), (32, Qualifier::F8F6F4));
            let decoded = Tcgen05Kind::from_descriptor(kind.descriptor(), Qualifier::F8F6F4);
            assert_eq!(decoded, Ok(kind));
        }
        assert_eq!(e4m3.name(), "m128n128k32.f8e4m3.bk");
        assert_eq!(
            Tcgen05Kind::from_descriptor(e4m3.descriptor(), Qualifier::F16).map(|k| k.dtype),
            Ok(DType::F16)
        );
        for q in [Qualifier::Mxf8f6f4].into_iter().chain(Qualifier::DENSE) {
            assert_eq!(Qualifier::from_code(q.code()), Some(q));
        }
        assert_eq!(Qualifier::from_code(4), None);
        // `kind::tf32` (CUTLASS `UMMA::F16F32Format::TF32` = 2), K of 8;
        // the instruction reads an `f32`'s top 19 bits only.
        let tf32 = Tcgen05Kind::new(DType::F32, 64, Major::K).unwrap();
        assert_eq!(tf32.descriptor() & (0x3f << 7), (2 << 7) | (2 << 10));
        assert_eq!((tf32.k(), tf32.qualifier()), (8, Qualifier::Tf32));
        assert_eq!(tf32.name(), "m128n64k8.f32.bk");
        assert_eq!(
            Tcgen05Kind::from_descriptor(tf32.descriptor(), Qualifier::Tf32),
            Ok(tf32)
        );
        assert!(Tcgen05Kind::from_descriptor(tf32.descriptor(), Qualifier::F16).is_err());
        assert_eq!(tf32.widen(0x3f80_1fff), 1.0);
        assert_eq!(tf32.widen(0x3f80_2000), 1.0 + 2f32.powi(-10));
        let err =
            Tcgen05Kind::from_descriptor(kind.descriptor() | 1 << 15, Qualifier::F16).unwrap_err();
        assert!(err.contains("K-major A"), "{err}");
        assert!(Tcgen05Kind::new(DType::F16, 8, Major::Mn).is_none());
    }

    #[test]
    fn smem_descriptors_are_hoppers_with_version_and_wider_swizzle() {
        // PTX ISA's sm_100 table: version 0b001 at bit 46, swizzle codes
        // 2 (128 B), 4 (64 B), 6 (32 B) in bits 61–63.
        let d = Descriptor {
            start: 0x1_2340,
            lbo: 1024,
            sbo: 1024,
            base_offset: 0,
            swizzle: Swizzle::B128,
        };
        let bits = smem_descriptor(d);
        assert_eq!(
            bits,
            (0x1234) | (64 << 16) | (64 << 32) | (1 << 46) | (2 << 61)
        );
        for swizzle in [Swizzle::B128, Swizzle::B64, Swizzle::B32, Swizzle::None] {
            let d = Descriptor { swizzle, ..d };
            assert_eq!(decode_smem_descriptor(smem_descriptor(d)), Ok(d));
        }
        let hopper = d.encode();
        assert!(decode_smem_descriptor(hopper)
            .unwrap_err()
            .contains("version 0"));
    }

    #[test]
    fn allocations_are_powers_of_two_of_at_least_32_columns() {
        assert_eq!(allocation_columns(1), Some(32));
        assert_eq!(allocation_columns(64), Some(64));
        assert_eq!(allocation_columns(192), Some(256));
        assert_eq!(allocation_columns(512), Some(512));
        assert_eq!(allocation_columns(513), None);
        assert_eq!(split_address(address(96, 130)), (96, 130));
    }

    #[test]
    fn each_warp_reaches_its_quarter_of_the_lanes() {
        let mut seen = vec![0; LANES * 4];
        for quarter in 0..4 {
            for lane in 0..32 {
                for r in 0..4 {
                    let (row, col) = load_element(quarter, lane, r);
                    seen[row * 4 + col] += 1;
                }
            }
        }
        assert!(seen.iter().all(|&s| s == 1));
    }

    #[test]
    fn an_a_in_tensor_memory_packs_two_halves_a_column() {
        // f16: K = 16 takes 8 columns; k 2c in the low half of column c.
        assert_eq!(tensor_a_element(5, 0, 2), (5, 0, 0));
        assert_eq!(tensor_a_element(5, 1, 2), (5, 0, 16));
        assert_eq!(tensor_a_element(127, 15, 2), (127, 7, 16));
        assert_eq!(tensor_a_element(3, 6, 1), (3, 1, 16));
        let kind = Tcgen05Kind::new(DType::F16, 64, Major::Mn).unwrap();
        assert_eq!(tensor_a_columns(kind), 8);
        // Cell (lane, column) holds f16 `lane + 2·column` low, `+ 1` high.
        let half = |x: f32| u32::from(half::f16::from_f32(x).to_bits());
        let a = read_tensor_a(kind, 4, |lane, column| {
            let v = (lane + 2 * (column - 4)) as f32;
            Ok::<u32, ()>(half(v) | half(v + 1.0) << 16)
        })
        .unwrap();
        for (m, k) in [(0, 0), (0, 1), (9, 7), (127, 15)] {
            assert_eq!(a[m * 16 + k], (m + k) as f32, "({m}, {k})");
        }
    }

    #[test]
    fn the_block_product_accumulates_only_when_asked() {
        let kind = Tcgen05Kind::new(DType::F16, 16, Major::Mn).unwrap();
        let a: Vec<f32> = (0..M * K).map(|e| (e % 7) as f32 - 3.0).collect();
        let b: Vec<f32> = (0..K * 16).map(|e| (e % 5) as f32 - 2.0).collect();
        let mut d = vec![1.0f32; M * 16];
        block_mma(kind, &a, &b, &mut d, false).unwrap();
        let expect = |row: usize, col: usize| -> f32 {
            (0..K).map(|k| a[row * K + k] * b[k * 16 + col]).sum()
        };
        assert_eq!(d[5 * 16 + 3], expect(5, 3));
        block_mma(kind, &a, &b, &mut d, true).unwrap();
        assert_eq!(d[127 * 16 + 15], 2.0 * expect(127, 15));
    }
}

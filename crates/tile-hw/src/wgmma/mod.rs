//! Hopper's warpgroup matrix multiply-accumulate (`wgmma.mma_async`,
//! sm_90a) as every emulator models it, written from the PTX ISA
//! ("Asynchronous Warpgroup Level Matrix Multiply-Accumulate"): where its
//! operands sit in shared memory, described by 64-bit matrix descriptors,
//! and which accumulator element each of the warpgroup's 128 threads holds.
//!
//! **Descriptors** (PTX ISA, "Matrix Descriptor Format"):
//!
//! | bits | field |
//! |---|---|
//! | 0–13 | start address, `(addr & 0x3ffff) >> 4` |
//! | 16–29 | leading-dimension byte offset `>> 4` (LBO) |
//! | 32–45 | stride-dimension byte offset `>> 4` (SBO) |
//! | 49–51 | base offset (0 when the swizzle pattern starts 1024-byte aligned) |
//! | 62–63 | swizzle: 0 none, 1 = 128 bytes, 2 = 64, 3 = 32 |
//!
//! **Layouts.** The model knows the swizzled layouts (128, 64 and 32
//! bytes). A matrix is made of atoms of 8 rows of `S` bytes (the swizzle's
//! width), rows `S` bytes apart, and the 16-byte chunk `c` of row `r` of an
//! atom sits at chunk `c ^ (r mod S/16)` of its 128-byte line: the address
//! bits 4 and up (as many as `S / 16` needs: 3, 2 or 1) are XORed with the
//! bits 7 and up, CuTe's `Swizzle<3,4,3>`, `<2,4,3>` and `<1,4,3>` on byte
//! addresses, which is why the atoms start on `8·S`-byte boundaries. An
//! operand is *K-major* (its rows run along M or N, its `K` elements
//! contiguous within the `S` bytes) or *MN-major* (rows run along K, `S`
//! bytes of M or N contiguous); the SBO is the distance between
//! consecutive groups of 8 rows. Element `(mn, k)` of an operand of
//! `e`-byte elements starting at `start`:
//!
//! ```text
//! K-major:   a = start + (mn / 8)·SBO + (mn % 8)·S + k·e        (k·e < S)
//! MN-major:  a = start + (k / 8)·SBO  + (k % 8)·S  + mn·e       (mn·e < S)
//! address  = a ^ (((a >> 7) & (S/16 − 1)) << 4)
//! ```
//!
//! An operand wider than one atom (`S` bytes of K, M or N) would also
//! use the LBO, whose reading this model does not commit to: it refuses
//! such accesses, and the lowering issues one instruction per atom of N
//! and a `K` of 16 (32 bytes) per instruction.
//!
//! **Accumulators** of `m64nNk16` and `m64nNk32` (PTX ISA, "Matrix
//! fragments for wgmma.m64nNk16", "… m64nNk32": the same D layout): thread `T` of the warpgroup (warp `w = T / 32`,
//! `g = (T % 32) / 4`, `t = T % 4`) holds `N / 2` `f32`s; element `i` is
//!
//! ```text
//! row = 16·w + g + 8·((i / 2) % 2),   column = 8·(i / 4) + 2·t + i % 2
//! ```
//!
//! so each warp owns 16 rows and every 8 columns repeat `mma.sync`'s C
//! layout. **A from registers** (`wgmma … {a0, a1, a2, a3}, desc-b, …`):
//! each thread holds 8 16-bit elements of the 64×16 A in four `.b32`
//! registers, two to a register (the lower half first), element `i` where
//! the accumulator layout puts element `i` of a 64×16 D (CuTe's
//! `ALayout_64x16` is its `CLayout_64x16`): a product's accumulators,
//! rounded to 16 bits, are the next product's A fragments. **Arithmetic** as [`crate::mma`]: each element of D is `c` and
//! the `K` products of the step summed in `f64` in ascending `k`, rounded
//! once to `f32`, a NaN canonical.

mod descriptor;

pub use descriptor::{b_swizzle, operand_descriptor, Descriptor, Major, Swizzle};
use tile_ir::DType;

/// The threads of a warpgroup.
pub const WARPGROUP: usize = 128;

/// The `K` of every `wgmma` on 16-bit operands.
pub const K: usize = 16;

/// The bytes of a row of A (and of a K-major B) one instruction reads:
/// its `K` is this many bytes of its operands' elements.
pub const K_BYTES: usize = 32;

/// The rows of A (and of D) of every `wgmma`.
pub const M: usize = 64;

/// A `wgmma.mma_async.sync.aligned.m64nNkK.f32.<dtype>.<dtype>` with A
/// K-major in shared memory (or in registers) and B MN-major (`imm-trans-b
/// = 1`) or K-major (`imm-trans-b = 0`) in shared memory: `K` is 16 for
/// f16 and bf16, 32 for `e4m3` and `e5m2` and 8 for `tf32` (`f32`
/// elements whose low 13 bits the instruction does not read), whose
/// operands have no transposed form (both K-major, A from shared memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WgmmaKind {
    /// The operands' dtype: `f16`, `bf16`, `f8e4m3`, `f8e5m2`, or `f32`
    /// for `tf32`.
    pub dtype: DType,
    /// `N`: a multiple of 8 up to 256.
    pub n: usize,
    /// How B's rows run: [`Major::Mn`] (rows along K, as a row-major `K ×
    /// N` tile) or [`Major::K`] (rows along N: a row-major `N × K` tile,
    /// B transposed).
    pub b_major: Major,
}

impl WgmmaKind {
    /// The instruction for `dtype` operands and `n` columns with B
    /// MN-major (K-major for 8-bit and `tf32` operands, which have no other
    /// form), if it exists.
    pub fn new(dtype: DType, n: usize) -> Option<WgmmaKind> {
        let valid = matches!(
            dtype,
            DType::F16 | DType::BF16 | DType::F8E4M3 | DType::F8E5M2 | DType::F32
        ) && n.is_multiple_of(8)
            && (8..=256).contains(&n);
        let b_major = match dtype.size_bytes() {
            2 => Major::Mn,
            _ => Major::K,
        };
        valid.then_some(WgmmaKind { dtype, n, b_major })
    }

    /// Whether B may be read `b_major`: either way for 16-bit operands,
    /// K-major only for 8-bit and `tf32` ones.
    pub fn allows_b_major(self, b_major: Major) -> bool {
        b_major == Major::K || !self.k_major_only()
    }

    /// Whether both operands must be K-major: 8-bit and `tf32` operands,
    /// for which the instruction has no `imm-trans` operands.
    pub fn k_major_only(self) -> bool {
        self.dtype.size_bytes() != 2
    }

    /// The instruction's `K`: [`K_BYTES`] of its operands' elements (16,
    /// 32 or 8).
    pub fn k(self) -> usize {
        K_BYTES / self.dtype.size_bytes()
    }

    /// The same instruction with B's rows running as `b_major` says.
    pub fn with_b_major(self, b_major: Major) -> WgmmaKind {
        WgmmaKind { b_major, ..self }
    }

    /// `imm-trans-b`: 1 for an MN-major B, 0 for a K-major one.
    pub fn trans_b(self) -> u8 {
        u8::from(self.b_major == Major::Mn)
    }

    /// The `f32` accumulators each thread holds: `N / 2`.
    pub fn accumulators(self) -> usize {
        self.n / 2
    }

    /// The instruction's code in an emulation call: the dtype's (1 for f16,
    /// 2 for bf16, 3 for `e4m3`, 4 for `e5m2`, 5 for `tf32`), `n << 8`, and
    /// bit 20 for a K-major B.
    pub fn code(self) -> u64 {
        let dtype = match self.dtype {
            DType::BF16 => 2,
            DType::F8E4M3 => 3,
            DType::F8E5M2 => 4,
            DType::F32 => 5,
            _ => 1,
        };
        let k_major = u64::from(self.b_major == Major::K) << B_K_MAJOR_BIT;
        dtype | ((self.n as u64) << 8) | k_major
    }

    /// The instruction of `code`, if it is one.
    pub fn from_code(code: u64) -> Option<WgmmaKind> {
        let dtype = match code & 0xff {
            1 => DType::F16,
            2 => DType::BF16,
            3 => DType::F8E4M3,
            4 => DType::F8E5M2,
            5 => DType::F32,
            _ => return None,
        };
        let b_major = match (code >> B_K_MAJOR_BIT) & 1 {
            1 => Major::K,
            _ => Major::Mn,
        };
        let n = (code >> 8) & ((1 << (B_K_MAJOR_BIT - 8)) - 1);
        if code >> (B_K_MAJOR_BIT + 1) != 0 {
            return None;
        }
        let kind = WgmmaKind::new(dtype, n as usize)?;
        kind.allows_b_major(b_major)
            .then_some(kind.with_b_major(b_major))
    }

    /// Its name in thread-level programs: `m64n64k16.f16`, with `.bk` after
    /// it for a K-major B (`m64n64k32.f8e4m3.bk`, `m64n64k8.f32.bk`).
    pub fn name(self) -> String {
        let b = if self.b_major == Major::K { ".bk" } else { "" };
        format!("m64n{}k{}.{}{b}", self.n, self.k(), self.dtype)
    }

    /// The operand type's name in PTX: `f16`, `bf16`, `e4m3`, `e5m2`,
    /// `tf32`.
    pub fn ptx_type(self) -> &'static str {
        ptx_type(self.dtype)
    }

    /// The `f32` value of an operand element with bits `bits` (in the low
    /// bits for 8- and 16-bit operands; a `tf32`'s low 13 bits not read).
    pub fn widen(self, bits: u32) -> f32 {
        crate::mma::operand_value(self.dtype, bits)
    }
}

/// The operand types of `wgmma` and `tcgen05.mma` as PTX names them, by
/// the dtype that holds their elements (`tf32` in `f32`).
const PTX_TYPES: [(DType, &str); 5] = [
    (DType::F16, "f16"),
    (DType::BF16, "bf16"),
    (DType::F8E4M3, "e4m3"),
    (DType::F8E5M2, "e5m2"),
    (DType::F32, "tf32"),
];

/// The PTX name of a tensor-core operand type held in `dtype` (`f16` for
/// a dtype no instruction takes).
pub fn ptx_type(dtype: DType) -> &'static str {
    PTX_TYPES
        .iter()
        .find(|&&(d, _)| d == dtype)
        .map_or("f16", |&(_, name)| name)
}

/// The dtype that holds the elements of the PTX operand type `name`, if it
/// is one of [`ptx_type`]'s.
pub fn ptx_dtype(name: &str) -> Option<DType> {
    PTX_TYPES.iter().find(|&&(_, n)| n == name).map(|&(d, _)| d)
}

/// The bit of [`WgmmaKind::code`] that marks a K-major B.
const B_K_MAJOR_BIT: u32 = 20;

/// The `(row, column)` of D that element `i` of warpgroup thread `thread`
/// holds (see the module docs).
pub fn accumulator_element(thread: usize, i: usize) -> (usize, usize) {
    let (w, g, t) = (thread / 32, (thread % 32) / 4, thread % 4);
    (16 * w + g + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * t + i % 2)
}

/// The `(row, column)` of A that element `i` (of 8) of warpgroup thread
/// `thread` holds when A comes from registers (see the module docs).
pub fn register_a_element(thread: usize, i: usize) -> (usize, usize) {
    accumulator_element(thread, i % 8)
}

/// The 16-bit elements held by each register A fragment of a warpgroup:
/// 8 per thread, 4 `.b32` registers.
pub const REGISTER_A_ELEMENTS: usize = 8;

/// One warpgroup's instruction of `kind`: `a` (64×`K`) and `b` (`K`×N)
/// row-major as read from shared memory, `c[T]` thread `T`'s accumulators;
/// the D of each thread, with the arithmetic of the module docs.
pub fn warpgroup_mma(
    kind: WgmmaKind,
    a: &[f32],
    b: &[f32],
    c: &[Vec<f32>],
) -> Result<Vec<Vec<f32>>, String> {
    let (n, k) = (kind.n, kind.k());
    if a.len() != M * k || b.len() != k * n || c.len() != WARPGROUP {
        return Err(format!(
            "operands of {} and {} elements and {} threads for {}",
            a.len(),
            b.len(),
            c.len(),
            kind.name()
        ));
    }
    let mut matrix_c = vec![0.0f32; M * n];
    for (thread, regs) in c.iter().enumerate() {
        if regs.len() != kind.accumulators() {
            return Err(format!(
                "thread {thread} passes {} accumulators, not {}",
                regs.len(),
                kind.accumulators()
            ));
        }
        for (i, &v) in regs.iter().enumerate() {
            let (row, col) = accumulator_element(thread, i);
            matrix_c[row * n + col] = v;
        }
    }
    let d: Vec<f32> = (0..M * n)
        .map(|e| {
            let (row, col) = (e / n, e % n);
            let products = (0..k).map(|kk| (a[row * k + kk], b[kk * n + col]));
            crate::mma::step_sum(matrix_c[e], products)
        })
        .collect();
    Ok((0..WARPGROUP)
        .map(|thread| {
            (0..kind.accumulators())
                .map(|i| {
                    let (row, col) = accumulator_element(thread, i);
                    d[row * n + col]
                })
                .collect()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The accumulators of the 64×N block are held once each, warp `w`
    /// owning rows `16w..16w+16`, as CuTe's `CLayout_64xN`
    /// (`((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512))` into the column-major
    /// 64×N block) has it.
    #[test]
    fn accumulators_cover_the_block_once_as_cute_lays_them_out() {
        for n in [8, 64, 256] {
            let mut seen = vec![0; M * n];
            for thread in 0..WARPGROUP {
                for i in 0..n / 2 {
                    let (row, col) = accumulator_element(thread, i);
                    seen[row * n + col] += 1;
                    // CuTe: thread modes (4,8,4):(128,1,16), value modes
                    // (2,2,N/8):(64,8,512), offset = row + 64·column.
                    let (t, g, w) = (thread % 4, (thread / 4) % 8, thread / 32);
                    let (v0, v1, v2) = (i % 2, (i / 2) % 2, i / 4);
                    let offset = t * 128 + g + w * 16 + v0 * 64 + v1 * 8 + v2 * 512;
                    assert_eq!((row, col), (offset % 64, offset / 64), "T{thread} i{i}");
                }
            }
            assert!(seen.iter().all(|&s| s == 1), "n = {n}");
        }
    }

    /// A's register fragments cover the 64×16 A once each as CuTe's
    /// `ALayout_64x16` (`((4,8,4),(2,2,2)):((128,1,16),(64,8,512))` into
    /// the column-major 64×16 A) lays them out.
    #[test]
    fn register_a_fragments_are_cutes_a_layout() {
        let mut seen = vec![0; M * K];
        for thread in 0..WARPGROUP {
            for i in 0..REGISTER_A_ELEMENTS {
                let (row, col) = register_a_element(thread, i);
                seen[row * K + col] += 1;
                let (t, g, w) = (thread % 4, (thread / 4) % 8, thread / 32);
                let offset =
                    t * 128 + g + w * 16 + (i % 2) * 64 + ((i / 2) % 2) * 8 + (i / 4) * 512;
                assert_eq!((row, col), (offset % 64, offset / 64), "T{thread} i{i}");
            }
        }
        assert!(seen.iter().all(|&s| s == 1));
    }

    /// FP8 instructions: `K` of 32, B K-major only, named and coded apart
    /// from the 16-bit ones, their operands read from the low byte.
    #[test]
    fn fp8_instructions_step_32_k_major() {
        for (dtype, ptx) in [(DType::F8E4M3, "e4m3"), (DType::F8E5M2, "e5m2")] {
            let kind = WgmmaKind::new(dtype, 64).unwrap();
            assert_eq!(
                (kind.k(), kind.b_major, kind.ptx_type()),
                (32, Major::K, ptx)
            );
            assert!(kind.k_major_only() && !kind.allows_b_major(Major::Mn));
            assert_eq!(kind.name(), format!("m64n64k32.{dtype}.bk"));
            assert_eq!(WgmmaKind::from_code(kind.code()), Some(kind));
            let mn = kind.with_b_major(Major::Mn);
            assert_eq!(WgmmaKind::from_code(mn.code()), None);
            assert_eq!(b_swizzle(Swizzle::B64, Major::K), Swizzle::B64);
            assert_eq!(b_swizzle(Swizzle::B64, Major::Mn), Swizzle::B128);
        }
        let f16 = WgmmaKind::new(DType::F16, 64).unwrap();
        assert_eq!((f16.k(), f16.b_major), (16, Major::Mn));
        assert_eq!(b_swizzle(Swizzle::B64, Major::K), Swizzle::B64);
        let e4m3 = WgmmaKind::new(DType::F8E4M3, 8).unwrap();
        // 0x38 is 1.0 in E4M3, 0xb8 is −1.0; the high byte is not read.
        assert_eq!(e4m3.widen(0xff38), 1.0);
        assert_eq!(e4m3.widen(0x00b8), -1.0);
        let e5m2 = WgmmaKind::new(DType::F8E5M2, 8).unwrap();
        assert_eq!(e5m2.widen(0x3c), 1.0);
        // One step sums 32 products: D[0][0] = 1 + 32·(2·0.5).
        let (mut a, mut b) = (vec![0.0f32; M * 32], vec![0.0f32; 32 * 8]);
        a[..32].fill(2.0);
        b.iter_mut().step_by(8).for_each(|v| *v = 0.5);
        let c = vec![vec![1.0f32; 4]; WARPGROUP];
        let d = warpgroup_mma(e4m3, &a, &b, &c).unwrap();
        assert_eq!((d[0][0], d[0][1]), (33.0, 1.0));
        assert!(warpgroup_mma(e4m3, &a[..M * K], &b, &c).is_err());
    }

    /// TF32 instructions: `K` of 8, B K-major only, `tf32` in PTX, and
    /// an `f32` operand read without its low 13 bits (the hardware
    /// truncates; the lowering rounds the staged operands first).
    #[test]
    fn tf32_instructions_step_8_k_major_and_ignore_the_low_bits() {
        let kind = WgmmaKind::new(DType::F32, 128).unwrap();
        assert_eq!(
            (kind.k(), kind.b_major, kind.ptx_type()),
            (8, Major::K, "tf32")
        );
        assert!(kind.k_major_only() && !kind.allows_b_major(Major::Mn));
        assert_eq!(kind.name(), "m64n128k8.f32.bk");
        assert_eq!(WgmmaKind::from_code(kind.code()), Some(kind));
        assert_eq!(ptx_dtype("tf32"), Some(DType::F32));
        assert_eq!(ptx_dtype("f32"), None);
        assert_eq!(b_swizzle(Swizzle::B64, Major::K), Swizzle::B64);
        // 1 + 2⁻¹⁰ − 2⁻²³ keeps 1.0 (its low 13 bits dropped, not rounded).
        assert_eq!(kind.widen(0x3f80_1fff), 1.0);
        assert_eq!(kind.widen(0xbf80_2000), -(1.0 + 2f32.powi(-10)));
    }

    #[test]
    fn a_step_sums_sixteen_products_and_rounds_once() {
        let kind = WgmmaKind::new(DType::F16, 8).unwrap();
        let mut a = vec![0.0f32; M * K];
        let mut b = vec![0.0f32; K * 8];
        a[0] = 2f32.powi(-12);
        a[1] = 2f32.powi(-12);
        b[0] = 2f32.powi(-12);
        b[8] = 2f32.powi(-12);
        let c = vec![vec![1.0f32; 4]; WARPGROUP];
        let d = warpgroup_mma(kind, &a, &b, &c).unwrap();
        // Thread 0 element 0 is D[0][0]: 1 + 2⁻²⁴ + 2⁻²⁴ rounded once.
        assert_eq!(d[0][0], 1.0 + 2f32.powi(-23));
        assert_eq!(d[0][1], 1.0);
        assert!(WgmmaKind::new(DType::F64, 64).is_none());
        assert!(WgmmaKind::new(DType::F16, 12).is_none());
        let kind = WgmmaKind::new(DType::BF16, 64).unwrap();
        assert_eq!(WgmmaKind::from_code(kind.code()), Some(kind));
        assert_eq!(kind.name(), "m64n64k16.bf16");
        assert_eq!(kind.trans_b(), 1);
        let transposed = kind.with_b_major(Major::K);
        assert_eq!(WgmmaKind::from_code(transposed.code()), Some(transposed));
        assert_eq!(transposed.name(), "m64n64k16.bf16.bk");
        assert_eq!(transposed.trans_b(), 0);
        assert_eq!(WgmmaKind::from_code(kind.code() | 1 << 21), None);
    }
}

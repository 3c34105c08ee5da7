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
//! **Arithmetic.** The tile IR's `dot` with precision `tensor` lets a
//! device sum a step's products in any order within a bound
//! (`tile_ir::DotPrecision`). The emulators pick one exact order so that
//! they agree with each other bit for bit: each element of D is `c`
//! followed by the step's `K` products in ascending `k`, summed in `f64`
//! (the products of 16-bit floats are exact there) and rounded once to
//! `f32`; a NaN result is the canonical `f32` NaN.

/// A warp-wide matrix multiply-accumulate instruction the targets use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u64)]
pub enum MmaKind {
    /// `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`.
    F16M16N8K16 = 1,
    /// `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`.
    Bf16M16N8K16 = 2,
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
    /// Every instruction.
    pub const ALL: [MmaKind; 2] = [MmaKind::F16M16N8K16, MmaKind::Bf16M16N8K16];

    /// The instruction encoded as `code`.
    pub fn from_u64(code: u64) -> Option<MmaKind> {
        MmaKind::ALL.into_iter().find(|k| *k as u64 == code)
    }

    /// The dtype of the A and B elements.
    pub fn operand_dtype(self) -> tile_ir::DType {
        match self {
            MmaKind::F16M16N8K16 => tile_ir::DType::F16,
            MmaKind::Bf16M16N8K16 => tile_ir::DType::BF16,
        }
    }

    /// The instruction for operands of `dtype`, if there is one.
    pub fn for_operands(dtype: tile_ir::DType) -> Option<MmaKind> {
        MmaKind::ALL
            .into_iter()
            .find(|k| k.operand_dtype() == dtype)
    }

    /// The instruction's name in thread-level programs: `m16n8k16.f16`.
    pub fn name(self) -> String {
        let (m, n, k) = self.shape();
        format!("m{m}n{n}k{k}.{}", self.operand_dtype())
    }

    /// The instruction's `(M, N, K)`.
    pub fn shape(self) -> (usize, usize, usize) {
        (16, 8, 16)
    }

    /// The elements per lane of a fragment.
    pub fn elements(self, fragment: Fragment) -> usize {
        match fragment {
            Fragment::A => 8,
            Fragment::B | Fragment::C => 4,
        }
    }

    /// The `(row, column)` of the matrix element that element `i` of `lane`'s
    /// `fragment` holds (see the module docs).
    pub fn element(self, fragment: Fragment, lane: usize, i: usize) -> (usize, usize) {
        let (g, t) = (lane / 4, lane % 4);
        match fragment {
            Fragment::A => (g + 8 * ((i / 2) % 2), 2 * t + i % 2 + 8 * (i / 4)),
            Fragment::B => (2 * t + i % 2 + 8 * (i / 2), g),
            Fragment::C => (g + 8 * (i / 2), 2 * t + i % 2),
        }
    }

    /// `c + a · b` for row-major `a` (`M × K`), `b` (`K × N`) and `c` (`M ×
    /// N`), with the arithmetic of the module docs.
    pub fn step(self, a: &[f32], b: &[f32], c: &[f32]) -> Vec<f32> {
        let (m, n, k) = self.shape();
        let mut d = Vec::with_capacity(m * n);
        for row in 0..m {
            for col in 0..n {
                let sum = (0..k).fold(f64::from(c[row * n + col]), |acc, kk| {
                    acc + f64::from(a[row * k + kk]) * f64::from(b[kk * n + col])
                });
                let rounded = sum as f32;
                d.push(if rounded.is_nan() { f32::NAN } else { rounded });
            }
        }
        d
    }

    /// The `f32` value of a 16-bit operand element with bits `bits`.
    pub fn widen(self, bits: u16) -> f32 {
        match self {
            MmaKind::F16M16N8K16 => half::f16::from_bits(bits).to_f32(),
            MmaKind::Bf16M16N8K16 => half::bf16::from_bits(bits).to_f32(),
        }
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

/// One warp's instruction, from the fragments of its 32 lanes: the `D`
/// fragment of each lane. `a[l]`, `b[l]` and `c[l]` are lane `l`'s
/// elements (16-bit operand bits, `f32` accumulators).
pub fn warp_mma(kind: MmaKind, a: &[Vec<u16>], b: &[Vec<u16>], c: &[Vec<f32>]) -> Vec<Vec<f32>> {
    let (m, n, k) = kind.shape();
    let mut ma = vec![0.0f32; m * k];
    let mut mb = vec![0.0f32; k * n];
    let mut mc = vec![0.0f32; m * n];
    for lane in 0..32 {
        for (i, &bits) in a[lane].iter().enumerate() {
            let (row, col) = kind.element(Fragment::A, lane, i);
            ma[row * k + col] = kind.widen(bits);
        }
        for (i, &bits) in b[lane].iter().enumerate() {
            let (row, col) = kind.element(Fragment::B, lane, i);
            mb[row * n + col] = kind.widen(bits);
        }
        for (i, &v) in c[lane].iter().enumerate() {
            let (row, col) = kind.element(Fragment::C, lane, i);
            mc[row * n + col] = v;
        }
    }
    let d = kind.step(&ma, &mb, &mc);
    (0..32)
        .map(|lane| {
            (0..kind.elements(Fragment::C))
                .map(|i| {
                    let (row, col) = kind.element(Fragment::C, lane, i);
                    d[row * n + col]
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every element of every fragment is held by exactly one lane.
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
                for lane in 0..32 {
                    for i in 0..kind.elements(fragment) {
                        let (r, c) = kind.element(fragment, lane, i);
                        seen[r * cols + c] += 1;
                    }
                }
                assert!(seen.iter().all(|&s| s == 1), "{kind:?} {fragment:?}");
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

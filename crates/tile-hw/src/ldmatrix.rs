//! PTX `ldmatrix`: a warp's load of 8×8 matrices of 16-bit elements from
//! shared memory into the registers of the `mma.sync` fragments ([`crate::mma`]),
//! as both emulators model it.

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

#[cfg(test)]
mod tests {
    use super::*;

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
}

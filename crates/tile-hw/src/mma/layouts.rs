//! Where each element of an instruction's fragments, and each of its
//! block scales, sits: the tables of the module docs as functions.

use super::{Fragment, MmaFamily, MmaKind};

impl MmaKind {
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
            (MmaFamily::Wmma12, Fragment::A) if self.is_fp8() => (lane % 16, i + 8 * (lane / 16)),
            (MmaFamily::Wmma12, Fragment::B) if self.is_fp8() => (i + 8 * (lane / 16), lane % 16),
            (MmaFamily::Wmma12, Fragment::A) => (lane % 16, i % 4 + 4 * (lane / 16) + 8 * (i / 4)),
            (MmaFamily::Wmma12, Fragment::B) => (i % 4 + 4 * (lane / 16) + 8 * (i / 4), lane % 16),
            (MmaFamily::Wmma12, Fragment::C) => (8 * (lane / 16) + i, lane % 16),
            (MmaFamily::Mfma, _) => self.mfma_element(fragment, lane, i),
        }
    }

    /// The row of A (`fragment` A) or the column of B (B), and the group
    /// of 32 `k` of the step, whose scale `lane` supplies to a block-scaled
    /// instruction (module docs, "Block scales").
    pub fn scale_holder(self, fragment: Fragment, lane: usize) -> (usize, usize) {
        let (g, t) = (lane / 4, lane % 4);
        let (side, _, _) = self.shape();
        match (self.family(), fragment) {
            (MmaFamily::Mfma, _) => (lane % side, lane / side),
            (_, Fragment::A) => (g + 8 * (t % 2), 0),
            (_, Fragment::B | Fragment::C) => (g, 0),
        }
    }

    /// [`element`](Self::element) for MFMA, the calculator's table of the
    /// module docs.
    fn mfma_element(self, fragment: Fragment, lane: usize, i: usize) -> (usize, usize) {
        // A block's side `s` (32 or 16) and the `k` a lane holds (4 or 8).
        let (s, _, k) = self.shape();
        let e = self.elements(Fragment::A);
        // The scaled forms' 32 `k` a lane: two runs of 16, `K / 2` apart.
        let scaled_k = |i: usize| 16 * (lane / s) + i % 16 + (k / 2) * (i / 16);
        match fragment {
            Fragment::A if self.is_block_scaled() => (lane % s, scaled_k(i)),
            Fragment::B if self.is_block_scaled() => (scaled_k(i), lane % s),
            Fragment::A => (lane % s, e * (lane / s) + i),
            Fragment::B => (e * (lane / s) + i, lane % s),
            Fragment::C if s == 32 => (8 * (i / 4) + 4 * (lane / 32) + i % 4, lane % 32),
            Fragment::C => (4 * (lane / 16) + i, lane % 16),
        }
    }
}

//! Shared-memory bank conflicts, counted as on NVIDIA GPUs.
//!
//! Shared memory has 32 banks of 4-byte words (word `w` lies in bank
//! `w % 32`). A warp-wide access is served in as many *wavefronts* as the
//! largest number of distinct words any one bank is asked for; lanes reading
//! the same word share it (a broadcast is free). The conflicts of an access
//! are its wavefronts beyond the first. Element `i` of an allocation of
//! `bytes`-byte elements occupies bytes `i·bytes ..` from the allocation's
//! start (allocations are word-aligned, so their placement does not change
//! the count).

use std::collections::BTreeSet;

/// The number of banks.
pub const BANKS: u64 = 32;

/// The statistics of an emulated run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Warp-wide shared-memory accesses (`ld.shared`, and `st.shared` with at
    /// least one lane's mask true).
    pub shared_accesses: u64,
    /// Extra wavefronts of those accesses caused by bank conflicts.
    pub bank_conflicts: u64,
}

impl RunStats {
    /// Records one warp-wide access of the elements at `indices` (one per
    /// active lane) of an allocation of `bytes`-byte elements.
    pub(super) fn access(&mut self, bytes: usize, indices: impl IntoIterator<Item = i64>) {
        if let Some(wavefronts) = wavefronts(bytes, indices) {
            self.shared_accesses += 1;
            self.bank_conflicts += wavefronts - 1;
        }
    }

    /// Records one warp-wide access of `bytes` per lane, lane by lane
    /// (`None`: the lane is masked off), at element `indices` of that size.
    /// Accesses of 8 and 16 bytes per lane are served in phases of 16 and 8
    /// lanes (half- and quarter-warps), each at least one wavefront: the
    /// conflicts are the wavefronts beyond one per phase with an active
    /// lane.
    pub(super) fn access_by_lanes(
        &mut self,
        bytes: usize,
        lanes: impl IntoIterator<Item = Option<i64>>,
    ) {
        let lanes: Vec<Option<i64>> = lanes.into_iter().collect();
        let phase = (128 / bytes.max(4)).max(1);
        let mut any = false;
        for part in lanes.chunks(phase) {
            if let Some(wavefronts) = wavefronts(bytes, part.iter().flatten().copied()) {
                any = true;
                self.bank_conflicts += wavefronts - 1;
            }
        }
        if any {
            self.shared_accesses += 1;
        }
    }
}

/// The wavefronts of one phase of accesses of the `bytes`-byte elements at
/// `indices`, if there is any.
fn wavefronts(bytes: usize, indices: impl IntoIterator<Item = i64>) -> Option<u64> {
    let mut words = vec![BTreeSet::new(); BANKS as usize];
    let mut any = false;
    for i in indices {
        any = true;
        let start = i as u64 * bytes as u64;
        for word in start / 4..=(start + bytes as u64 - 1) / 4 {
            words[(word % BANKS) as usize].insert(word);
        }
    }
    any.then(|| words.iter().map(BTreeSet::len).max().unwrap_or(1) as u64)
}

#[cfg(test)]
mod tests {
    use super::RunStats;

    fn conflicts(bytes: usize, indices: &[i64]) -> u64 {
        let mut stats = RunStats::default();
        stats.access(bytes, indices.iter().copied());
        stats.bank_conflicts
    }

    #[test]
    fn distinct_banks_and_broadcasts_are_free() {
        assert_eq!(conflicts(4, &(0..32).collect::<Vec<_>>()), 0);
        assert_eq!(conflicts(4, &[5; 32]), 0);
        // Two f16 elements share a word.
        assert_eq!(conflicts(2, &(0..64).step_by(2).collect::<Vec<_>>()), 0);
    }

    /// The conflicts of one warp access of `bytes` per lane at `indices`,
    /// in phases.
    fn by_lanes(bytes: usize, indices: &[Option<i64>]) -> u64 {
        let mut stats = RunStats::default();
        stats.access_by_lanes(bytes, indices.iter().copied());
        stats.bank_conflicts
    }

    #[test]
    fn vectors_are_served_in_phases() {
        // 16-byte vectors of 32 lanes side by side: four quarter-warps, each
        // over all 32 banks once.
        let lanes: Vec<Option<i64>> = (0..32).map(Some).collect();
        assert_eq!(by_lanes(16, &lanes), 0);
        // One phase's 8 lanes two rows of banks apart: 8 words per bank.
        let strided: Vec<Option<i64>> = (0..32).map(|l| Some(l * 8)).collect();
        assert_eq!(by_lanes(16, &strided), 4 * 7);
        // 8-byte elements in half-warps; a masked-off lane keeps its place.
        let lanes: Vec<Option<i64>> = (0..32).map(|l| (l != 3).then_some(l)).collect();
        assert_eq!(by_lanes(8, &lanes), 0);
        // Scalar accesses as one phase, as `access` counts them.
        let column: Vec<Option<i64>> = (0..32).map(|r| Some(r * 32)).collect();
        assert_eq!(by_lanes(4, &column), 31);
    }

    #[test]
    fn strided_accesses_conflict() {
        // A column of a 32-wide f32 tile: 32 words in bank 0.
        assert_eq!(
            conflicts(4, &(0..32).map(|r| r * 32).collect::<Vec<_>>()),
            31
        );
        // Stride 2: two words per bank.
        assert_eq!(conflicts(4, &(0..32).map(|r| r * 2).collect::<Vec<_>>()), 1);
        // 8-byte elements: 32 lanes cover 64 words, two per bank.
        assert_eq!(conflicts(8, &(0..32).collect::<Vec<_>>()), 1);
    }
}

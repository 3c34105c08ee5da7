//! What a lane reads in a warp or wave exchange, from the instruction set
//! manuals rather than from the compiler's lowering:
//!
//! * PTX `shfl.sync` (ISA 8.x, "Data Movement and Conversion
//!   Instructions: shfl.sync"): with `c = (segmask << 8) | clamp`, a lane
//!   computes `minLane = lane & segmask`, `maxLane = minLane | (clamp &
//!   !segmask)`, its source `j` by mode (`up`: `lane - b`, valid when `j >=
//!   maxLane`; `down`: `lane + b`, valid when `j <= maxLane`; `bfly`: `lane ^
//!   b`, valid when `j <= maxLane`; `idx`: `minLane | (b & !segmask)`, valid
//!   when `j <= maxLane`), and reads lane `j`'s value when valid, its own
//!   otherwise;
//! * AMDGPU `ds_bpermute_b32` (CDNA 3 ISA, "DS_BPERMUTE_B32"): a lane reads
//!   the value of lane `(address >> 2) mod wave size`;
//! * AMDGPU `ds_swizzle_b32` (CDNA 3 ISA, "DS_SWIZZLE_B32"), bit mode
//!   (offset bit 15 clear): within each group of 32 lanes, lane `i` reads
//!   lane `((i & and_mask) | or_mask) ^ xor_mask`, the masks in offset bits
//!   0–4, 5–9 and 10–14;
//! * AMDGPU DPP `quad_perm` (CDNA 3 ISA, "DPP_CTRL", controls 0x00–0xff):
//!   within each group of 4 lanes, lane `i` reads lane `(ctrl >> 2i) & 3`.

use tile_abi::emulation::ShuffleMode;

/// The lane `lane` reads in `shfl.sync` with `mode`, operand `b` and
/// operand `c`.
pub(crate) fn shuffle_source(mode: ShuffleMode, lane: u32, b: u32, c: u32) -> u32 {
    let (b, clamp, segmask) = (b & 0x1f, c & 0x1f, (c >> 8) & 0x1f);
    let min_lane = lane & segmask;
    let max_lane = min_lane | (clamp & !segmask);
    let (j, valid) = match mode {
        ShuffleMode::Up => {
            let j = lane as i64 - b as i64;
            (j, j >= max_lane as i64)
        }
        ShuffleMode::Down => {
            let j = (lane + b) as i64;
            (j, j <= max_lane as i64)
        }
        ShuffleMode::Bfly => {
            let j = (lane ^ b) as i64;
            (j, j <= max_lane as i64)
        }
        ShuffleMode::Idx => {
            let j = (min_lane | (b & !segmask)) as i64;
            (j, j <= max_lane as i64)
        }
    };
    if valid {
        j as u32
    } else {
        lane
    }
}

/// The lane of a wave of `wave` lanes that `ds_bpermute` with byte address
/// `address` reads.
pub(crate) fn bpermute_source(address: u32, wave: u32) -> u32 {
    (address >> 2) % wave
}

/// The lane of a wave of `wave` lanes that `lane` reads in
/// [`RuntimeCall::LanePermute`](tile_abi::emulation::RuntimeCall::LanePermute)
/// of `pattern` in `mode` (0: a `ds_swizzle_b32` offset, 1: a `quad_perm`
/// control, 2: `v_readlane`'s lane), or `None` for a pattern or mode
/// outside those modelled.
pub(crate) fn permute_source(pattern: u32, mode: u64, lane: u32, wave: u32) -> Option<u32> {
    match mode {
        0 => {
            let (and, or, xor) = (
                pattern & 0x1f,
                (pattern >> 5) & 0x1f,
                (pattern >> 10) & 0x1f,
            );
            (pattern < 0x8000).then_some((lane & !31) | ((((lane & 31) & and) | or) ^ xor))
        }
        1 => (pattern < 0x100).then_some((lane & !3) | ((pattern >> (2 * (lane & 3))) & 3)),
        2 => (pattern < wave).then_some(pattern),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `c` operand of a shuffle over segments of `width` lanes, as CUDA's
    /// `__shfl_*_sync(mask, v, b, width)` encodes it.
    fn c_of(mode: ShuffleMode, width: u32) -> u32 {
        let clamp = if mode == ShuffleMode::Up { 0 } else { 0x1f };
        ((32 - width) << 8) | clamp
    }

    /// CUDA's documented results for `__shfl_*_sync` with a `width`:
    /// sub-warps of `width` lanes, each its own shuffle.
    fn cuda_reference(mode: ShuffleMode, lane: u32, b: u32, width: u32) -> u32 {
        let base = lane / width * width;
        let local = lane % width;
        match mode {
            ShuffleMode::Idx => base + b % width,
            ShuffleMode::Up => {
                if local >= b {
                    lane - b
                } else {
                    lane
                }
            }
            ShuffleMode::Down => {
                if local + b < width {
                    lane + b
                } else {
                    lane
                }
            }
            ShuffleMode::Bfly => {
                let j = lane ^ b;
                if j / width == lane / width {
                    j
                } else {
                    lane
                }
            }
        }
    }

    #[test]
    fn shuffles_match_cuda_for_every_width_mode_lane_and_operand() {
        let modes = [
            ShuffleMode::Up,
            ShuffleMode::Down,
            ShuffleMode::Bfly,
            ShuffleMode::Idx,
        ];
        for mode in modes {
            for width in [1, 2, 4, 8, 16, 32] {
                for lane in 0..32 {
                    for b in 0..32 {
                        if mode == ShuffleMode::Bfly && b >= width {
                            continue;
                        }
                        assert_eq!(
                            shuffle_source(mode, lane, b, c_of(mode, width)),
                            cuda_reference(mode, lane, b, width),
                            "{mode:?} width {width} lane {lane} b {b}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn bpermute_reads_the_addressed_lane_of_the_wave() {
        assert_eq!(bpermute_source(4 * 5, 64), 5);
        assert_eq!(bpermute_source(4 * 70, 64), 6);
        assert_eq!(bpermute_source(4 * 33, 32), 1);
        assert_eq!(bpermute_source(4 * 31 + 3, 32), 31);
    }

    #[test]
    fn swizzles_quad_perms_and_lane_reads_read_the_lanes_the_manual_names() {
        // Bit mode: and 0x1f, xor 4 swaps lanes 4 apart within 32 lanes.
        let xor4 = 0x1f | (4 << 10);
        assert_eq!(permute_source(xor4, 0, 0, 64), Some(4));
        assert_eq!(permute_source(xor4, 0, 37, 64), Some(33));
        // and 0x18, or 1: lanes 8..16 read lane 9, in the second half too.
        let pick = 0x18 | (1 << 5);
        assert_eq!(permute_source(pick, 0, 12, 64), Some(9));
        assert_eq!(permute_source(pick, 0, 44, 64), Some(41));
        // quad_perm [1, 0, 3, 2] and [3, 2, 1, 0].
        assert_eq!(permute_source(0xb1, 1, 5, 64), Some(4));
        assert_eq!(permute_source(0xb1, 1, 6, 64), Some(7));
        assert_eq!(permute_source(0x1b, 1, 60, 64), Some(63));
        // A lane read is the same lane for every lane of the wave.
        assert_eq!(permute_source(37, 2, 5, 64), Some(37));
        assert_eq!(permute_source(37, 2, 5, 32), None);
        // Other swizzle modes and DPP controls are not modelled.
        assert_eq!(permute_source(0x8000, 0, 0, 64), None);
        assert_eq!(permute_source(0x130, 1, 0, 64), None);
    }
}

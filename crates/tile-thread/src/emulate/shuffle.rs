//! Warp shuffles with the semantics of PTX `shfl.sync` (all lanes active),
//! and their 64-lane form on a CDNA wave.

use crate::program::{shuffle_span, ShuffleMode, WAVE64};

/// The lanes a shuffle of `width` reads among ([`shuffle_span`]) in a block
/// of `threads`, or `None` for a width that is no power of two up to 64 or
/// whose span does not divide the block.
pub(super) fn span(width: u32, threads: u32) -> Option<u32> {
    let span = shuffle_span(width);
    (width.is_power_of_two() && width <= WAVE64 && threads.is_multiple_of(span)).then_some(span)
}

/// The source lane of `lane` (within its [span](shuffle_span)) for a
/// shuffle of `mode` with operand `b` over segments of `width` lanes, or
/// `lane` itself when the source falls outside the lane's segment (PTX:
/// `c = ((32 - width) << 8) | clamp`, with `clamp` 0 for `up` and
/// `width - 1` otherwise; over 64 lanes, the same with 6-bit lanes).
pub(super) fn source_lane(mode: ShuffleMode, lane: u32, b: i32, width: u32) -> u32 {
    let span = shuffle_span(width);
    let lanes = span - 1;
    let seg_mask = (span - width) & lanes;
    let min_lane = lane & seg_mask;
    let clamp = if mode == ShuffleMode::Up {
        0
    } else {
        width - 1
    };
    let max_lane = min_lane | clamp;
    let b = b as u32 & lanes;
    let (j, valid) = match mode {
        ShuffleMode::Up => {
            let j = lane as i64 - i64::from(b);
            (j, j >= i64::from(max_lane))
        }
        ShuffleMode::Down => {
            let j = i64::from(lane + b);
            (j, j <= i64::from(max_lane))
        }
        ShuffleMode::Bfly => {
            let j = i64::from(lane ^ b);
            (j, j <= i64::from(max_lane))
        }
        ShuffleMode::Idx => {
            let j = i64::from(min_lane | (b & !seg_mask & lanes));
            (j, j <= i64::from(max_lane))
        }
    };
    if valid {
        j as u32
    } else {
        lane
    }
}

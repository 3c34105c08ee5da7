//! The operands of `ld.global` and `st.global` by role, read in one place
//! for the verifier, the printer, the emulator and the GPU emitter.
//!
//! An access of `width` elements is, in operand order:
//!
//! ```text
//! width 1:  %addr,                          (%value,)  %mask   (, %other)
//! width w:  %addr, %ok, %lane_0..%lane_w-1, (%value…,) %mask…  (, %other…)
//! ```
//!
//! (values for a store, others for a load). A wide access is one vector
//! access at `%addr` where `%ok` holds; otherwise element `i` is accessed
//! at its own offset `%lane_i` where its mask holds. The lowering computes
//! `%ok` as the test that the tensor is contiguous and aligned for the
//! vector, and that every mask holds; where it holds, `%lane_i = %addr +
//! i`. (The emulator checks both promises.)

/// The operands of one global access, by role.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GlobalOperands<'a, T> {
    /// The element offset of element 0 of the vector access (of the only
    /// element at width 1).
    pub addr: &'a T,
    /// At width > 1, the condition for the vector access (which implies
    /// every mask).
    pub vector_ok: Option<&'a T>,
    /// Each element's own offset (at width 1, `addr`).
    pub lanes: &'a [T],
    /// The values a store writes (empty for a load).
    pub values: &'a [T],
    /// Whether each element is accessed.
    pub masks: &'a [T],
    /// The values a load yields where its mask is false (empty for a
    /// store).
    pub others: &'a [T],
}

impl<'a, T> GlobalOperands<'a, T> {
    /// The operands of an `ld.global` of `width` elements, if `operands`
    /// has their number.
    pub fn load(operands: &'a [T], width: usize) -> Option<Self> {
        let (addr, vector_ok, lanes, rest) = Self::head(operands, width)?;
        let (masks, others) = rest.split_at(width);
        Some(GlobalOperands {
            addr,
            vector_ok,
            lanes,
            values: &[],
            masks,
            others,
        })
    }

    /// The operands of an `st.global` of `width` elements, if `operands`
    /// has their number.
    pub fn store(operands: &'a [T], width: usize) -> Option<Self> {
        let (addr, vector_ok, lanes, rest) = Self::head(operands, width)?;
        let (values, masks) = rest.split_at(width);
        Some(GlobalOperands {
            addr,
            vector_ok,
            lanes,
            values,
            masks,
            others: &[],
        })
    }

    /// The number of operands of an access of `width` elements.
    pub fn count(width: usize) -> usize {
        match width {
            1 => 3,
            w => 2 + 3 * w,
        }
    }

    /// The address, the vector condition and the lanes, then the `2 ·
    /// width` operands that follow them.
    #[allow(clippy::type_complexity)]
    fn head(operands: &'a [T], width: usize) -> Option<(&'a T, Option<&'a T>, &'a [T], &'a [T])> {
        if width == 0 || operands.len() != Self::count(width) {
            return None;
        }
        let (addr, rest) = operands.split_first()?;
        if width == 1 {
            return Some((addr, None, &operands[..1], rest));
        }
        let (ok, rest) = rest.split_first()?;
        let (lanes, rest) = rest.split_at(width);
        Some((addr, Some(ok), lanes, rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_split_by_role() {
        let load = GlobalOperands::load(&[0, 1, 2], 1).unwrap();
        assert_eq!(
            (
                load.addr,
                load.vector_ok,
                load.lanes,
                load.masks,
                load.others
            ),
            (&0, None, &[0][..], &[1][..], &[2][..])
        );
        let ops: Vec<u32> = (0..8).collect();
        let store = GlobalOperands::store(&ops, 2).unwrap();
        assert_eq!(
            (
                store.addr,
                store.vector_ok,
                store.lanes,
                store.values,
                store.masks
            ),
            (&0, Some(&1), &[2, 3][..], &[4, 5][..], &[6, 7][..])
        );
        assert!(store.others.is_empty());
        assert_eq!(GlobalOperands::load(&ops[..7], 2), None);
        assert_eq!(GlobalOperands::<u32>::load(&[], 0), None);
    }
}

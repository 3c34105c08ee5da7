//! Splitting one axis of a blocked layout in two, holding every element
//! where it was: the layout of the operand of a `reshape` that merges two
//! axes (`[M, K / G, G]` into `[M, K]`), given the result's layout.
//!
//! The split keeps the numbers: when the padded extent `P[d]` is a multiple
//! of the inner extent `g`, the row-major offsets of `P` and of `P` with
//! `P[d]` written `[P[d] / g, g]` are the same offsets, so the `thread` and
//! `value` maps stay the same functions. Only their modes are cut where one
//! crosses from the inner axis into the outer (each mode then lies along
//! one axis, as `drop_axis`, `slice` and the lowering's coordinates need),
//! and the descriptive fields are split along the axis's mixed radix:
//! elements per thread, then lanes, then warps, then repetitions.

use super::blocked::row_major;
use super::{DistLayout, LayoutKind};
use tile_ir::layout::{IntTuple, Layout};

impl DistLayout {
    /// This layout with `axis` (of extent `S[d]`) split into an outer axis
    /// of extent `S[d] / inner` and an inner one of `inner`, every element
    /// in the same thread and register. `None` unless the layout is
    /// blocked, `inner` divides both the extent and the padded extent, the
    /// axis is not replicated, and the axis's elements per thread, lanes,
    /// warps and repetitions split at `inner` (powers of two always do).
    pub fn split_axis(&self, axis: usize, inner: usize) -> Option<DistLayout> {
        let extent = *self.shape.get(axis)?;
        let padded = self.padded[axis];
        let splits = self.kind == LayoutKind::Blocked
            && inner > 0
            && extent.is_multiple_of(inner)
            && padded.is_multiple_of(inner)
            && !self.replicated.contains(&axis);
        if !splits {
            return None;
        }
        let ps = self.padded_strides();
        let (spt, tpw, wpb) = (
            self.size_per_thread[axis],
            self.threads_per_warp[axis],
            self.warps_per_block[axis],
        );
        let reps = padded / (spt * tpw * wpb);
        let [(spt_o, spt_i), (tpw_o, tpw_i), (wpb_o, wpb_i), _] =
            radix_split([spt, tpw, wpb, reps], inner)?;
        let split = |v: &[usize], outer: usize, inner: usize| -> Vec<usize> {
            let mut out = v[..axis].to_vec();
            out.extend([outer, inner]);
            out.extend_from_slice(&v[axis + 1..]);
            out
        };
        let renumber = |d: usize| if d > axis { d + 1 } else { d };
        let order = self
            .order
            .iter()
            .flat_map(|&d| match d == axis {
                true => vec![axis + 1, axis],
                false => vec![renumber(d)],
            })
            .collect();
        let cut = |layout: &Layout| cut_modes(layout, &ps, axis, inner);
        let split_layout = DistLayout {
            kind: self.kind,
            shape: split(&self.shape, extent / inner, inner),
            size_per_thread: split(&self.size_per_thread, spt_o, spt_i),
            threads_per_warp: split(&self.threads_per_warp, tpw_o, tpw_i),
            warps_per_block: split(&self.warps_per_block, wpb_o, wpb_i),
            order,
            padded: split(&self.padded, padded / inner, inner),
            thread: cut(&self.thread)?,
            value: cut(&self.value)?,
            replicated: self.replicated.iter().map(|&d| renumber(d)).collect(),
        };
        debug_assert_eq!(
            row_major(&split_layout.padded)[axis],
            inner * ps[axis],
            "the split keeps the row-major offsets"
        );
        Some(split_layout)
    }
}

/// The radices `[r0, r1, ..]` of an axis (innermost first) each split as
/// `(outer, inner)` so that the inner parts multiply to `inner` and take
/// the innermost digits: `None` where a radix would have to be cut at a
/// non-divisor.
fn radix_split<const N: usize>(radices: [usize; N], inner: usize) -> Option<[(usize, usize); N]> {
    let mut left = inner;
    let mut parts = [(1, 1); N];
    for (part, &radix) in parts.iter_mut().zip(&radices) {
        let taken = if left >= radix {
            left.is_multiple_of(radix).then_some(radix)?
        } else {
            radix.is_multiple_of(left).then_some(left)?
        };
        *part = (radix / taken, taken);
        left /= taken;
    }
    (left == 1).then_some(parts)
}

/// `layout` (into row-major offsets of strides `ps`) with every mode along
/// `axis` that runs past `inner` elements cut in two at the boundary of
/// the inner axis: the same function, each mode along one axis of the
/// split shape. `None` where a mode would have to be cut off its grid.
fn cut_modes(layout: &Layout, ps: &[usize], axis: usize, inner: usize) -> Option<Layout> {
    let mut modes = Vec::new();
    let sizes = layout.shape().leaves();
    for (&size, &stride) in sizes.iter().zip(&layout.stride().leaves()) {
        let st = stride as usize;
        let along = st > 0 && ps.iter().position(|&p| p <= st) == Some(axis);
        if size <= 1 || !along {
            modes.push((size, stride));
            continue;
        }
        if !st.is_multiple_of(ps[axis]) {
            return None;
        }
        let step = st / ps[axis];
        let (size_u, reach) = (size as usize, step * size as usize);
        if step >= inner {
            step.is_multiple_of(inner).then_some(())?;
            modes.push((size, stride));
        } else if reach <= inner {
            modes.push((size, stride));
        } else {
            let first = inner.is_multiple_of(step).then_some(inner / step)?;
            size_u.is_multiple_of(first).then_some(())?;
            modes.push((first as i64, stride));
            modes.push(((size_u / first) as i64, (inner * ps[axis]) as i64));
        }
    }
    let (sizes, strides): (Vec<i64>, Vec<i64>) = modes.into_iter().unzip();
    Layout::new(IntTuple::flat(&sizes), IntTuple::flat(&strides)).ok()
}

/// The axis and inner extent of a `reshape` of `source` into `result` that
/// merges two adjacent axes and leaves the rest (`[M, G, g]` into
/// `[M, G·g]`): the result's layout split there holds the source.
pub(crate) fn merged_axes(source: &[usize], result: &[usize]) -> Option<(usize, usize)> {
    if source.len() != result.len() + 1 {
        return None;
    }
    let axis = (0..result.len()).find(|&d| source[d] != result[d])?;
    let merged =
        source[axis] * source[axis + 1] == result[axis] && source[axis + 2..] == result[axis + 1..];
    merged.then_some((axis, source[axis + 1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every live element of `split` lies in the same thread and register
    /// as in `whole`, at the coordinate that merges to the whole one.
    fn holds_alike(whole: &DistLayout, split: &DistLayout, axis: usize, threads: usize) {
        let inner = split.shape[axis + 1];
        for t in 0..threads {
            for v in 0..whole.registers() {
                let (w, w_live, _) = whole.coordinate(t, v);
                let (s, s_live, _) = split.coordinate(t, v);
                assert_eq!(w_live, s_live, "thread {t} register {v}");
                let mut merged = s[..axis].to_vec();
                merged.push(s[axis] * inner + s[axis + 1]);
                merged.extend_from_slice(&s[axis + 2..]);
                assert_eq!(merged, w, "thread {t} register {v}");
            }
        }
        assert_eq!(split.registers(), whole.registers());
        assert!(split.additive(), "{split}");
    }

    #[test]
    fn splits_keep_every_element_in_place() {
        // Vectors wider than the group, narrower than it, a group across
        // lanes and warps, and a padded outer axis.
        for (shape, warps, vec, axis, inner) in [
            (vec![128, 128], 8, 16, 1, 32),
            (vec![128, 128], 8, 8, 1, 32),
            (vec![128, 128], 8, 4, 1, 16),
            (vec![128, 128], 8, 4, 0, 32),
            (vec![64, 96], 4, 8, 1, 32),
            (vec![2, 64, 32], 4, 8, 1, 16),
        ] {
            let whole = DistLayout::blocked(&shape, warps, vec).unwrap();
            let split = whole
                .split_axis(axis, inner)
                .unwrap_or_else(|| panic!("{whole} at axis {axis} by {inner}"));
            holds_alike(&whole, &split, axis, 32 * warps as usize);
            // The inner axis drops into copies, as a scale repeated over it needs.
            let sliced = split.slice(axis + 1).drop_axis(axis + 1).unwrap();
            assert!(sliced.additive());
        }
    }

    #[test]
    fn register_copies_share_one_register() {
        // A scale per 32 columns of `[128, 128]` bytes in vectors of 16:
        // each thread's 16 registers of a row hold one scale.
        let whole = DistLayout::blocked(&[128, 128], 8, 16).unwrap();
        let scales = whole
            .split_axis(1, 32)
            .unwrap()
            .slice(2)
            .drop_axis(2)
            .unwrap();
        let (distinct, holder) = scales.without_register_copies().unwrap();
        assert_eq!((scales.registers(), distinct.registers()), (64, 4));
        for t in 0..256 {
            for (v, &u) in holder.iter().enumerate() {
                assert_eq!(scales.coordinate(t, v).0, distinct.coordinate(t, u).0);
            }
        }
        assert_eq!(distinct.without_register_copies(), None);
    }

    #[test]
    fn splits_that_would_move_elements_are_refused() {
        let whole = DistLayout::blocked(&[128, 96], 4, 4).unwrap();
        assert_eq!(whole.split_axis(1, 7), None, "not a divisor of the extent");
        assert_eq!(
            whole.split_axis(1, 96),
            None,
            "not a divisor of the padded extent"
        );
        assert_eq!(whole.slice(1).split_axis(1, 1).map(|l| l.shape), None);
        assert_eq!(merged_axes(&[4, 2, 32], &[4, 64]), Some((1, 32)));
        assert_eq!(merged_axes(&[4, 64], &[4, 2, 32]), None);
        assert_eq!(merged_axes(&[4, 2, 32], &[8, 32]), Some((0, 2)));
        assert_eq!(merged_axes(&[4, 2, 32], &[2, 128]), None);
    }
}

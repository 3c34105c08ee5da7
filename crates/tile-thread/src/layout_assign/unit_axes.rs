//! Axes of extent 1 inserted and moved, holding every element where it
//! was: the layout of the operand of a `reshape` that only moves unit axes
//! (a row of statistics loaded `[1, BM]` and viewed `[BM, 1]` to broadcast
//! over an accumulator's columns), given the result's layout.
//!
//! An axis of padded extent 1 changes no row-major offset of the padded
//! shape, so inserting one leaves the `thread` and `value` maps as they
//! are; dropping one ([`DistLayout::drop_axis`]) turns whatever threads or
//! registers it spread into copies.

use super::DistLayout;

impl DistLayout {
    /// This layout with a new axis of extent 1 at `axis` (`axis ≤ rank`),
    /// every element in the same thread and register; the new axis is the
    /// slowest. `None` for an axis past the end.
    pub fn insert_axis(&self, axis: usize) -> Option<DistLayout> {
        if axis > self.shape.len() {
            return None;
        }
        let insert = |v: &[usize]| -> Vec<usize> {
            let mut out = v.to_vec();
            out.insert(axis, 1);
            out
        };
        let renumber = |d: usize| if d >= axis { d + 1 } else { d };
        let mut order: Vec<usize> = self.order.iter().map(|&d| renumber(d)).collect();
        order.push(axis);
        Some(DistLayout {
            kind: self.kind,
            shape: insert(&self.shape),
            size_per_thread: insert(&self.size_per_thread),
            threads_per_warp: insert(&self.threads_per_warp),
            warps_per_block: insert(&self.warps_per_block),
            order,
            padded: insert(&self.padded),
            thread: self.thread.clone(),
            value: self.value.clone(),
            replicated: self.replicated.iter().map(|&d| renumber(d)).collect(),
        })
    }

    /// The layout of a tile of `shape` that is this layout's tile with its
    /// axes of extent 1 moved (the same other extents in the same order),
    /// every element in the same thread and register: this layout's unit
    /// axes dropped, `shape`'s inserted. `None` where the other extents
    /// differ or no axis is left once the unit ones are dropped.
    pub fn with_unit_axes_of(&self, shape: &[usize]) -> Option<DistLayout> {
        let others =
            |s: &[usize]| -> Vec<usize> { s.iter().copied().filter(|&e| e != 1).collect() };
        if others(&self.shape) != others(shape) || others(shape).is_empty() {
            return None;
        }
        let units: Vec<usize> = (0..self.shape.len())
            .filter(|&d| self.shape[d] == 1)
            .collect();
        let mut layout = self.drop_axes(&units)?;
        for d in (0..shape.len()).filter(|&d| shape[d] == 1) {
            layout = layout.insert_axis(d)?;
        }
        Some(layout)
    }
}

#[cfg(test)]
mod tests {
    use super::DistLayout;

    /// A `[128, 1]` slice of a `[128, 64]` layout, moved to `[1, 128]`:
    /// each thread holds the rows it held, in the same registers, with the
    /// copies the slice had.
    #[test]
    fn moved_unit_axes_hold_each_element_where_it_was() {
        let parent = DistLayout::blocked(&[128, 64], 4, 4).unwrap();
        let column = parent.slice(1);
        let row = column.with_unit_axes_of(&[1, 128]).unwrap();
        assert_eq!(row.shape, [1, 128]);
        assert_eq!(row.registers(), column.registers());
        for t in 0..128 {
            for v in 0..column.registers() {
                let (c, live, _) = column.coordinate(t, v);
                let (r, row_live, _) = row.coordinate(t, v);
                assert_eq!(
                    (r, row_live),
                    (vec![0, c[0]], live),
                    "thread {t}, register {v}"
                );
            }
        }
        // Back again: the slice's holders, now as copies of a dropped axis.
        let back = row.with_unit_axes_of(&[128, 1]).unwrap();
        assert_eq!(back.shape, [128, 1]);
        assert!(DistLayout::blocked(&[128, 64], 4, 4)
            .unwrap()
            .with_unit_axes_of(&[64, 128])
            .is_none());
    }
}

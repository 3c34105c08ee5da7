//! `element_map`: the buffer position of every coordinate, printed as a table.

use super::StridedView;

impl StridedView {
    /// Prints `index` for every coordinate as a right-aligned table, `.` for
    /// masked-out coordinates. The last axis runs along a row, the one before
    /// it down the rows; higher axes give one block each, headed by their
    /// coordinates (`[1, 0]`). Meant for docs, tests and debugging small views.
    ///
    /// ```
    /// use tile_tensor::strided::StridedView;
    /// let v = StridedView::contiguous(&[2, 2])?.pad(&[(1, 1), (1, 1)])?;
    /// assert_eq!(v.element_map(), ". . . .\n. 0 1 .\n. 2 3 .\n. . . .\n");
    /// # Ok::<(), tile_tensor::strided::StridedViewError>(())
    /// ```
    pub fn element_map(&self) -> String {
        let rank = self.rank();
        let cols = if rank >= 1 { self.shape[rank - 1] } else { 1 };
        let rows = if rank >= 2 { self.shape[rank - 2] } else { 1 };
        let outer = &self.shape[..rank.saturating_sub(2)];
        let blocks: Vec<Vec<usize>> = coordinates(outer);
        let cell = |prefix: &[usize], r: usize, c: usize| {
            let mut coord = prefix.to_vec();
            if rank >= 2 {
                coord.push(r);
            }
            if rank >= 1 {
                coord.push(c);
            }
            self.index(&coord)
                .map_or_else(|| ".".to_string(), |p| p.to_string())
        };
        let width = blocks
            .iter()
            .flat_map(|b| (0..rows).flat_map(move |r| (0..cols).map(move |c| (b, r, c))))
            .map(|(b, r, c)| cell(b, r, c).len())
            .max()
            .unwrap_or(1);
        let mut out = String::new();
        for (i, prefix) in blocks.iter().enumerate() {
            if rank > 2 {
                if i > 0 {
                    out.push('\n');
                }
                let head: Vec<String> = prefix.iter().map(usize::to_string).collect();
                out.push_str(&format!("[{}]\n", head.join(", ")));
            }
            for r in 0..rows {
                let line: Vec<String> = (0..cols)
                    .map(|c| format!("{:>width$}", cell(prefix, r, c)))
                    .collect();
                out.push_str(&line.join(" "));
                out.push('\n');
            }
        }
        out
    }
}

/// Every coordinate of `shape` in row-major order (one empty coordinate for rank 0).
fn coordinates(shape: &[usize]) -> Vec<Vec<usize>> {
    let mut all = vec![Vec::new()];
    for &size in shape {
        all = all
            .into_iter()
            .flat_map(|prefix| (0..size).map(move |i| [prefix.clone(), vec![i]].concat()))
            .collect();
    }
    all
}

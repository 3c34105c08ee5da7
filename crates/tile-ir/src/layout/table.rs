//! 2-D pictures of layouts: the offset of every (row, column) coordinate.

use std::fmt::Write;

use super::error::{LayoutError, Result};
use super::layout::Layout;
use super::swizzle::ComposedLayout;

impl Layout {
    /// The layout's offsets as a table, headed by the layout's text form.
    ///
    /// For a rank-2 layout, row `i` and column `j` hold `L(i, j)` (each a
    /// 1-D coordinate within its mode); a rank-1 layout is drawn as one row.
    /// Fails for rank 3 and above.
    ///
    /// ```
    /// use tile_ir::layout::Layout;
    /// let l: Layout = "(2,(2,2)):(4,(2,1))".parse().unwrap();
    /// assert_eq!(l.to_table().unwrap(), "\
    /// (2,(2,2)):(4,(2,1))
    ///       0   1   2   3
    ///     +---+---+---+---+
    ///  0  | 0 | 2 | 1 | 3 |
    ///     +---+---+---+---+
    ///  1  | 4 | 6 | 5 | 7 |
    ///     +---+---+---+---+
    /// ");
    /// ```
    pub fn to_table(&self) -> Result<String> {
        let (rows, cols) = grid(self, "Layout::to_table")?;
        Ok(render(&self.to_string(), rows, cols, |i, j| {
            self.call(i + j * rows)
        }))
    }
}

impl ComposedLayout {
    /// The swizzled offsets as a table, like [`Layout::to_table`].
    pub fn to_table(&self) -> Result<String> {
        let (rows, cols) = grid(self.layout(), "ComposedLayout::to_table")?;
        Ok(render(&self.to_string(), rows, cols, |i, j| {
            self.call(i + j * rows)
        }))
    }
}

/// (rows, columns) of the picture of `layout`.
fn grid(layout: &Layout, op: &'static str) -> Result<(i64, i64)> {
    match layout.rank() {
        1 => Ok((1, layout.size())),
        2 => Ok((
            layout.shape().modes()[0].size(),
            layout.shape().modes()[1].size(),
        )),
        _ => Err(LayoutError::rule(
            op,
            "only layouts of rank 1 or 2 can be drawn",
            format!("{layout}"),
        )),
    }
}

/// Draws `rows × cols` cells, cell (i, j) holding `at(i, j)`.
fn render(title: &str, rows: i64, cols: i64, at: impl Fn(i64, i64) -> i64) -> String {
    let cells: Vec<Vec<String>> = (0..rows)
        .map(|i| (0..cols).map(|j| at(i, j).to_string()).collect())
        .collect();
    let widest = cells
        .iter()
        .flatten()
        .map(String::len)
        .chain([(cols - 1).to_string().len()])
        .max()
        .unwrap_or(1);
    let label = (rows - 1).to_string().len();
    let rule = format!(
        "{}+{}\n",
        " ".repeat(label + 3),
        format!("{}+", "-".repeat(widest + 2)).repeat(cells[0].len())
    );
    let mut out = format!("{title}\n{}", " ".repeat(label + 3));
    for j in 0..cols {
        let _ = write!(out, "  {j:>widest$} ");
    }
    out = out.trim_end().to_string();
    out.push('\n');
    out.push_str(&rule);
    for (i, row) in cells.iter().enumerate() {
        let _ = write!(out, " {i:>label$}  |");
        for cell in row {
            let _ = write!(out, " {cell:>widest$} |");
        }
        out.push('\n');
        out.push_str(&rule);
    }
    out
}

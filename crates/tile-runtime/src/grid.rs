//! The type of a launch grid: one to three axes, `[x]`, `[x, y]` or
//! `[x, y, z]`, the missing axes being 1.
//!
//! A kernel's generated `launch`, `launch_on` and `interpret` take a
//! `[u32; G]` that implements [`Grid`], so a grid of four axes (or none) is a
//! type error at the call. Type errors are what `cargo check` reports; an
//! assertion on `G` in a const block would fire only when the launcher is
//! monomorphized, which a check never does.

/// A grid of one to three axes.
#[diagnostic::on_unimplemented(
    message = "a grid has one to three axes, but this one is `{Self}`",
    label = "expected `[x]`, `[x, y]` or `[x, y, z]`",
    note = "the missing axes are 1: the grid `[n]` is `[n, 1, 1]`"
)]
pub trait Grid: Copy {
    /// The grid as three axes, the missing ones 1.
    fn axes(self) -> [u32; 3];
}

#[diagnostic::do_not_recommend]
impl Grid for [u32; 1] {
    fn axes(self) -> [u32; 3] {
        [self[0], 1, 1]
    }
}

#[diagnostic::do_not_recommend]
impl Grid for [u32; 2] {
    fn axes(self) -> [u32; 3] {
        [self[0], self[1], 1]
    }
}

#[diagnostic::do_not_recommend]
impl Grid for [u32; 3] {
    fn axes(self) -> [u32; 3] {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::Grid;

    #[test]
    fn missing_axes_are_one() {
        assert_eq!([7].axes(), [7, 1, 1]);
        assert_eq!([7, 5].axes(), [7, 5, 1]);
        assert_eq!([7, 5, 3].axes(), [7, 5, 3]);
    }
}

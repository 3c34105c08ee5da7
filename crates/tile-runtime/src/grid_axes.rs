//! Which grid axes a kernel reads, and the rule a grid must keep: several
//! programs along an axis only when the kernel reads that axis's
//! `program_id`, else they would all do the same work (on a GPU, racing on
//! every store). Launches ([`crate::launch`]) and the interpreter's runs
//! ([`crate::meta::interpret`]) check it before anything runs.

use tile_ir::{Function, OpKind};

/// A grid with several programs along an axis whose `program_id` the kernel
/// never reads.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("kernel `{kernel}`: the grid {grid:?} has {programs} programs along axis {axis}, but the kernel never reads `program_id({axis})`, so they would all do the same work; use 1 there")]
pub struct UnreadGridAxis {
    /// The kernel's name.
    pub kernel: String,
    /// The grid given.
    pub grid: [u32; 3],
    /// The axis.
    pub axis: usize,
    /// The programs along it.
    pub programs: u32,
}

/// Per grid axis, whether `func` reads its `program_id`.
pub(crate) fn axes_read(func: &Function) -> [bool; 3] {
    let mut read = [false; 3];
    func.walk(&mut |op| {
        if let OpKind::ProgramId { axis } = func.op(op).kind {
            if let Some(slot) = read.get_mut(usize::from(axis)) {
                *slot = true;
            }
        }
    });
    read
}

/// An error if `grid` has several programs along an axis that `read` (from
/// [`axes_read`]) says the kernel `kernel` never reads; the first such axis
/// is named.
pub(crate) fn check(kernel: &str, read: [bool; 3], grid: [u32; 3]) -> Result<(), UnreadGridAxis> {
    match (0..3).find(|&axis| grid[axis] > 1 && !read[axis]) {
        Some(axis) => Err(UnreadGridAxis {
            kernel: kernel.to_string(),
            grid,
            axis,
            programs: grid[axis],
        }),
        None => Ok(()),
    }
}

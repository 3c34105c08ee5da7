//! The host back end's decisions for a kernel, made once before any code is
//! emitted and printable, so a dump or a snapshot shows what the code does
//! without reading it:
//!
//! * **lazy** (`fuse.rs`): the tile is computed inside the loop of the op
//!   that consumes it, never stored in the frame;
//! * **NaN as computed** (`nan.rs`): no use observes the payload of the
//!   op's NaN results, so they skip their canonicalization;
//! * **row blocks** (`reduce.rs`): the reduction folds its operand in 8 × 8
//!   register blocks, computing a lazy operand on the way;
//! * **prefetch** (`prefetch.rs`): the load prefetches the tile the next
//!   program instance loads along the same rows;
//! * **may stream** (`stream.rs`): on x86-64 levels, the store writes whole
//!   lines with non-temporal stores when, at run time, the tensor holds at
//!   least the streaming threshold of bytes, its last axis is dense and its
//!   base aligned.
//!
//! ```text
//! host plan of `softmax`
//! %2 = load_masked %0, %1: lazy
//! %3 = reduce %2: row blocks
//! ```

use super::{fuse, nan, prefetch, reduce, stream};
use std::collections::HashSet;
use std::fmt;
use tile_ir::{Function, OpId, OpKind, ValueNames};

/// The decisions of the host back end for one kernel.
#[derive(Clone, Debug)]
pub struct HostPlan {
    /// The kernel's name.
    kernel: String,
    /// Every op with a decision, in program order, as text.
    ops: Vec<(OpId, String)>,
    /// The ops whose tiles are lazy.
    pub(super) lazy: HashSet<OpId>,
    /// The ops whose NaN results are left as computed.
    pub(super) free_nans: HashSet<OpId>,
    /// The reductions that fold in 8 × 8 register blocks.
    row_blocks: HashSet<OpId>,
    /// The loads that prefetch the next program's tile.
    pub(super) prefetches: HashSet<OpId>,
    /// The stores whose tiles may stream.
    pub(super) streams: HashSet<OpId>,
}

/// The decisions of the host back end for `func` (which must verify).
pub fn plan(func: &Function) -> HostPlan {
    let write_only = stream::write_only_params(func);
    let (mut row_blocks, mut prefetches, mut streams) =
        (HashSet::new(), HashSet::new(), HashSet::new());
    func.walk(&mut |id| {
        let op = func.op(id);
        if reduce::folds_in_row_blocks(func, id) {
            row_blocks.insert(id);
        }
        let load = matches!(op.kind, OpKind::Load | OpKind::LoadMasked { .. });
        if load && prefetch::next_tile_along_rows(func, op.operands.get(1..).unwrap_or(&[])) {
            prefetches.insert(id);
        }
        if stream::may_stream(func, id, &write_only) {
            streams.insert(id);
        }
    });
    let mut plan = HostPlan {
        kernel: func.name.clone(),
        ops: Vec::new(),
        lazy: fuse::lazy_ops(func),
        free_nans: nan::unobserved_nans(func),
        row_blocks,
        prefetches,
        streams,
    };
    let names = ValueNames::new(func);
    func.walk(&mut |id| {
        if !plan.decisions(id).is_empty() {
            plan.ops.push((id, names.describe_op(func, id)));
        }
    });
    plan
}

impl HostPlan {
    /// The decisions about op `id`, in the order the module doc lists them.
    fn decisions(&self, id: OpId) -> Vec<&'static str> {
        [
            (self.lazy.contains(&id), "lazy"),
            (self.free_nans.contains(&id), "NaN as computed"),
            (self.row_blocks.contains(&id), "row blocks"),
            (self.prefetches.contains(&id), "prefetch"),
            (self.streams.contains(&id), "may stream"),
        ]
        .into_iter()
        .filter_map(|(holds, name)| holds.then_some(name))
        .collect()
    }
}

impl fmt::Display for HostPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "host plan of `{}`", self.kernel)?;
        if self.ops.is_empty() {
            return writeln!(f, "(every op computes its tile in the frame)");
        }
        for (id, text) in &self.ops {
            writeln!(f, "{text}: {}", self.decisions(*id).join(", "))?;
        }
        Ok(())
    }
}

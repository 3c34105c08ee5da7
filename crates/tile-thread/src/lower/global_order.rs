//! Barriers that keep one program's global-memory accesses in program
//! order across its threads.
//!
//! A tile program is one sequence of ops, so a later access of a tensor
//! sees what an earlier one did. Lowered, an element may be read by one
//! thread and written by another (a load and a store in different layouts,
//! a scalar every thread reads and its owner updates), and threads run
//! apart until a barrier. So a pass over the lowered program puts a
//! `barrier` before every global access of a tensor that may conflict with
//! one since the last barrier, on any path, loop back edges included:
//!
//! - a plain read after a plain write or an atomic of the tensor;
//! - a plain write after any access of it;
//! - an atomic after a plain read or write of it (atomics do not conflict
//!   with each other).
//!
//! `cp.async` and `tma.load` read their tensor as plain reads. Tensors are
//! told apart by parameter: a launch never passes one tensor twice where
//! either is written (the tensors of one array count as one, as two
//! `get_tensor`s may pick the same). The accesses one tile-IR op lowers to do not
//! conflict with each other (a store writes each element once, from the
//! thread that owns it). The same op's accesses in an earlier iteration of
//! a loop are another op's, except a store's through a partition view of a
//! whole tensor: partitions are disjoint and the op's layout is fixed, so
//! an address it writes again is written by the same owner thread (a
//! window may move between iterations, and an element with it to another
//! thread). A loop or `if` whose accesses conflict with those
//! before it gets its barrier in front, not inside (an element-by-element
//! copy loop need not be uniform); a conflict between iterations gets one
//! inside the loop, where only uniform loops (those of the tile program)
//! hold global writes.
//!
//! Two ops never conflict when they load or store through one partition
//! view value ([`Independence`]) and either their partition indices differ
//! by constants (disjoint tiles: RoPE's two halves of a head) or they are
//! the same indices in one layout in which each element has one holder, so
//! that every element is read and written by the same thread, in its
//! program order (a row updated in place). A load whose dot copies it
//! (`cp.async`, the TMA) is read by other threads than its layout's.

use crate::layout_assign::DistLayout;
use crate::program::{OpId, ParamKind, Program, Region, ThreadOpKind};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use tile_ir::{Function, OpKind, Value};

/// The tile-IR op an access was lowered from; `None` for one of an earlier
/// loop iteration, which conflicts with every op.
type Origin = Option<tile_ir::OpId>;

/// Per tensor parameter, the origins of its accesses of one kind.
type Accesses = BTreeMap<usize, BTreeSet<Origin>>;

/// The accesses since the last barrier, by kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Pending {
    reads: Accesses,
    writes: Accesses,
    atomics: Accesses,
}

/// How an op touches global memory.
#[derive(Clone, Copy)]
enum Access {
    Read(usize),
    Write(usize),
    Atomic(usize),
}

impl Pending {
    fn join(&mut self, other: &Pending) {
        for (mine, theirs) in [
            (&mut self.reads, &other.reads),
            (&mut self.writes, &other.writes),
            (&mut self.atomics, &other.atomics),
        ] {
            for (&param, origins) in theirs {
                mine.entry(param).or_default().extend(origins);
            }
        }
    }

    fn conflicts(&self, access: Access, origin: Origin, apart: &Independence) -> bool {
        let other = |a: &Accesses, param: usize| {
            a.get(&param).is_some_and(|origins| {
                origins.iter().any(|&o| match (o, origin) {
                    (Some(o), Some(origin)) => o != origin && !apart.independent(o, origin),
                    _ => true,
                })
            })
        };
        match access {
            Access::Read(p) => other(&self.writes, p) || other(&self.atomics, p),
            Access::Write(p) => {
                other(&self.reads, p) || other(&self.writes, p) || other(&self.atomics, p)
            }
            Access::Atomic(p) => other(&self.reads, p) || other(&self.writes, p),
        }
    }

    fn add(&mut self, access: Access, origin: Origin) {
        let (kind, param) = match access {
            Access::Read(p) => (&mut self.reads, p),
            Access::Write(p) => (&mut self.writes, p),
            Access::Atomic(p) => (&mut self.atomics, p),
        };
        kind.entry(param).or_default().insert(origin);
    }
}

/// How `kind` touches global memory, its tensor named by parameter: the
/// tensors of an array by the array's, as two may be one tensor.
fn access(program: &Program, kind: &ThreadOpKind) -> Option<Access> {
    let tensor = |param: usize| match program.params.get(param).map(|p| &p.kind) {
        Some(ParamKind::Element { array, .. }) => *array,
        _ => param,
    };
    match *kind {
        ThreadOpKind::LoadGlobal { param, .. }
        | ThreadOpKind::CopyAsync { param, .. }
        | ThreadOpKind::TmaLoad { param, .. } => Some(Access::Read(tensor(param))),
        ThreadOpKind::StoreGlobal { param, .. } => Some(Access::Write(tensor(param))),
        ThreadOpKind::AtomicGlobal { param, .. } | ThreadOpKind::AddGlobal { param, .. } => {
            Some(Access::Atomic(tensor(param)))
        }
        _ => None,
    }
}

/// What tells the accesses of two tile-IR ops apart (see the module docs).
pub(super) struct Independence<'a> {
    pub(super) func: &'a Function,
    /// The layout of each tile value.
    pub(super) layouts: &'a BTreeMap<Value, DistLayout>,
    /// The loads their dots copy themselves.
    pub(super) deferred: &'a HashSet<tile_ir::OpId>,
}

impl Independence<'_> {
    /// Whether the global accesses of `a` and `b` need no barrier between
    /// them, in either order.
    fn independent(&self, a: tile_ir::OpId, b: tile_ir::OpId) -> bool {
        let (Some((view_a, at_a, tile_a)), Some((view_b, at_b, tile_b))) =
            (self.partition_access(a), self.partition_access(b))
        else {
            return false;
        };
        if view_a != view_b || at_a.len() != at_b.len() {
            return false;
        }
        let mut disjoint = false;
        for (x, y) in at_a.iter().zip(at_b) {
            match (x == y, self.constant(*x), self.constant(*y)) {
                (true, ..) => {}
                (false, Some(cx), Some(cy)) if cx != cy => disjoint = true,
                _ => return false,
            }
        }
        let one_holder = |tile: Value| self.layouts.get(&tile).filter(|l| !l.has_copies());
        disjoint || (one_holder(tile_a).is_some() && one_holder(tile_a) == one_holder(tile_b))
    }

    /// The view, partition indices and tile of a `load`, `load_masked`
    /// (one its dot does not copy), `store` or `store_masked`.
    fn partition_access(&self, id: tile_ir::OpId) -> Option<(Value, &[Value], Value)> {
        let op = self.func.op(id);
        match op.kind {
            OpKind::Load | OpKind::LoadMasked { .. } if !self.deferred.contains(&id) => {
                let (view, at) = op.operands.split_first()?;
                Some((*view, at, *op.results.first()?))
            }
            OpKind::Store | OpKind::StoreMasked => {
                let [tile, view, at @ ..] = op.operands.as_slice() else {
                    return None;
                };
                Some((*view, at, *tile))
            }
            _ => None,
        }
    }

    /// The value of `v` when a `constant` defines it.
    fn constant(&self, v: Value) -> Option<tile_ir::Scalar> {
        match self.func.op(self.func.defining_op(v)?).kind {
            OpKind::Constant { value } => Some(value),
            _ => None,
        }
    }
}

/// Puts the barriers the module docs describe into `program`.
pub(super) fn order_global_accesses(
    apart: &Independence,
    program: &mut Program,
    origins: &[Origin],
) {
    let mut body = std::mem::take(&mut program.body);
    let mut pass = Pass {
        func: apart.func,
        apart,
        program,
        origins,
    };
    pass.region(&mut body, &mut Pending::default());
    program.body = body;
}

struct Pass<'a> {
    func: &'a Function,
    apart: &'a Independence<'a>,
    program: &'a mut Program,
    origins: &'a [Origin],
}

impl Pass<'_> {
    fn origin(&self, id: OpId) -> Origin {
        self.origins.get(id.index()).copied().flatten()
    }

    /// The accesses of `state` as a later iteration of a loop sees them:
    /// another op's, but for the writes of stores through partition views
    /// of whole tensors.
    fn seen_from_next_iteration(&self, state: &Pending) -> Pending {
        let func = self.func;
        let whole_view = |store: tile_ir::OpId| {
            func.op(store)
                .operands
                .get(1)
                .and_then(|&view| func.defining_op(view))
                .is_some_and(|v| func.op(v).operands.len() == 1)
        };
        let keeps = |origin: &Origin| {
            origin.is_some_and(|o| {
                matches!(func.op(o).kind, OpKind::Store | OpKind::StoreMasked) && whole_view(o)
            })
        };
        let forget = |a: &Accesses, keep: bool| -> Accesses {
            a.iter()
                .map(|(&param, origins)| {
                    let seen = origins
                        .iter()
                        .map(|o| if keep && keeps(o) { *o } else { None })
                        .collect();
                    (param, seen)
                })
                .collect()
        };
        Pending {
            reads: forget(&state.reads, false),
            writes: forget(&state.writes, true),
            atomics: forget(&state.atomics, false),
        }
    }

    /// Whether any access in `id` (with its regions) conflicts with
    /// `state`.
    fn touches(&self, id: OpId, state: &Pending) -> bool {
        let op = &self.program.ops[id];
        access(self.program, &op.kind)
            .is_some_and(|a| state.conflicts(a, self.origin(id), self.apart))
            || op
                .regions
                .iter()
                .flat_map(|r| &r.ops)
                .any(|&inner| self.touches(inner, state))
    }

    fn region(&mut self, region: &mut Region, state: &mut Pending) {
        let mut i = 0;
        while i < region.ops.len() {
            let id = region.ops[i];
            if self.touches(id, state) {
                let barrier =
                    self.program
                        .create_op(ThreadOpKind::Barrier, Vec::new(), &[], Vec::new());
                region.ops.insert(i, barrier);
                *state = Pending::default();
                i += 1;
            }
            self.op(id, state);
            i += 1;
        }
    }

    /// Runs a loop's iteration `once` from the loop's head until the state
    /// there holds what every later iteration brings back; returns the
    /// state where the loop is left, which `once` gives for the last run.
    fn iterate(
        &mut self,
        state: &Pending,
        mut once: impl FnMut(&mut Self, &mut Pending) -> Pending,
    ) -> Pending {
        let entry = state.clone();
        let mut head = entry.clone();
        loop {
            let mut s = head.clone();
            let leaving = once(self, &mut s);
            let mut next = self.seen_from_next_iteration(&s);
            next.join(&entry);
            if next == head {
                return leaving;
            }
            head = next;
        }
    }

    /// The state after `id`, whose conflicts with `state` are resolved.
    fn op(&mut self, id: OpId, state: &mut Pending) {
        if let Some(a) = access(self.program, &self.program.ops[id].kind) {
            state.add(a, self.origin(id));
            return;
        }
        let kind = self.program.ops[id].kind.clone();
        let mut regions = std::mem::take(&mut self.program.ops[id].regions);
        match (&kind, regions.as_mut_slice()) {
            (ThreadOpKind::Barrier, _) => *state = Pending::default(),
            (ThreadOpKind::If, [then, otherwise]) => {
                let mut other = state.clone();
                self.region(then, state);
                self.region(otherwise, &mut other);
                state.join(&other);
            }
            (ThreadOpKind::For, [body]) => {
                *state = self.iterate(state, |pass, s| {
                    let head = s.clone();
                    pass.region(body, s);
                    head
                });
            }
            (ThreadOpKind::While, [cond, body]) => {
                *state = self.iterate(state, |pass, s| {
                    pass.region(cond, s);
                    let leaving = s.clone();
                    pass.region(body, s);
                    leaving
                });
            }
            _ => {}
        }
        self.program.ops[id].regions = regions;
    }
}

//! The verifier's synchronization rule: on every path through the program,
//! loop back edges and nested loops included, a shared-memory access that
//! may touch bytes another thread touched, one of the two a write, has a
//! barrier between them.
//!
//! The rule is checked per allocation's bytes, a conservative reading of
//! "the same bytes": an allocation that aliases another
//! (`SharedAlloc::aliases`) counts as the one whose bytes it reuses, so
//! that its first write must wait, behind a barrier, for the reads of the
//! memory's earlier use. A forward
//! dataflow analysis carries, at each point, the accesses not yet ordered
//! by a barrier:
//!
//! - **reads** (`ld.shared`, `ldmatrix`, and the operands of a `wgmma`
//!   once a `wgmma.wait 0` has completed it, of a `tcgen05.mma` once a
//!   `tcgen05.commit_wait` has): a later write to the allocation
//!   before a `barrier` is a write-after-read race;
//! - **writes** (`st.shared`, `round.shared.tf32`, a thread's rewrite of
//!   elements it reads itself, `tmem.alloc`'s address, and `cp.async`
//!   copies once a `cp.async.wait` landed them): a later read before a
//!   `barrier` is a read-after-write race;
//! - **copies in flight** (`cp.async` before its wait, `tma.load` before
//!   the `mbarrier.wait` on its barrier, whose waiters then see the bytes
//!   with no `barrier`), and **`wgmma` and `tcgen05.mma` reads in
//!   flight** (before their waits), which no `barrier` orders: a write to an allocation a
//!   `wgmma` may still read is a race wherever it is.
//!
//! A `cp.async.commit` closes a copy group: the `st.shared`s issued since
//! the last barrier or commit (the element-by-element path of copies whose
//! source is not contiguous) join it, and count as its copies do, from
//! their issue to its wait.
//!
//! Writes after writes are not checked: the lowering's stagings write one
//! allocation from many stores of one thread. A read of an allocation with
//! copies in flight is not a race by itself: a pipeline's ring reads one
//! stage while the next ones are being copied; that a copy's group landed
//! before its bytes are read is checked per byte by the lockstep emulator
//! and the emulation target, not here.

use super::verify::VerifyError;
use super::{OpId, Program, Region, SharedId, ThreadOpKind};
use std::collections::BTreeMap;

/// The accesses of one kind not yet ordered by a barrier: per allocation,
/// the first op found (for the message).
type Pending = BTreeMap<SharedId, OpId>;

/// The unordered shared-memory accesses at one point of the program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Hazards {
    reads: Pending,
    writes: Pending,
    /// The `st.shared`s since the last barrier or commit.
    stores: Pending,
    copies: Pending,
    /// `tma.load`s in flight, with the barriers' allocation each completes
    /// on.
    tma: BTreeMap<SharedId, (OpId, SharedId)>,
    wgmma: Pending,
}

impl Hazards {
    /// Adds `other`'s accesses (two paths meeting).
    fn join(&mut self, other: &Hazards) {
        for (mine, theirs) in [
            (&mut self.reads, &other.reads),
            (&mut self.writes, &other.writes),
            (&mut self.stores, &other.stores),
            (&mut self.copies, &other.copies),
            (&mut self.wgmma, &other.wgmma),
        ] {
            for (&alloc, &op) in theirs {
                mine.entry(alloc).or_insert(op);
            }
        }
        for (&alloc, &entry) in &other.tma {
            self.tma.entry(alloc).or_insert(entry);
        }
    }

    /// The allocations each kind holds: what decides that a loop's
    /// analysis is done.
    fn keys(&self) -> [Vec<SharedId>; 6] {
        [
            self.reads.keys().copied().collect(),
            self.writes.keys().copied().collect(),
            self.stores.keys().copied().collect(),
            self.copies.keys().copied().collect(),
            self.tma.keys().copied().collect(),
            self.wgmma.keys().copied().collect(),
        ]
    }
}

/// Checks the synchronization rule (see the module docs) on `program`.
pub(super) fn check(program: &Program) -> Result<(), VerifyError> {
    let mut state = Hazards::default();
    Analysis { program }.region(&program.body, &mut state)
}

struct Analysis<'a> {
    program: &'a Program,
}

impl Analysis<'_> {
    fn race(&self, later: OpId, earlier: OpId, what: &str) -> VerifyError {
        VerifyError {
            op: self.program.op_text(later),
            rule: format!(
                "{what} `{}` in another thread, with no barrier between",
                self.program.op_text(earlier)
            ),
        }
    }

    fn region(&self, region: &Region, state: &mut Hazards) -> Result<(), VerifyError> {
        for &id in &region.ops {
            self.op(id, state)?;
        }
        Ok(())
    }

    /// A read of `alloc` by `id`: after no unordered write.
    fn read(&self, id: OpId, alloc: SharedId, state: &mut Hazards) -> Result<(), VerifyError> {
        if let Some(&w) = state.writes.get(&alloc) {
            return Err(self.race(id, w, "may read what was written by"));
        }
        state.reads.entry(alloc).or_insert(id);
        Ok(())
    }

    /// A write of `alloc` by `id`: after no unordered read, and no `wgmma`
    /// that may still read it.
    fn write_check(&self, id: OpId, alloc: SharedId, state: &Hazards) -> Result<(), VerifyError> {
        if let Some(&r) = state.reads.get(&alloc) {
            return Err(self.race(id, r, "may overwrite what was read by"));
        }
        if let Some(&r) = state.wgmma.get(&alloc) {
            return Err(self.race(id, r, "may overwrite what may still be read by"));
        }
        Ok(())
    }

    fn op(&self, id: OpId, state: &mut Hazards) -> Result<(), VerifyError> {
        let op = &self.program.ops[id];
        match &self.by_bytes(&op.kind) {
            ThreadOpKind::LoadShared { alloc, .. } | ThreadOpKind::LdMatrix { alloc, .. } => {
                self.read(id, *alloc, state)?;
            }
            ThreadOpKind::StoreShared { alloc, .. } => {
                self.write_check(id, *alloc, state)?;
                state.writes.entry(*alloc).or_insert(id);
                state.stores.entry(*alloc).or_insert(id);
            }
            // A thread's rewrite of its own elements: a write, whose read
            // of the same bytes by the same thread needs no barrier.
            ThreadOpKind::RoundSharedTf32 { alloc, .. } => {
                self.write_check(id, *alloc, state)?;
                state.writes.entry(*alloc).or_insert(id);
            }
            ThreadOpKind::CommitAsync => {
                for (alloc, store) in std::mem::take(&mut state.stores) {
                    if state.writes.get(&alloc) == Some(&store) {
                        state.writes.remove(&alloc);
                    }
                    state.copies.entry(alloc).or_insert(store);
                }
            }
            ThreadOpKind::CopyAsync { alloc, .. } => {
                self.write_check(id, *alloc, state)?;
                state.copies.entry(*alloc).or_insert(id);
            }
            ThreadOpKind::TmaLoad { alloc, bar, .. } => {
                self.write_check(id, *alloc, state)?;
                state.tma.entry(*alloc).or_insert((id, *bar));
            }
            ThreadOpKind::TmemAlloc { slot, .. } => {
                self.write_check(id, *slot, state)?;
                state.writes.entry(*slot).or_insert(id);
            }
            ThreadOpKind::Wgmma { a, b, .. }
            | ThreadOpKind::Tcgen05Mma { a, b, .. }
            | ThreadOpKind::Tcgen05MmaScaled { a, b, .. } => {
                for alloc in [*a, *b] {
                    if let Some(&w) = state.writes.get(&alloc) {
                        return Err(self.race(id, w, "may read what was written by"));
                    }
                    state.wgmma.entry(alloc).or_insert(id);
                }
            }
            ThreadOpKind::WgmmaRegisterA { b, .. } | ThreadOpKind::Tcgen05MmaTensorA { b, .. } => {
                if let Some(&w) = state.writes.get(b) {
                    return Err(self.race(id, w, "may read what was written by"));
                }
                state.wgmma.entry(*b).or_insert(id);
            }
            ThreadOpKind::WgmmaWait { pending: 0 } | ThreadOpKind::Tcgen05CommitWait { .. } => {
                let done = std::mem::take(&mut state.wgmma);
                for (alloc, op) in done {
                    state.reads.entry(alloc).or_insert(op);
                }
            }
            ThreadOpKind::WaitAsync { .. } => {
                let landed = std::mem::take(&mut state.copies);
                for (alloc, op) in landed {
                    state.writes.entry(alloc).or_insert(op);
                }
            }
            ThreadOpKind::MbarrierWait { alloc: bar } => {
                state.tma.retain(|_, &mut (_, on)| on != *bar);
            }
            ThreadOpKind::Barrier => {
                state.reads.clear();
                state.writes.clear();
                state.stores.clear();
            }
            ThreadOpKind::If => {
                let mut other = state.clone();
                if let [then, otherwise] = op.regions.as_slice() {
                    self.region(then, state)?;
                    self.region(otherwise, &mut other)?;
                }
                state.join(&other);
            }
            ThreadOpKind::For => {
                if let [body] = op.regions.as_slice() {
                    self.fixpoint(state, |s| self.region(body, s))?;
                }
            }
            ThreadOpKind::While => {
                if let [cond, body] = op.regions.as_slice() {
                    self.fixpoint(state, |s| {
                        self.region(cond, s)?;
                        self.region(body, s)
                    })?;
                    // The loop leaves after its condition.
                    self.region(cond, state)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// `kind` with each allocation it accesses replaced by the one whose
    /// bytes it occupies.
    fn by_bytes(&self, kind: &ThreadOpKind) -> ThreadOpKind {
        let root = |a: &SharedId| self.program.shared_root(*a);
        let mut kind = kind.clone();
        match &mut kind {
            ThreadOpKind::LoadShared { alloc, .. }
            | ThreadOpKind::StoreShared { alloc, .. }
            | ThreadOpKind::RoundSharedTf32 { alloc, .. }
            | ThreadOpKind::LdMatrix { alloc, .. }
            | ThreadOpKind::CopyAsync { alloc, .. } => *alloc = root(alloc),
            ThreadOpKind::TmaLoad { alloc, .. }
            | ThreadOpKind::WgmmaRegisterA { b: alloc, .. }
            | ThreadOpKind::Tcgen05MmaTensorA { b: alloc, .. } => *alloc = root(alloc),
            ThreadOpKind::Wgmma { a, b, .. }
            | ThreadOpKind::Tcgen05Mma { a, b, .. }
            | ThreadOpKind::Tcgen05MmaScaled { a, b, .. } => (*a, *b) = (root(a), root(b)),
            ThreadOpKind::TmemAlloc { slot, .. } => *slot = root(slot),
            _ => {}
        }
        kind
    }

    /// The state at a loop's head, where the entry and every back edge
    /// meet: `iteration` runs once around the loop from the head, until
    /// what reaches the head no longer grows. `state` becomes the head's.
    fn fixpoint(
        &self,
        state: &mut Hazards,
        iteration: impl Fn(&mut Hazards) -> Result<(), VerifyError>,
    ) -> Result<(), VerifyError> {
        let entry = state.clone();
        loop {
            let mut around = state.clone();
            iteration(&mut around)?;
            let mut head = entry.clone();
            head.join(state);
            head.join(&around);
            if head.keys() == state.keys() {
                return Ok(());
            }
            *state = head;
        }
    }
}

//! Happens-before between the threads of a launch, as the PTX and HSA
//! memory models define it for the operations tile programs use: program
//! order, block-wide barriers, and atomics and fences with an order
//! (`relaxed`, `acquire`, `release`, `acq_rel`) at a scope (`cta`, `gpu`).
//!
//! * An access happens before a later one of the same thread, and before
//!   every access of its block after the next barrier.
//! * Nothing else orders two threads of one block (the lowering places a
//!   barrier between a block's conflicting global accesses, as it does
//!   for shared memory); between blocks only the synchronization below
//!   orders them.
//! * A release (an atomic with release order, or a relaxed atomic update
//!   after a release fence of the same thread) publishes what its thread
//!   knows at the location; an acquire (an atomic with acquire order that
//!   reads the location, or an acquire fence after a relaxed atomic that
//!   read it) learns what was published there. Every update of a location
//!   continues the release sequences before it, so an acquire learns from
//!   every release the location saw since its last plain store.
//! * The two synchronize only where each is in the other's scope: a `cta`
//!   release reaches acquires of its own block, a `gpu` one every block;
//!   a `cta` acquire learns only what its own block released.
//!
//! A vector clock over every thread of a grid would be large; this one is
//! kept per block, in a form the rules above make exact. A thread's time
//! is its block's *generation* (the barriers the block has passed) and its
//! *step* (the releases it made so far). What a thread knows of a block
//! is a generation `g`, all of whose earlier generations it knows (a
//! release after a barrier carries every access before that barrier), and
//! the steps of the threads it knows within `g` itself.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
pub use tile_ir::{MemOrder, MemScope};

/// A thread of a launch: its block's linear index (x fastest) and its
/// index in the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ThreadId {
    /// The block's linear index.
    pub block: u64,
    /// The thread's index in the block.
    pub thread: u32,
}

/// When a thread accessed memory: the thread, its block's generation and
/// the thread's step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// The thread.
    pub who: ThreadId,
    generation: u32,
    step: u32,
}

impl Stamp {
    /// Whether `later` makes this stamp redundant in a set of accesses
    /// that must all happen before a conflicting one: whoever knows
    /// `later` knows this stamp too.
    pub(crate) fn covered_by(&self, later: &Stamp) -> bool {
        self.who.block == later.who.block
            && (self.generation < later.generation
                || (self.who.thread == later.who.thread && self.generation == later.generation))
    }
}

/// What a clock knows of one block: every access before generation
/// `generation`, and within it the accesses of the listed threads up to
/// their steps (sorted by thread).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Known {
    generation: u32,
    threads: Vec<(u32, u32)>,
}

impl Known {
    fn covers(&self, s: &Stamp) -> bool {
        match s.generation.cmp(&self.generation) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => self
                .threads
                .binary_search_by_key(&s.who.thread, |&(t, _)| t)
                .is_ok_and(|i| self.threads[i].1 >= s.step),
        }
    }

    fn join(&mut self, other: &Known) {
        match self.generation.cmp(&other.generation) {
            Ordering::Less => *self = other.clone(),
            Ordering::Greater => {}
            Ordering::Equal => {
                for &(thread, step) in &other.threads {
                    match self.threads.binary_search_by_key(&thread, |&(t, _)| t) {
                        Ok(i) => self.threads[i].1 = self.threads[i].1.max(step),
                        Err(i) => self.threads.insert(i, (thread, step)),
                    }
                }
            }
        }
    }
}

/// A vector clock over a launch's threads, kept per block (see the module
/// documentation).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Clock {
    blocks: BTreeMap<u64, Known>,
}

impl Clock {
    /// Whether the access at `s` happened before this clock's time.
    pub fn covers(&self, s: &Stamp) -> bool {
        self.blocks.get(&s.who.block).is_some_and(|k| k.covers(s))
    }

    /// Learns everything `other` knows.
    pub fn join(&mut self, other: &Clock) {
        for (&block, known) in &other.blocks {
            self.blocks.entry(block).or_default().join(known);
        }
    }

    fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }
}

/// One thread's synchronization state.
#[derive(Clone, Debug, Default)]
struct ThreadClock {
    /// Releases so far (steps are never reset: a later generation
    /// compares first).
    step: u32,
    /// What the thread acquired since its block's last barrier.
    acquired: Clock,
    /// What its last release fence published, and the fence's scope: a
    /// later relaxed update releases this.
    fenced: Option<(Clock, MemScope)>,
    /// What relaxed atomic reads found released, from the own block and
    /// from every block: a later acquire fence learns it.
    observed: [Clock; 2],
}

/// One block's synchronization state.
#[derive(Clone, Debug, Default)]
struct BlockClock {
    generation: u32,
    /// What every thread of the block knows from before the last barrier.
    known: Clock,
    threads: Vec<ThreadClock>,
}

/// What the releases at one location published.
#[derive(Clone, Debug, Default)]
struct Released {
    /// By releases of `gpu` scope, of any block.
    gpu: Clock,
    /// By the releases of each block, of any scope.
    by_block: HashMap<u64, Clock>,
}

/// How an atomic access synchronizes: its order, scope, and whether it
/// wrote (a failed compare-and-swap only reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtomicSync {
    /// The order.
    pub order: MemOrder,
    /// The scope.
    pub scope: MemScope,
    /// Whether the access wrote the location.
    pub wrote: bool,
}

fn narrower(a: MemScope, b: MemScope) -> MemScope {
    if a == MemScope::Cta || b == MemScope::Cta {
        MemScope::Cta
    } else {
        MemScope::Gpu
    }
}

/// The happens-before state of a launch: every block's and thread's
/// clock, and what was released at each synchronizing location (keyed by
/// address).
#[derive(Debug, Default)]
pub struct Sync {
    blocks: HashMap<u64, BlockClock>,
    locations: HashMap<u64, Released>,
}

impl Sync {
    /// No block started, nothing released.
    pub fn new() -> Sync {
        Sync::default()
    }

    fn thread_mut(&mut self, who: ThreadId) -> (&mut BlockClock, usize) {
        let block = self.blocks.entry(who.block).or_default();
        let t = who.thread as usize;
        if block.threads.len() <= t {
            block.threads.resize(t + 1, ThreadClock::default());
        }
        (block, t)
    }

    /// The time of `who`'s next access.
    pub fn stamp(&self, who: ThreadId) -> Stamp {
        let block = self.blocks.get(&who.block);
        Stamp {
            who,
            generation: block.map_or(0, |b| b.generation),
            step: block
                .and_then(|b| b.threads.get(who.thread as usize))
                .map_or(0, |t| t.step),
        }
    }

    /// Whether the access at `earlier` is ordered before `who`'s next one:
    /// an earlier access of the same thread; of another thread of the same
    /// block, if a barrier of the block came between; of another block, if
    /// a release of it (or of a block that learned of it) reached `who`.
    pub fn knows(&self, who: ThreadId, earlier: &Stamp) -> bool {
        if earlier.who.block == who.block {
            return earlier.who.thread == who.thread
                || self
                    .blocks
                    .get(&who.block)
                    .is_some_and(|b| earlier.generation < b.generation);
        }
        let Some(block) = self.blocks.get(&who.block) else {
            return false;
        };
        block.known.covers(earlier)
            || block
                .threads
                .get(who.thread as usize)
                .is_some_and(|t| t.acquired.covers(earlier))
    }

    /// A barrier of every thread of `block`: each learns what the others
    /// knew and did before it.
    pub fn barrier(&mut self, block: u64) {
        let b = self.blocks.entry(block).or_default();
        for t in &mut b.threads {
            if !t.acquired.is_empty() {
                b.known.join(&t.acquired);
                t.acquired = Clock::default();
            }
        }
        b.generation += 1;
    }

    /// What `who` knows now, including its own accesses so far; its later
    /// accesses are not covered.
    fn release_clock(&mut self, who: ThreadId) -> Clock {
        let (block, t) = self.thread_mut(who);
        let mut clock = block.known.clone();
        clock.join(&block.threads[t].acquired);
        let own = Known {
            generation: block.generation,
            threads: vec![(who.thread, block.threads[t].step)],
        };
        clock.blocks.entry(who.block).or_default().join(&own);
        block.threads[t].step += 1;
        clock
    }

    /// An atomic access of `who` at `location` with `sync`: an acquire
    /// learns what the location's releases published to it, a relaxed read
    /// keeps that for a later acquire fence; a release publishes what `who`
    /// knows, a relaxed update what `who`'s last release fence knew.
    pub fn atomic(&mut self, who: ThreadId, location: u64, sync: AtomicSync) {
        let found = self.locations.get(&location).map(|r| {
            let own = r.by_block.get(&who.block).cloned().unwrap_or_default();
            (own, r.gpu.clone())
        });
        let (block, t) = self.thread_mut(who);
        let thread = &mut block.threads[t];
        if let Some((own, gpu)) = found {
            let gpu = (sync.scope == MemScope::Gpu).then_some(gpu);
            if sync.order.acquires() {
                thread.acquired.join(&own);
                if let Some(gpu) = &gpu {
                    thread.acquired.join(gpu);
                }
            } else {
                thread.observed[0].join(&own);
                if let Some(gpu) = &gpu {
                    thread.observed[1].join(gpu);
                }
            }
        }
        if !sync.wrote {
            return;
        }
        let published = if sync.order.releases() {
            Some((self.release_clock(who), sync.scope))
        } else {
            let (block, t) = self.thread_mut(who);
            block.threads[t]
                .fenced
                .clone()
                .map(|(clock, scope)| (clock, narrower(scope, sync.scope)))
        };
        if let Some((clock, scope)) = published {
            let released = self.locations.entry(location).or_default();
            released.by_block.entry(who.block).or_default().join(&clock);
            if scope == MemScope::Gpu {
                released.gpu.join(&clock);
            }
        }
    }

    /// A plain store to `location`: the release sequences there end, and
    /// no later acquire learns from them.
    pub fn plain_store(&mut self, location: u64) {
        if !self.locations.is_empty() {
            self.locations.remove(&location);
        }
    }

    /// A fence of `who`: a release fence snapshots what `who` knows for
    /// its later relaxed updates; an acquire fence learns what its earlier
    /// relaxed reads found released, within the fence's scope.
    pub fn fence(&mut self, who: ThreadId, order: MemOrder, scope: MemScope) {
        if order.acquires() {
            let (block, t) = self.thread_mut(who);
            let thread = &mut block.threads[t];
            let own = std::mem::take(&mut thread.observed[0]);
            thread.acquired.join(&own);
            if scope == MemScope::Gpu {
                let gpu = std::mem::take(&mut thread.observed[1]);
                thread.acquired.join(&gpu);
            }
        }
        if order.releases() {
            let clock = self.release_clock(who);
            let (block, t) = self.thread_mut(who);
            block.threads[t].fenced = Some((clock, scope));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(block: u64, thread: u32) -> ThreadId {
        ThreadId { block, thread }
    }

    fn rmw(order: MemOrder, scope: MemScope) -> AtomicSync {
        AtomicSync {
            order,
            scope,
            wrote: true,
        }
    }

    #[test]
    fn a_release_carries_its_block_only_up_to_its_last_barrier() {
        let mut s = Sync::new();
        let store = s.stamp(at(0, 3));
        s.atomic(at(0, 0), 0x40, rmw(MemOrder::Release, MemScope::Gpu));
        s.atomic(at(1, 0), 0x40, rmw(MemOrder::Acquire, MemScope::Gpu));
        assert!(!s.knows(at(1, 0), &store), "no barrier before the release");
        s.barrier(0);
        s.atomic(at(0, 0), 0x40, rmw(MemOrder::Release, MemScope::Gpu));
        assert!(!s.knows(at(2, 5), &store), "no acquire");
        s.atomic(at(2, 5), 0x40, rmw(MemOrder::Acquire, MemScope::Gpu));
        assert!(s.knows(at(2, 5), &store));
    }

    #[test]
    fn a_release_after_a_barrier_carries_the_whole_block() {
        let mut s = Sync::new();
        let data = s.stamp(at(0, 7));
        s.barrier(0);
        s.atomic(at(0, 0), 0x40, rmw(MemOrder::Release, MemScope::Gpu));
        let late = s.stamp(at(0, 0));
        s.atomic(at(1, 0), 0x40, rmw(MemOrder::Acquire, MemScope::Gpu));
        assert!(s.knows(at(1, 0), &data));
        assert!(!s.knows(at(1, 0), &late), "after the release");
    }

    #[test]
    fn a_release_without_a_barrier_carries_only_its_thread() {
        let mut s = Sync::new();
        let other = s.stamp(at(0, 7));
        let own = s.stamp(at(0, 0));
        s.atomic(at(0, 0), 0x40, rmw(MemOrder::AcqRel, MemScope::Gpu));
        s.atomic(at(1, 0), 0x40, rmw(MemOrder::AcqRel, MemScope::Gpu));
        assert!(s.knows(at(1, 0), &own));
        assert!(!s.knows(at(1, 0), &other));
    }

    #[test]
    fn relaxed_atomics_synchronize_only_through_fences() {
        let relaxed = rmw(MemOrder::Relaxed, MemScope::Gpu);
        let mut s = Sync::new();
        let data = s.stamp(at(0, 0));
        s.atomic(at(0, 0), 0x40, relaxed);
        s.atomic(at(1, 0), 0x40, relaxed);
        s.fence(at(1, 0), MemOrder::Acquire, MemScope::Gpu);
        assert!(!s.knows(at(1, 0), &data), "no release fence");

        let mut s = Sync::new();
        let data = s.stamp(at(0, 0));
        s.fence(at(0, 0), MemOrder::Release, MemScope::Gpu);
        s.atomic(at(0, 0), 0x40, relaxed);
        s.atomic(at(1, 0), 0x40, relaxed);
        assert!(!s.knows(at(1, 0), &data), "no acquire fence yet");
        s.fence(at(1, 0), MemOrder::AcqRel, MemScope::Gpu);
        assert!(s.knows(at(1, 0), &data));
    }

    #[test]
    fn a_cta_scope_reaches_only_its_block() {
        let mut s = Sync::new();
        let data = s.stamp(at(0, 1));
        s.atomic(at(0, 1), 0x40, rmw(MemOrder::Release, MemScope::Cta));
        s.atomic(at(1, 0), 0x40, rmw(MemOrder::Acquire, MemScope::Gpu));
        assert!(!s.knows(at(1, 0), &data));
        let later = s.stamp(at(0, 1));
        s.atomic(at(0, 1), 0x40, rmw(MemOrder::Release, MemScope::Gpu));
        s.atomic(at(2, 0), 0x40, rmw(MemOrder::Acquire, MemScope::Cta));
        assert!(!s.knows(at(2, 0), &later), "a cta acquire of another block");
    }

    #[test]
    fn updates_continue_a_release_sequence_and_a_plain_store_ends_it() {
        let mut s = Sync::new();
        let data = s.stamp(at(0, 0));
        s.atomic(at(0, 0), 0x40, rmw(MemOrder::Release, MemScope::Gpu));
        s.atomic(at(1, 0), 0x40, rmw(MemOrder::Relaxed, MemScope::Gpu));
        s.atomic(at(2, 0), 0x40, rmw(MemOrder::Acquire, MemScope::Gpu));
        assert!(s.knows(at(2, 0), &data));
        s.plain_store(0x40);
        s.atomic(at(3, 0), 0x40, rmw(MemOrder::Acquire, MemScope::Gpu));
        assert!(!s.knows(at(3, 0), &data));
    }

    #[test]
    fn knowledge_is_transitive_through_blocks() {
        let mut s = Sync::new();
        let first = s.stamp(at(0, 0));
        s.atomic(at(0, 0), 0x40, rmw(MemOrder::Release, MemScope::Gpu));
        s.atomic(at(1, 0), 0x40, rmw(MemOrder::Acquire, MemScope::Gpu));
        s.barrier(1);
        s.atomic(at(1, 9), 0x80, rmw(MemOrder::Release, MemScope::Gpu));
        s.atomic(at(2, 0), 0x80, rmw(MemOrder::Acquire, MemScope::Gpu));
        assert!(s.knows(at(2, 0), &first));
    }
}

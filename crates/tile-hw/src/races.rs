//! The race rule both emulators apply to global memory. Two accesses of
//! one element (or byte) by threads of different blocks race unless one
//! is ordered before the other (`happens`) or both are atomic: a plain
//! store races with any unordered access, a plain load with an unordered
//! store or atomic, an atomic with an unordered plain load or store.

use crate::happens::{Stamp, Sync, ThreadId};

/// How an access touches its memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Touch {
    /// A plain load.
    Read,
    /// A plain store.
    Write,
    /// An atomic update (or an atomic load or store).
    Atomic,
}

impl Touch {
    /// The access as an error message names it: `load`, `store`, `atomic`.
    pub fn name(self) -> &'static str {
        match self {
            Touch::Read => "load",
            Touch::Write => "store",
            Touch::Atomic => "atomic",
        }
    }

    /// The access with its article, for a sentence.
    pub fn described(self) -> &'static str {
        match self {
            Touch::Read => "a load",
            Touch::Write => "a store",
            Touch::Atomic => "an atomic update",
        }
    }
}

/// An earlier access that a later one races with: what it was, and by
/// whom.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Earlier {
    /// The earlier access.
    pub touch: Touch,
    /// Its thread.
    pub who: ThreadId,
}

/// Accesses of one kind that a conflicting access must all follow. A
/// stamp that a later one covers is dropped (`Stamp::covered_by`), so a
/// block keeps at most its threads of its latest generation.
#[derive(Clone, Debug, Default)]
enum Stamps {
    #[default]
    None,
    One(Stamp),
    Many(Vec<Stamp>),
}

impl Stamps {
    fn as_slice(&self) -> &[Stamp] {
        match self {
            Stamps::None => &[],
            Stamps::One(s) => std::slice::from_ref(s),
            Stamps::Many(v) => v,
        }
    }

    fn add(&mut self, stamp: Stamp) {
        match self {
            Stamps::None => *self = Stamps::One(stamp),
            Stamps::One(s) if s.covered_by(&stamp) => *s = stamp,
            Stamps::One(s) => *self = Stamps::Many(vec![*s, stamp]),
            Stamps::Many(v) => {
                v.retain(|s| !s.covered_by(&stamp));
                v.push(stamp);
            }
        }
    }
}

/// Who touched one place (an element or a byte) and when: the last plain
/// store, and the plain loads and the atomic accesses since.
#[derive(Clone, Debug, Default)]
pub struct Place {
    write: Option<Stamp>,
    reads: Stamps,
    atomics: Stamps,
}

impl Place {
    /// Records `touch` by `who` at its time in `sync`, or returns the
    /// earlier access it races with (recording nothing).
    pub fn access(&mut self, sync: &Sync, who: ThreadId, touch: Touch) -> Result<(), Earlier> {
        let unordered = |stamps: &[Stamp], kind: Touch| {
            stamps
                .iter()
                .find(|s| !sync.knows(who, s))
                .map(|s| Earlier {
                    touch: kind,
                    who: s.who,
                })
        };
        let write = self.write.as_slice();
        let race = match touch {
            Touch::Read => unordered(write, Touch::Write)
                .or_else(|| unordered(self.atomics.as_slice(), Touch::Atomic)),
            Touch::Write => unordered(write, Touch::Write)
                .or_else(|| unordered(self.atomics.as_slice(), Touch::Atomic))
                .or_else(|| unordered(self.reads.as_slice(), Touch::Read)),
            Touch::Atomic => unordered(write, Touch::Write)
                .or_else(|| unordered(self.reads.as_slice(), Touch::Read)),
        };
        if let Some(earlier) = race {
            return Err(earlier);
        }
        let now = sync.stamp(who);
        match touch {
            Touch::Read => self.reads.add(now),
            Touch::Atomic => self.atomics.add(now),
            Touch::Write => {
                *self = Place {
                    write: Some(now),
                    ..Place::default()
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::happens::AtomicSync;
    use tile_ir::{MemOrder, MemScope};

    fn at(block: u64, thread: u32) -> ThreadId {
        ThreadId { block, thread }
    }

    #[test]
    fn only_atomics_of_unordered_threads_meet_at_a_place() {
        let s = Sync::new();
        let mut p = Place::default();
        p.access(&s, at(0, 0), Touch::Atomic).unwrap();
        p.access(&s, at(1, 0), Touch::Atomic).unwrap();
        let read = p.access(&s, at(2, 0), Touch::Read);
        assert_eq!(
            read,
            Err(Earlier {
                touch: Touch::Atomic,
                who: at(0, 0)
            })
        );
        let mut r = Place::default();
        r.access(&s, at(3, 0), Touch::Read).unwrap();
        r.access(&s, at(4, 0), Touch::Read).unwrap();
        r.access(&s, at(3, 0), Touch::Write).unwrap_err();
        let mut w = Place::default();
        w.access(&s, at(5, 1), Touch::Write).unwrap();
        w.access(&s, at(5, 1), Touch::Read).unwrap();
        // Another thread of the block, with no barrier between.
        let sibling = w.access(&s, at(5, 2), Touch::Read);
        assert_eq!(sibling.map_err(|e| e.who), Err(at(5, 1)));
        let other_block = w.access(&s, at(6, 2), Touch::Read);
        assert_eq!(other_block.map_err(|e| e.who), Err(at(5, 1)));
    }

    #[test]
    fn a_release_after_a_barrier_orders_plain_accesses_of_blocks() {
        let mut s = Sync::new();
        let mut p = Place::default();
        p.access(&s, at(0, 1), Touch::Write).unwrap();
        s.barrier(0);
        p.access(&s, at(0, 2), Touch::Read).unwrap();
        s.barrier(0);
        let sync = |order| AtomicSync {
            order,
            scope: MemScope::Gpu,
            wrote: true,
        };
        s.atomic(at(0, 0), 0x10, sync(MemOrder::Release));
        s.atomic(at(1, 0), 0x10, sync(MemOrder::Acquire));
        p.access(&s, at(1, 0), Touch::Write).unwrap();
        let unordered = p.access(&s, at(2, 1), Touch::Read);
        assert_eq!(unordered.map_err(|e| e.touch), Err(Touch::Write));
    }
}

//! The race rule both emulators apply to global memory between the blocks
//! of a launch. Blocks are not ordered (they run one after another in an
//! emulator, at once on a GPU), so two of them that meet at one element or
//! byte race unless both update it atomically: a store races with any other
//! block's access, a load with another block's store or atomic, an atomic
//! with another block's plain load or store.

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

/// The blocks (linear indices) that touched a place one way: the first,
/// and whether another did.
#[derive(Clone, Copy, Debug, Default)]
struct Blocks {
    first: Option<u64>,
    more: bool,
}

impl Blocks {
    fn add(&mut self, block: u64) {
        match self.first {
            None => self.first = Some(block),
            Some(b) if b != block => self.more = true,
            Some(_) => {}
        }
    }

    /// A block other than `block` in the set (`None` inside: one not
    /// remembered), if there is one.
    fn other_than(&self, block: u64) -> Option<Option<u64>> {
        match self.first {
            Some(b) if b != block => Some(Some(b)),
            Some(_) if self.more => Some(None),
            _ => None,
        }
    }
}

/// An earlier access of another block that an access races with: what it
/// was, and its block's linear index when remembered.
pub type Earlier = (Touch, Option<u64>);

/// Who read, wrote and updated one place (an element or a byte).
#[derive(Clone, Copy, Debug, Default)]
pub struct Touches {
    read: Blocks,
    written: Blocks,
    updated: Blocks,
}

impl Touches {
    /// The earlier access of another block that `touch` by `block` races
    /// with, if any.
    pub fn conflict(&self, touch: Touch, block: u64) -> Option<Earlier> {
        let check = |blocks: &Blocks, kind| blocks.other_than(block).map(|b| (kind, b));
        match touch {
            Touch::Read => {
                check(&self.written, Touch::Write).or(check(&self.updated, Touch::Atomic))
            }
            Touch::Write => check(&self.written, Touch::Write)
                .or(check(&self.updated, Touch::Atomic))
                .or(check(&self.read, Touch::Read)),
            Touch::Atomic => check(&self.written, Touch::Write).or(check(&self.read, Touch::Read)),
        }
    }

    /// Records `touch` by `block`.
    pub fn add(&mut self, touch: Touch, block: u64) {
        match touch {
            Touch::Read => self.read.add(block),
            Touch::Write => self.written.add(block),
            Touch::Atomic => self.updated.add(block),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_atomics_of_many_blocks_meet_at_a_place() {
        let mut t = Touches::default();
        t.add(Touch::Atomic, 0);
        assert_eq!(t.conflict(Touch::Atomic, 1), None);
        t.add(Touch::Atomic, 1);
        assert_eq!(t.conflict(Touch::Read, 2), Some((Touch::Atomic, Some(0))));
        // Block 0 meets its own atomic, but block 1's too.
        assert_eq!(t.conflict(Touch::Write, 0), Some((Touch::Atomic, None)));
        let mut r = Touches::default();
        r.add(Touch::Read, 3);
        r.add(Touch::Read, 4);
        assert_eq!(r.conflict(Touch::Read, 5), None);
        assert_eq!(r.conflict(Touch::Write, 3), Some((Touch::Read, None)));
        let mut w = Touches::default();
        w.add(Touch::Write, 5);
        assert_eq!(w.conflict(Touch::Read, 5), None);
        assert_eq!(w.conflict(Touch::Atomic, 7), Some((Touch::Write, Some(5))));
    }
}

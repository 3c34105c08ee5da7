//! Races in global memory between the blocks of a launch. Blocks are not
//! ordered (they run one after another here, at once on a GPU), so two of
//! them that meet at one byte race unless both update it atomically: a
//! store races with any other block's access, a load with another block's
//! store or atomic, an atomic with another block's plain load or store.

use std::collections::HashMap;

/// How an access touches its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Touch {
    /// A plain load.
    Read,
    /// A plain store.
    Write,
    /// An atomic read-modify-write or compare-exchange.
    Atomic,
}

impl Touch {
    /// The access with its article, for a sentence.
    pub(crate) fn described(self) -> &'static str {
        match self {
            Touch::Read => "a load",
            Touch::Write => "a store",
            Touch::Atomic => "an atomic update",
        }
    }
}

/// The blocks (linear indices) that touched a byte one way: the first, and
/// whether another did.
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

/// Who read, wrote and updated one byte.
#[derive(Clone, Copy, Debug, Default)]
struct Touches {
    read: Blocks,
    written: Blocks,
    updated: Blocks,
}

/// An earlier access of another block that an access races with: what it
/// was, and its block's linear index when known.
pub(crate) type Earlier = (Touch, Option<u64>);

/// The bytes of global memory a launch touched, and by whom.
#[derive(Debug, Default)]
pub(crate) struct GlobalShadow {
    bytes: HashMap<u64, Touches>,
}

impl GlobalShadow {
    /// Records `touch` of `[address, address + len)` by `block`; the first
    /// earlier access of another block it races with, if any (then nothing
    /// is recorded).
    pub(crate) fn touch(
        &mut self,
        address: u64,
        len: u64,
        block: u64,
        touch: Touch,
    ) -> Result<(), Earlier> {
        for byte in address..address.saturating_add(len) {
            if let Some(t) = self.bytes.get(&byte) {
                let check = |blocks: &Blocks, kind| blocks.other_than(block).map(|b| (kind, b));
                let earlier = match touch {
                    Touch::Read => {
                        check(&t.written, Touch::Write).or(check(&t.updated, Touch::Atomic))
                    }
                    Touch::Write => check(&t.written, Touch::Write)
                        .or(check(&t.updated, Touch::Atomic))
                        .or(check(&t.read, Touch::Read)),
                    Touch::Atomic => {
                        check(&t.written, Touch::Write).or(check(&t.read, Touch::Read))
                    }
                };
                if let Some(earlier) = earlier {
                    return Err(earlier);
                }
            }
        }
        for byte in address..address.saturating_add(len) {
            let t = self.bytes.entry(byte).or_default();
            match touch {
                Touch::Read => t.read.add(block),
                Touch::Write => t.written.add(block),
                Touch::Atomic => t.updated.add(block),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_atomics_of_many_blocks_meet_at_a_byte() {
        let mut g = GlobalShadow::default();
        g.touch(0x100, 4, 0, Touch::Atomic).unwrap();
        g.touch(0x100, 4, 1, Touch::Atomic).unwrap();
        assert_eq!(
            g.touch(0x102, 1, 2, Touch::Read),
            Err((Touch::Atomic, Some(0)))
        );
        g.touch(0x200, 8, 3, Touch::Read).unwrap();
        g.touch(0x200, 8, 4, Touch::Read).unwrap();
        g.touch(0x200, 8, 3, Touch::Read).unwrap();
        assert_eq!(
            g.touch(0x204, 4, 4, Touch::Write),
            Err((Touch::Read, Some(3)))
        );
        // A block meets its own accesses freely; a neighbour's bytes are
        // another element.
        g.touch(0x300, 4, 5, Touch::Write).unwrap();
        g.touch(0x300, 4, 5, Touch::Read).unwrap();
        g.touch(0x304, 4, 6, Touch::Write).unwrap();
        assert_eq!(
            g.touch(0x300, 2, 7, Touch::Atomic),
            Err((Touch::Write, Some(5)))
        );
    }
}

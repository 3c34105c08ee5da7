//! Races in global memory between the blocks of a launch, by byte, under
//! the rule of `tile_abi::races`.

use std::collections::HashMap;
pub(crate) use tile_abi::races::Touch;
use tile_abi::races::{Earlier, Touches};

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
        let bytes = address..address.saturating_add(len);
        for byte in bytes.clone() {
            if let Some(earlier) = self.bytes.get(&byte).and_then(|t| t.conflict(touch, block)) {
                return Err(earlier);
            }
        }
        for byte in bytes {
            self.bytes.entry(byte).or_default().add(touch, block);
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

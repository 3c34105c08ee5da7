//! Global memory: the allocations a launch may reach. Whoever provides
//! device memory (a test's buffers, the driver stand-ins' `cuMemAlloc`)
//! registers each allocation; an emulated access must lie inside one.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// The registered allocations, by start address, with their lengths.
static ALLOCATIONS: Mutex<BTreeMap<u64, u64>> = Mutex::new(BTreeMap::new());

fn allocations() -> std::sync::MutexGuard<'static, BTreeMap<u64, u64>> {
    // A poisoned lock only means a panic elsewhere mid-update of a map that
    // is updated in single calls; the map is consistent.
    ALLOCATIONS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes `len` bytes at `start` reachable by emulated kernels until
/// [`unregister`]ed.
pub fn register(start: u64, len: u64) {
    allocations().insert(start, len);
}

/// Makes the allocation at `start` unreachable again.
pub fn unregister(start: u64) {
    allocations().remove(&start);
}

/// Whether `[address, address + bytes)` lies inside one allocation.
pub(crate) fn reachable(address: u64, bytes: u64) -> bool {
    let map = allocations();
    map.range(..=address)
        .next_back()
        .is_some_and(|(&start, &len)| {
            address
                .checked_add(bytes)
                .is_some_and(|end| end <= start.saturating_add(len))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_access_must_lie_inside_one_allocation() {
        register(0x1000_0000, 64);
        register(0x1000_0040, 64);
        assert!(reachable(0x1000_0000, 64));
        assert!(reachable(0x1000_0038, 8));
        // Across two allocations, even adjacent ones, is outside both.
        assert!(!reachable(0x1000_003c, 8));
        assert!(!reachable(0x0fff_fffc, 4));
        assert!(!reachable(0x1000_0080, 1));
        unregister(0x1000_0000);
        assert!(!reachable(0x1000_0000, 4));
        unregister(0x1000_0040);
    }
}

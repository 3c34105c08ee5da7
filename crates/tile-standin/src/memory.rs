//! Device memory: host allocations, aligned as a driver aligns device
//! memory, made reachable to emulated kernels while they live.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// The alignment of every allocation (CUDA and HIP give at least 256).
const ALIGN: usize = 256;

/// The live allocations, by address, with their layouts.
static ALLOCATIONS: Mutex<BTreeMap<u64, Layout>> = Mutex::new(BTreeMap::new());

fn allocations() -> std::sync::MutexGuard<'static, BTreeMap<u64, Layout>> {
    // The map is updated in single calls, so a panic elsewhere leaves it
    // consistent.
    ALLOCATIONS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Allocates `bytes` (> 0) of zeroed memory; `None` if the size is 0 or too
/// large.
pub(crate) fn alloc(bytes: usize) -> Option<u64> {
    let layout = Layout::from_size_align(bytes, ALIGN)
        .ok()
        .filter(|l| l.size() > 0)?;
    // SAFETY: the layout has a non-zero size.
    let pointer = unsafe { alloc_zeroed(layout) };
    if pointer.is_null() {
        return None;
    }
    let address = pointer as u64;
    allocations().insert(address, layout);
    tile_emu::register(address, bytes as u64);
    Some(address)
}

/// Frees the allocation at `address`; false if there is none.
pub(crate) fn free(address: u64) -> bool {
    let Some(layout) = allocations().remove(&address) else {
        return false;
    };
    tile_emu::unregister(address);
    // SAFETY: `address` was returned by `alloc_zeroed` with `layout` and is
    // freed once (it just left the map).
    unsafe { dealloc(address as *mut u8, layout) };
    true
}

/// Whether `[address, address + bytes)` lies inside one allocation.
pub(crate) fn contains(address: u64, bytes: usize) -> bool {
    allocations()
        .range(..=address)
        .next_back()
        .is_some_and(|(&start, layout)| {
            address
                .checked_add(bytes as u64)
                .is_some_and(|end| end <= start + layout.size() as u64)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_must_stay_inside_one_allocation() {
        let a = alloc(100).expect("memory");
        assert_eq!(a % ALIGN as u64, 0);
        assert!(contains(a, 100));
        assert!(contains(a + 99, 1));
        assert!(!contains(a + 1, 100));
        assert!(alloc(0).is_none());
        assert!(free(a));
        assert!(!free(a), "a double free is refused");
        assert!(!contains(a, 1));
    }
}

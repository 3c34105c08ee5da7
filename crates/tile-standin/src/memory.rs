//! Memory the stand-ins hand out: device allocations, and pinned host
//! allocations. Both are host memory, aligned as a driver aligns them;
//! device memory and *mapped* pinned memory are registered with `tile-emu`
//! while they live, so emulated kernels reach them, and count as device
//! ranges for copies. A mapped pinned allocation's device address is its
//! host address, as under unified addressing.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// The alignment of device allocations (CUDA and HIP give at least 256).
const ALIGN: usize = 256;
/// The alignment of pinned host allocations: a page.
const PAGE: usize = 4096;

/// What an allocation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Device memory (`cuMemAlloc`, `hipMalloc`).
    Device,
    /// Pinned host memory (`cuMemHostAlloc`, `hipHostMalloc`), mapped into
    /// the device's address space or not.
    Pinned { mapped: bool },
}

impl Kind {
    /// Whether a kernel or a copy's device end may address it.
    fn on_device(self) -> bool {
        matches!(self, Kind::Device | Kind::Pinned { mapped: true })
    }
}

/// The live allocations, by address, with their layouts and kinds.
static ALLOCATIONS: Mutex<BTreeMap<u64, (Layout, Kind)>> = Mutex::new(BTreeMap::new());

fn allocations() -> std::sync::MutexGuard<'static, BTreeMap<u64, (Layout, Kind)>> {
    // The map is updated in single calls, so a panic elsewhere leaves it
    // consistent.
    ALLOCATIONS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Allocates `bytes` (> 0) of zeroed device memory; `None` if the size is
/// 0 or too large.
pub(crate) fn alloc(bytes: usize) -> Option<u64> {
    allocate(bytes, Kind::Device)
}

/// Allocates `bytes` (> 0) of zeroed pinned host memory, reachable from
/// kernels if `mapped`; `None` if the size is 0 or too large.
pub(crate) fn alloc_pinned(bytes: usize, mapped: bool) -> Option<u64> {
    allocate(bytes, Kind::Pinned { mapped })
}

fn allocate(bytes: usize, kind: Kind) -> Option<u64> {
    let align = if kind == Kind::Device { ALIGN } else { PAGE };
    let layout = Layout::from_size_align(bytes, align)
        .ok()
        .filter(|l| l.size() > 0)?;
    // SAFETY: the layout has a non-zero size.
    let pointer = unsafe { alloc_zeroed(layout) };
    if pointer.is_null() {
        return None;
    }
    let address = pointer as u64;
    allocations().insert(address, (layout, kind));
    if kind.on_device() {
        tile_emu::register(address, bytes as u64);
    }
    Some(address)
}

/// Frees the device allocation at `address`; false if there is none.
pub(crate) fn free(address: u64) -> bool {
    release(address, |kind| kind == Kind::Device)
}

/// Frees the pinned allocation at `address`; false if there is none.
pub(crate) fn free_pinned(address: u64) -> bool {
    release(address, |kind| matches!(kind, Kind::Pinned { .. }))
}

fn release(address: u64, wanted: impl Fn(Kind) -> bool) -> bool {
    let (layout, kind) = {
        let mut map = allocations();
        match map.get(&address) {
            Some(&(_, kind)) if wanted(kind) => map.remove(&address).expect("just found"),
            _ => return false,
        }
    };
    if kind.on_device() {
        tile_emu::unregister(address);
    }
    // SAFETY: `address` was returned by `alloc_zeroed` with `layout` and is
    // freed once (it just left the map).
    unsafe { dealloc(address as *mut u8, layout) };
    true
}

/// The kind of the allocation holding `[address, address + bytes)`, if one
/// holds it all.
fn holder(address: u64, bytes: usize) -> Option<Kind> {
    allocations()
        .range(..=address)
        .next_back()
        .filter(|(&start, (layout, _))| {
            address
                .checked_add(bytes as u64)
                .is_some_and(|end| end <= start + layout.size() as u64)
        })
        .map(|(_, &(_, kind))| kind)
}

/// Whether `[address, address + bytes)` lies inside one allocation that
/// the device addresses: device memory, or mapped pinned memory.
pub(crate) fn contains(address: u64, bytes: usize) -> bool {
    holder(address, bytes).is_some_and(Kind::on_device)
}

/// Whether `address` lies inside a mapped pinned allocation.
pub(crate) fn mapped(address: u64) -> bool {
    holder(address, 1) == Some(Kind::Pinned { mapped: true })
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
        assert!(!free_pinned(a), "device memory is not pinned memory");
        assert!(free(a));
        assert!(!free(a), "a double free is refused");
        assert!(!contains(a, 1));
    }

    #[test]
    fn only_mapped_pinned_memory_is_on_the_device() {
        let mapped = alloc_pinned(64, true).expect("memory");
        let unmapped = alloc_pinned(64, false).expect("memory");
        assert_eq!(mapped % PAGE as u64, 0);
        assert!(contains(mapped + 8, 56) && super::mapped(mapped + 63));
        assert!(!contains(unmapped, 1) && !super::mapped(unmapped));
        assert!(!free(mapped), "pinned memory is not device memory");
        assert!(free_pinned(mapped) && free_pinned(unmapped));
        assert!(!super::mapped(mapped));
    }
}

//! The host kernel's arguments as compiled code reads them: the packet of
//! parameter slots (built by `tile_runtime::cpu`), the program ids and the
//! status record.
//!
//! The packet lists the parameters in order, one 8-byte slot per word of the
//! GPU kernel ABI (docs/backends.md): a tensor of rank r is its base pointer
//! (the address of element zero), r extents and r strides in elements; a
//! scalar is its bits, zero-extended (bool 0 or 1, f16/bf16/FP8 their bits).
//! The slot after the parameters holds the streaming threshold (`stream.rs`).

use tile_ir::{Function, Type};

pub(super) use tile_runtime::cpu::abi::{STATUS_CHECK, STATUS_INDEX};

/// The first packet slot of each parameter.
pub(super) fn slots(func: &Function) -> Vec<u64> {
    let mut next = 0;
    func.params
        .iter()
        .map(|p| {
            let at = next;
            next += width(func, p);
            at
        })
        .collect()
}

/// The slot of the streaming threshold: the one after the parameters'.
pub(super) fn threshold_slot(func: &Function) -> u64 {
    func.params.iter().map(|p| width(func, p)).sum()
}

/// The slots of parameter `p`.
fn width(func: &Function, p: &tile_ir::Param) -> u64 {
    match func.ty(p.value) {
        Type::Tensor(t) => 1 + 2 * t.rank as u64,
        _ => 1,
    }
}

//! The host kernel's arguments as compiled code reads them: the packet of
//! parameter slots (built by `tile_runtime::cpu`), the program ids and the
//! status record.
//!
//! The packet lists the parameters in order, one 8-byte slot per word of the
//! GPU kernel ABI (docs/backends.md): a tensor of rank r is its base pointer
//! (the address of element zero), r extents and r strides in elements; a
//! scalar is its bits, zero-extended (bool 0 or 1, f16/bf16/FP8 their bits).

use tile_ir::{Function, Type};

pub(super) use tile_runtime::cpu::abi::{STATUS_CHECK, STATUS_INDEX};

/// The first packet slot of each parameter.
pub(super) fn slots(func: &Function) -> Vec<u64> {
    let mut next = 0;
    func.params
        .iter()
        .map(|p| {
            let at = next;
            next += match func.ty(p.value) {
                Type::Tensor(t) => 1 + 2 * t.rank as u64,
                _ => 1,
            };
            at
        })
        .collect()
}

//! The host kernel's arguments: the packet of parameter slots, the program
//! ids and the status record.
//!
//! The packet lists the parameters in order, one 8-byte slot per word of the
//! GPU kernel ABI (docs/backends.md): a tensor of rank r is its base pointer
//! (the address of element zero), r extents and r strides in elements; a
//! scalar is its bits, zero-extended (bool 0 or 1, f16/bf16/FP8 their bits).

use super::HostError;
use tile_ir::interp::{Arg, HostTensor};
use tile_ir::{Function, Type};

/// The status record of one program instance: zero when it ran to the end,
/// else the code of the failure (see `check`), the position of the failing
/// op among the kernel's checks and up to four values (partition indices, a
/// loop step or trip count).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// 0, or the failure's code.
    pub code: u32,
    /// The failing op's position among the kernel's checks.
    pub check: u32,
    /// The failure's values.
    pub index: [i64; 4],
}

/// The byte offsets of [`Status`]'s fields, as the generated code writes them.
pub(super) const STATUS_CHECK: u64 = 4;
pub(super) const STATUS_INDEX: u64 = 8;

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

/// The packet of `args` (already checked against the parameters). Base
/// pointers point into the tensors' buffers, which the caller keeps borrowed
/// mutably for as long as the packet is used.
pub(super) fn pack(func: &Function, args: &mut [Arg]) -> Result<Vec<u64>, HostError> {
    let mut packet = Vec::new();
    for (index, (param, arg)) in func.params.iter().zip(args.iter_mut()).enumerate() {
        match arg {
            Arg::Scalar(s) => packet.push(s.to_bits()),
            Arg::Tensor(t) => {
                if !injective(t) {
                    return Err(HostError::Aliasing {
                        index,
                        param: param.name.clone(),
                        extents: t.shape().to_vec(),
                        strides: t.strides().to_vec(),
                    });
                }
                let skip = t.offset() * t.dtype().size_bytes();
                let extents: Vec<u64> = t.shape().iter().map(|&e| e as u64).collect();
                let strides: Vec<u64> = t.strides().iter().map(|&s| s as i64 as u64).collect();
                // Element zero lies inside the buffer for a non-empty tensor;
                // an empty one is never dereferenced (every access fails the
                // index-space check first).
                let base = t.data_mut().as_mut_ptr().wrapping_add(skip);
                packet.push(base as usize as u64);
                packet.extend(extents);
                packet.extend(strides);
            }
        }
    }
    Ok(packet)
}

/// Whether distinct indices of `t` have distinct addresses, by a sufficient
/// condition: sorted by stride magnitude, each axis's stride exceeds the
/// reach of all smaller axes together (axes of extent 1 reach nothing).
fn injective(t: &HostTensor) -> bool {
    let mut axes: Vec<(u128, u128)> = t
        .shape()
        .iter()
        .zip(t.strides())
        .filter(|(&e, _)| e > 1)
        .map(|(&e, &s)| (s.unsigned_abs() as u128, e as u128))
        .collect();
    axes.sort_unstable();
    let mut reach = 0u128;
    for (stride, extent) in axes {
        if stride <= reach {
            return false;
        }
        reach += stride * (extent - 1);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use tile_ir::DType;

    fn tensor(shape: &[usize], strides: &[isize]) -> HostTensor {
        HostTensor::with_strides(DType::F32, shape, strides, 0, vec![0; 4 * 64]).unwrap()
    }

    #[test]
    fn injectivity_is_decided_by_the_strides() {
        assert!(injective(&tensor(&[4, 8], &[8, 1])));
        assert!(injective(&tensor(&[4, 8], &[1, 4])));
        assert!(injective(&tensor(&[4, 3], &[5, 1])));
        assert!(injective(&tensor(&[1, 8], &[0, 1])));
        assert!(!injective(&tensor(&[2, 8], &[0, 1])));
        assert!(!injective(&tensor(&[2, 2], &[1, 1])));
        assert!(!injective(&tensor(&[4, 8], &[4, 1])));
    }
}

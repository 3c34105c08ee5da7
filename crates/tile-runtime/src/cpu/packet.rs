//! The packet: a kernel's arguments as compiled host code reads them.
//!
//! The packet lists the parameters in order, one 8-byte slot per word of the
//! GPU kernel ABI (docs/backends.md): a tensor of rank r is its base pointer
//! (the address of element zero), r extents and r strides in elements; a
//! scalar is its bits, zero-extended (bool 0 or 1, f16/bf16/FP8 their bits);
//! a tensor array is the address of its tensors' records
//! (`tile_abi::params::TensorRecord`, words the packet owns) and their
//! number.
//! Two slots follow the parameters: the streaming threshold in bytes
//! (`cache.rs`), from which an output tensor gets non-temporal stores, and
//! the address of the print area (`tile_abi::device_print`; 0 when the kernel
//! does not print).

use super::fault::RunError;
use crate::launch::{written_params, LaunchArg};
use tile_ir::interp::HostTensor;
use tile_ir::{Function, Type};

/// A kernel's packet, and the records of its tensor arrays that it points
/// to.
#[derive(Debug)]
pub(super) struct HostPacket {
    /// The slots.
    pub words: Vec<u64>,
    /// The tensor arrays' records, in place while `words` is used.
    _records: Vec<Vec<u64>>,
}

/// The packet of `args` for `func`, after checking every argument against
/// its parameter: the count, each scalar's dtype, each tensor's dtype, rank
/// and extents (at most `i32::MAX`), that a tensor the kernel writes is
/// passed mutably, and that no tensor reaches one address through two
/// indices. Base pointers point into the tensors' buffers, which the caller
/// keeps borrowed for as long as the packet is used. The last two slots
/// are `stream_threshold` and `print_area`.
pub(super) fn pack(
    func: &Function,
    args: &mut [LaunchArg<'_>],
    stream_threshold: u64,
    print_area: u64,
) -> Result<HostPacket, RunError> {
    if args.len() != func.params.len() {
        return Err(RunError::Argument {
            index: args.len().min(func.params.len()),
            param: String::new(),
            expected: format!("{} arguments", func.params.len()),
            found: format!("{} arguments", args.len()),
        });
    }
    let writes = written_params(func);
    let mut packet = Vec::new();
    let mut records = Vec::new();
    for (index, (param, arg)) in func.params.iter().zip(args.iter_mut()).enumerate() {
        let ty = func.ty(param.value);
        let mismatch = |found: String| RunError::Argument {
            index,
            param: param.name.clone(),
            expected: if writes[index] {
                format!("&mut {ty}")
            } else {
                ty.to_string()
            },
            found,
        };
        match (ty, arg) {
            (Type::Scalar(d), LaunchArg::Scalar(s)) if s.dtype() == *d => {
                packet.push(s.to_bits());
            }
            (Type::Tensor(t), LaunchArg::TensorMut(h)) if fits(h, t.dtype, t.rank) => {
                let base = h.data_mut().as_mut_ptr();
                push_tensor(&mut packet, index, &param.name, base, h)?;
            }
            (Type::Tensor(t), LaunchArg::Tensor(h))
                if !writes[index] && fits(h, t.dtype, t.rank) =>
            {
                // The kernel never stores through this parameter (it is not
                // written), so a pointer from a shared borrow is only read.
                let base = h.data().as_ptr().cast_mut();
                push_tensor(&mut packet, index, &param.name, base, h)?;
            }
            (Type::Tensors(t), LaunchArg::Tensors(ts)) if i32::try_from(ts.len()).is_ok() => {
                let mut words = Vec::new();
                for element in ts.iter_mut() {
                    // Each tensor as a tensor argument of the array's type.
                    let (base, h): (*mut u8, &HostTensor) = match element {
                        LaunchArg::TensorMut(h) if fits(h, t.dtype, t.rank) => {
                            let base = h.data_mut().as_mut_ptr();
                            (base, &**h)
                        }
                        // Never stored through, as for a tensor passed `&`.
                        LaunchArg::Tensor(h) if !writes[index] && fits(h, t.dtype, t.rank) => {
                            (h.data().as_ptr().cast_mut(), *h)
                        }
                        _ => return Err(mismatch(element.describe())),
                    };
                    push_tensor(&mut words, index, &param.name, base, h)?;
                }
                push_array(&mut packet, &mut records, words, ts.len());
            }
            (_, arg) => return Err(mismatch(arg.describe())),
        }
    }
    packet.push(stream_threshold);
    packet.push(print_area);
    Ok(HostPacket {
        words: packet,
        _records: records,
    })
}

/// Appends a tensor array's slots, the address of `words` (its records,
/// each laid out as a tensor's slots are) and `count`, and keeps `words`.
fn push_array(packet: &mut Vec<u64>, records: &mut Vec<Vec<u64>>, words: Vec<u64>, count: usize) {
    // The buffer stays where it is when `words` moves into `records`.
    packet.push(words.as_ptr() as u64);
    packet.push(count as u64);
    records.push(words);
}

/// Whether `h` has `dtype`, `rank` axes and extents that fit an `i32`.
fn fits(h: &HostTensor, dtype: tile_ir::DType, rank: usize) -> bool {
    h.dtype() == dtype
        && h.shape().len() == rank
        && h.shape().iter().all(|&e| i32::try_from(e).is_ok())
}

/// Appends `h`'s slots: the address of its element zero (`buffer` is the
/// start of its buffer), its extents and its strides; refuses a tensor whose
/// indices may share an address.
fn push_tensor(
    packet: &mut Vec<u64>,
    index: usize,
    param: &str,
    buffer: *mut u8,
    h: &HostTensor,
) -> Result<(), RunError> {
    if !injective(h) {
        return Err(RunError::Aliasing {
            index,
            param: param.to_string(),
            extents: h.shape().to_vec(),
            strides: h.strides().to_vec(),
        });
    }
    packet.push(element_zero(buffer, h) as u64);
    packet.extend(h.shape().iter().map(|&e| e as u64));
    packet.extend(h.strides().iter().map(|&s| s as i64 as u64));
    Ok(())
}

/// The address of `h`'s element zero, given the start of its buffer. For a
/// non-empty tensor it lies inside the buffer; an empty one is never
/// dereferenced (every access fails the index-space check first).
fn element_zero(buffer: *mut u8, h: &HostTensor) -> usize {
    buffer.wrapping_add(h.offset() * h.dtype().size_bytes()) as usize
}

/// Whether distinct indices of `t` have distinct addresses, by a sufficient
/// condition: sorted by stride magnitude, each axis's stride exceeds the
/// reach of all smaller axes together (axes of extent 1 reach nothing).
fn injective(t: &HostTensor) -> bool {
    if t.shape().contains(&0) {
        // No element at all: no two share an address.
        return true;
    }
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
    use tile_ir::builder::Builder;
    use tile_ir::{DType, Scalar, TensorType};

    fn tensor_type(rank: usize) -> Type {
        Type::Tensor(TensorType::new(DType::F32, rank))
    }

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
        // Empty: any strides.
        assert!(injective(&tensor(&[17, 0], &[0, 1])));
    }

    /// `copy(x: tensor<f32, 2>, n: i32, out: tensor<f32, 2>)`, storing into out.
    fn copy() -> Function {
        let mut b = Builder::new("copy");
        let x = b.param("x", tensor_type(2));
        let _n = b.param("n", Type::Scalar(DType::I32));
        let out = b.param("out", tensor_type(2));
        let zero = b.constant(Scalar::I32(0)).unwrap();
        let vx = b.partition_view(x, &[2, 4]).unwrap();
        let vo = b.partition_view(out, &[2, 4]).unwrap();
        let t = b.load(vx, &[zero, zero]).unwrap();
        b.store(t, vo, &[zero, zero]).unwrap();
        b.finish().unwrap()
    }

    #[test]
    fn a_packet_has_each_tensors_base_extents_and_strides_then_each_scalar() {
        let func = copy();
        let x = HostTensor::with_strides(DType::F32, &[2, 4], &[1, 3], 1, vec![0; 4 * 12]).unwrap();
        let mut out = HostTensor::zeros(DType::F32, &[2, 4]);
        let out_base = out.data().as_ptr() as u64;
        let x_base = x.data().as_ptr() as u64 + 4;
        let mut args = [
            LaunchArg::Tensor(&x),
            LaunchArg::Scalar(Scalar::I32(-7)),
            LaunchArg::TensorMut(&mut out),
        ];
        let packet = pack(&func, &mut args, 1 << 20, 0x5000).unwrap();
        assert_eq!(
            packet.words,
            [
                x_base,
                2,
                4,
                1,
                3,
                (-7i32) as u32 as u64,
                out_base,
                2,
                4,
                4,
                1,
                1 << 20,
                0x5000
            ]
        );
    }

    #[test]
    fn a_packet_is_refused_for_arguments_that_do_not_fit() {
        let func = copy();
        let x = HostTensor::zeros(DType::F32, &[2, 4]);
        let mut out = HostTensor::zeros(DType::F32, &[2, 4]);
        let err = pack(&func, &mut [LaunchArg::Tensor(&x)], 0, 0).unwrap_err();
        assert_eq!(
            err.to_string(),
            "argument 1 (``): expected 3 arguments, found 1 arguments"
        );
        let out_shared = HostTensor::zeros(DType::F32, &[2, 4]);
        let err = pack(
            &func,
            &mut [
                LaunchArg::Tensor(&x),
                LaunchArg::Scalar(Scalar::I32(0)),
                LaunchArg::Tensor(&out_shared),
            ],
            0,
            0,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "argument 2 (`out`): expected &mut tensor<f32, 2>, found &tensor<f32, 2>"
        );
        let err = pack(
            &func,
            &mut [
                LaunchArg::Tensor(&x),
                LaunchArg::Scalar(Scalar::I64(0)),
                LaunchArg::TensorMut(&mut out),
            ],
            0,
            0,
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "argument 1 (`n`): expected i32, found i64");
        let broadcast =
            HostTensor::with_strides(DType::F32, &[2, 4], &[0, 1], 0, vec![0; 16]).unwrap();
        let err = pack(
            &func,
            &mut [
                LaunchArg::Tensor(&broadcast),
                LaunchArg::Scalar(Scalar::I32(0)),
                LaunchArg::TensorMut(&mut out),
            ],
            0,
            0,
        )
        .unwrap_err();
        assert!(matches!(err, RunError::Aliasing { index: 0, .. }), "{err}");
    }
}

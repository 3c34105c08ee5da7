//! Host tensors' buffers: 64-byte aligned from every constructor and clone,
//! for every size (empty and odd ones too), with the bytes, equality and
//! `Debug` of the plain byte vectors they replaced; zeros are not written.

use half::{bf16, f16};
use tile_ir::f8::{F8E4M3, F8E5M2};
use tile_ir::interp::{Element, HostBuffer, HostTensor, TensorError};
use tile_ir::{DType, Scalar};

const SIZES: [usize; 10] = [0, 1, 2, 3, 7, 63, 64, 65, 1001, (1 << 18) + 5];

fn assert_aligned(t: &HostTensor, what: &str) {
    let at = t.data().as_ptr().addr();
    assert_eq!(at % 64, 0, "{what}: buffer at {at:#x}");
    assert_eq!(HostBuffer::ALIGN, 64);
}

/// The little-endian bytes of `values`, through `Scalar`s (the reference).
fn scalar_bytes<T: Element>(values: &[T]) -> Vec<u8> {
    let size = T::DTYPE.size_bytes();
    let mut out = vec![0; values.len() * size];
    for (v, chunk) in values.iter().zip(out.chunks_exact_mut(size)) {
        v.to_scalar().write_le(chunk).unwrap();
    }
    out
}

/// Every constructor of a tensor of `values` (plus clones) is aligned and
/// holds exactly the elements' bytes.
fn check<T: Element>(make: impl Fn(usize) -> T) {
    for n in SIZES {
        let values: Vec<T> = (0..n).map(&make).collect();
        let bytes = scalar_bytes(&values);
        let what = format!("{} x {n}", T::DTYPE);

        let z = HostTensor::zeros(T::DTYPE, &[n]);
        assert_aligned(&z, &format!("zeros {what}"));
        assert_eq!(z.data().len(), bytes.len());
        assert!(z.data().iter().all(|&b| b == 0), "zeros {what}");

        let v = HostTensor::from_vec(&[n], values.clone()).unwrap();
        assert_aligned(&v, &format!("from_vec {what}"));
        assert_eq!(v.data(), &bytes[..], "from_vec {what}");
        // Compared as bytes: NaN payloads are values too.
        assert_eq!(
            scalar_bytes(&v.to_vec::<T>().unwrap()),
            bytes,
            "from_vec {what}"
        );

        let scalars: Vec<Scalar> = values.iter().map(|x| x.to_scalar()).collect();
        let s = HostTensor::from_scalars(T::DTYPE, &[n], &scalars).unwrap();
        assert_aligned(&s, &format!("from_scalars {what}"));
        assert_eq!(s, v, "from_scalars {what}");

        // Reversed, over the same bytes.
        let offset = n.saturating_sub(1);
        let w = HostTensor::with_strides(T::DTYPE, &[n], &[-1], offset, bytes.clone()).unwrap();
        assert_aligned(&w, &format!("with_strides {what}"));
        assert_eq!(w.data(), &bytes[..], "with_strides {what}");
        let reversed: Vec<T> = values.iter().rev().copied().collect();
        assert_eq!(
            scalar_bytes(&w.to_vec::<T>().unwrap()),
            scalar_bytes(&reversed),
            "with_strides {what}"
        );

        let b = HostTensor::from_buffer(T::DTYPE, &[n], HostBuffer::from_slice(&bytes)).unwrap();
        assert_aligned(&b, &format!("from_buffer {what}"));
        assert_eq!(b, v, "from_buffer {what}");

        for (name, t) in [("zeros", &z), ("from_vec", &v), ("with_strides", &w)] {
            let c = t.clone();
            assert_aligned(&c, &format!("clone of {name} {what}"));
            assert_eq!(&c, t, "clone of {name} {what}");
            assert_eq!(c.data(), t.data(), "clone of {name} {what}");
        }
        if n > 0 {
            // A write reaches the clone's own aligned copy only.
            let mut c = v.clone();
            c.data_mut()[0] ^= 1;
            assert_aligned(&c, &format!("written clone {what}"));
            assert_ne!(c, v, "written clone {what}");
            assert_eq!(
                v.data(),
                &bytes[..],
                "from_vec after writing a clone, {what}"
            );
        }
    }
}

#[test]
fn every_constructor_and_clone_is_aligned_for_every_dtype_and_size() {
    check(|i| i % 3 == 0);
    check(|i| (i as i8).wrapping_mul(37));
    check(|i| (i as i16).wrapping_mul(-1237));
    check(|i| (i as i32).wrapping_mul(-0x0123_4567));
    check(|i| (i as i64).wrapping_mul(-0x0123_4567_89ab_cdef));
    check(|i| (i as u8).wrapping_mul(37));
    check(|i| (i as u16).wrapping_mul(1237));
    check(|i| (i as u32).wrapping_mul(0x0123_4567));
    check(|i| (i as u64).wrapping_mul(0x0123_4567_89ab_cdef));
    check(|i| f16::from_bits((i as u16).wrapping_mul(2654)));
    check(|i| bf16::from_bits((i as u16).wrapping_mul(2654)));
    check(|i| f32::from_bits((i as u32).wrapping_mul(0x9e37_79b9)));
    check(|i| f64::from_bits((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)));
    check(|i| F8E4M3::from_bits((i as u8).wrapping_mul(37)));
    check(|i| F8E5M2::from_bits((i as u8).wrapping_mul(37)));
}

#[test]
fn multi_axis_and_empty_shapes_are_aligned() {
    for shape in [
        &[0usize][..],
        &[3, 0, 5],
        &[],
        &[1, 1, 1],
        &[3, 5, 7],
        &[33, 31],
    ] {
        let n: usize = shape.iter().product();
        let z = HostTensor::zeros(DType::F32, shape);
        assert_aligned(&z, &format!("zeros {shape:?}"));
        let v = HostTensor::from_vec(shape, (0..n).map(|i| i as f32).collect()).unwrap();
        assert_aligned(&v, &format!("from_vec {shape:?}"));
        assert_eq!(v.to_vec::<f32>().unwrap().len(), n);
        assert_aligned(&v.clone(), &format!("clone {shape:?}"));
    }
}

#[test]
fn write_le_slice_writes_what_scalars_write() {
    let mut out = [0u8; 12];
    f32::write_le_slice(&[1.0, -2.5, f32::NAN], &mut out);
    assert_eq!(out.to_vec(), scalar_bytes(&[1.0f32, -2.5, f32::NAN]));
    let mut out = [7u8; 3];
    bool::write_le_slice(&[true, false, true], &mut out);
    assert_eq!(out, [1, 0, 1]);
}

#[test]
#[should_panic(expected = "bytes for 2 f32 elements")]
fn write_le_slice_refuses_a_wrong_length() {
    f32::write_le_slice(&[1.0, 2.0], &mut [0u8; 7]);
}

#[test]
fn from_buffer_checks_the_length() {
    assert_eq!(
        HostTensor::from_buffer(DType::F32, &[2], HostBuffer::zeroed(7)),
        Err(TensorError::Ragged {
            bytes: 7,
            dtype: DType::F32
        })
    );
    assert_eq!(
        HostTensor::from_buffer(DType::F32, &[2, 2], HostBuffer::zeroed(12)),
        Err(TensorError::Length {
            shape: vec![2, 2],
            expected: 4,
            found: 3
        })
    );
    let t = HostTensor::from_buffer_with_strides(
        DType::U8,
        &[2, 2],
        &[1, 2],
        0,
        HostBuffer::from_slice(&[1, 2, 3, 4]),
    )
    .unwrap();
    assert_eq!(t.to_vec::<u8>().unwrap(), vec![1, 3, 2, 4]);
    assert!(HostTensor::from_buffer_with_strides(
        DType::U8,
        &[2, 2],
        &[1, 2],
        1,
        HostBuffer::from_slice(&[1, 2, 3, 4])
    )
    .is_err());
}

#[test]
fn equality_and_debug_are_those_of_the_bytes() {
    let a = HostTensor::from_vec(&[3], vec![1u8, 2, 3]).unwrap();
    let b = HostTensor::with_strides(DType::U8, &[3], &[1], 0, vec![1, 2, 3]).unwrap();
    assert_eq!(a, b);
    let c = HostTensor::with_strides(DType::U8, &[3], &[1], 0, vec![1, 2, 4]).unwrap();
    assert_ne!(a, c);
    // The same shape over a longer buffer is another tensor.
    let d = HostTensor::with_strides(DType::U8, &[3], &[1], 0, vec![1, 2, 3, 0]).unwrap();
    assert_ne!(a, d);
    assert_eq!(
        format!("{a:?}"),
        "HostTensor { dtype: U8, shape: [3], strides: [1], offset: 0, data: [1, 2, 3] }"
    );
}

/// Page faults this thread has taken (field 10 of `/proc/thread-self/stat`).
#[cfg(target_os = "linux")]
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    // The fields after the command name, which is in parentheses.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    rest.split(' ').nth(7).unwrap().parse().unwrap()
}

/// A tensor of zeros does not write its buffer, so a large one costs a few
/// page faults, not one per page (16,384 for 64 MiB of 4 KiB pages, or 32 of
/// 2 MiB huge pages): the CPU device advises the kernel about the pages
/// before they are first touched.
#[cfg(target_os = "linux")]
#[test]
fn zeros_leave_the_pages_untouched() {
    let bytes = 64 << 20;
    minor_faults();
    let before = minor_faults();
    let t = HostTensor::zeros(DType::F32, &[bytes / 4]);
    let after = minor_faults();
    assert_aligned(&t, "64 MiB of zeros");
    assert!(
        after - before < 16,
        "making 64 MiB of zeros took {} page faults",
        after - before
    );
    // Reading one element per page faults them in (as zero pages).
    let sum: u32 = t.data().iter().step_by(4096).map(|&b| u32::from(b)).sum();
    assert_eq!(sum, 0);
    drop(t);
    let before = minor_faults();
    let c = HostBuffer::zeroed(bytes);
    let after = minor_faults();
    assert!(after - before < 16, "{} page faults", after - before);
    drop(c);
}

//! Host tensors: construction, validation of strides, element access and
//! conversions, with every error.

use half::{bf16, f16};
use tile_ir::f8::{F8E4M3, F8E5M2};
use tile_ir::interp::{Element, HostTensor, TensorError};
use tile_ir::{DType, Scalar};

#[test]
fn row_major_tensors_round_trip_every_element_type() {
    fn round_trip<T: Element + PartialEq + std::fmt::Debug>(values: Vec<T>) {
        let t = HostTensor::from_vec(&[2, 2], values.clone()).unwrap();
        assert_eq!(t.dtype(), T::DTYPE);
        assert_eq!(t.strides(), &[2, 1]);
        assert_eq!(t.data().len(), 4 * T::DTYPE.size_bytes());
        assert_eq!(t.to_vec::<T>().unwrap(), values);
        let scalars: Vec<Scalar> = values.iter().map(|v| v.to_scalar()).collect();
        assert_eq!(t.to_scalars(), scalars);
        assert_eq!(
            HostTensor::from_scalars(T::DTYPE, &[2, 2], &scalars).unwrap(),
            t
        );
    }
    round_trip(vec![true, false, false, true]);
    round_trip(vec![-1i8, 2, i8::MIN, i8::MAX]);
    round_trip(vec![-1i16, 2, i16::MIN, i16::MAX]);
    round_trip(vec![-1i32, 2, i32::MIN, i32::MAX]);
    round_trip(vec![-1i64, 2, i64::MIN, i64::MAX]);
    round_trip(vec![1u8, 2, 0, u8::MAX]);
    round_trip(vec![1u16, 2, 0, u16::MAX]);
    round_trip(vec![1u32, 2, 0, u32::MAX]);
    round_trip(vec![1u64, 2, 0, u64::MAX]);
    round_trip(vec![
        f16::ONE,
        f16::NEG_ZERO,
        f16::MAX,
        f16::MIN_POSITIVE_SUBNORMAL,
    ]);
    round_trip(vec![bf16::ONE, bf16::NEG_ZERO, bf16::MAX, bf16::INFINITY]);
    round_trip(vec![1.5f32, -0.0, f32::MAX, f32::MIN_POSITIVE]);
    round_trip(vec![1.5f64, -0.0, f64::MAX, 5e-324]);
    round_trip(vec![
        F8E4M3::from_bits(0x7e),
        F8E4M3::from_bits(1),
        F8E4M3::from_f64(-2.0),
        F8E4M3::from_bits(0),
    ]);
    round_trip(vec![
        F8E5M2::from_bits(0x7c),
        F8E5M2::from_bits(1),
        F8E5M2::from_f64(-2.0),
        F8E5M2::from_bits(0),
    ]);
}

#[test]
fn little_endian_layout() {
    let t = HostTensor::from_vec(&[2], vec![0x0102_0304u32, 0xa0b0_c0d0]).unwrap();
    assert_eq!(t.data(), &[4, 3, 2, 1, 0xd0, 0xc0, 0xb0, 0xa0]);
}

#[test]
fn zeros_get_and_set() {
    let mut t = HostTensor::zeros(DType::I16, &[2, 3]);
    assert_eq!(t.get(&[1, 2]), Some(Scalar::I16(0)));
    t.set(&[1, 2], Scalar::I16(-7)).unwrap();
    assert_eq!(t.get(&[1, 2]), Some(Scalar::I16(-7)));
    assert_eq!(t.to_vec::<i16>().unwrap(), vec![0, 0, 0, 0, 0, -7]);
    assert_eq!(t.get(&[2, 0]), None);
    assert_eq!(t.get(&[0]), None);
    assert_eq!(
        t.set(&[0, 3], Scalar::I16(1)),
        Err(TensorError::Index {
            index: vec![0, 3],
            shape: vec![2, 3]
        })
    );
    assert_eq!(
        t.set(&[0, 0], Scalar::I32(1)),
        Err(TensorError::DType {
            expected: DType::I16,
            found: DType::I32
        })
    );
    assert!(t.to_vec::<i32>().is_err());
}

#[test]
fn strided_tensors_read_in_logical_order() {
    // A 2x3 view, transposed, of a 3x2 row-major buffer [0..6), at offset 1.
    let data: Vec<u8> = (0..7u8).flat_map(|v| f32::from(v).to_le_bytes()).collect();
    let t = HostTensor::with_strides(DType::F32, &[2, 3], &[1, 2], 1, data.clone()).unwrap();
    assert_eq!(
        t.to_vec::<f32>().unwrap(),
        vec![1.0, 3.0, 5.0, 2.0, 4.0, 6.0]
    );
    assert_eq!(t.element_offset(&[1, 2]), Some(6));
    // Negative strides walk backwards from the offset.
    let r = HostTensor::with_strides(DType::F32, &[7], &[-1], 6, data).unwrap();
    assert_eq!(
        r.to_vec::<f32>().unwrap(),
        vec![6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 0.0]
    );
}

#[test]
fn invalid_layouts_are_rejected() {
    let buf = |n: usize| vec![0u8; n * 4];
    let out_of =
        |shape: &[usize], strides: &[isize], offset: usize, len: usize| TensorError::OutOfBuffer {
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            offset,
            len,
        };
    assert_eq!(
        HostTensor::with_strides(DType::F32, &[2, 3], &[3, 1], 1, buf(6)),
        Err(out_of(&[2, 3], &[3, 1], 1, 6))
    );
    assert_eq!(
        HostTensor::with_strides(DType::F32, &[3], &[-1], 1, buf(6)),
        Err(out_of(&[3], &[-1], 1, 6))
    );
    assert_eq!(
        HostTensor::with_strides(DType::F32, &[3], &[1, 1], 0, buf(6)),
        Err(TensorError::Rank {
            rank: 1,
            strides: 2
        })
    );
    assert_eq!(
        HostTensor::with_strides(DType::F32, &[1], &[1], 0, vec![0; 6]),
        Err(TensorError::Ragged {
            bytes: 6,
            dtype: DType::F32
        })
    );
    // An empty tensor reaches no element, whatever its strides.
    assert!(HostTensor::with_strides(DType::F32, &[0, 5], &[100, 100], 50, Vec::new()).is_ok());
    assert_eq!(
        HostTensor::from_vec(&[2, 2], vec![1u8, 2, 3]),
        Err(TensorError::Length {
            shape: vec![2, 2],
            expected: 4,
            found: 3
        })
    );
    assert_eq!(
        HostTensor::from_scalars(DType::U8, &[1], &[Scalar::I8(1)]),
        Err(TensorError::DType {
            expected: DType::U8,
            found: DType::I8
        })
    );
    let err = HostTensor::with_strides(DType::F32, &[2, 3], &[3, 1], 1, buf(6)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "shape [2, 3] with strides [3, 1] and offset 1 reaches elements outside a buffer of 6 elements"
    );
}

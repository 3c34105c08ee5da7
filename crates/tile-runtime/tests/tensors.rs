//! Strided tensors (column-major and padded views of a buffer) as kernel
//! arguments, the refusal to write through an overlapping layout, and the
//! `ndarray` conversions.

use tile_ir::samples;
use tile_runtime::{launch, Device, Error, KernelSpec};

fn transpose_kernel() -> KernelSpec {
    let ir = samples::transpose(4, 8).unwrap().to_string();
    KernelSpec::without_images("transpose", "test", Box::leak(ir.into_boxed_str()), 1)
}

#[test]
fn a_column_major_input_is_read_through_its_strides() {
    let dev = Device::cpu();
    let (m, n) = (5, 9);
    // Column-major storage of the m x n matrix a[i][j] = 10 i + j.
    let mut buffer = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            buffer[j * m + i] = (10 * i + j) as f32;
        }
    }
    let x = dev
        .tensor_with_strides(&buffer, &[m, n], &[1, m as isize], 0)
        .unwrap();
    assert_eq!(x.strides(), &[1, 5]);
    let mut out = dev.zeros::<f32>(&[n, m]).unwrap();
    let grid = [m.div_ceil(4) as u32, n.div_ceil(8) as u32, 1];
    launch(
        &dev,
        &transpose_kernel(),
        grid,
        &mut [(&x).into(), (&mut out).into()],
    )
    .unwrap();
    let got = out.to_vec().unwrap();
    for i in 0..m {
        for j in 0..n {
            assert_eq!(got[j * m + i], (10 * i + j) as f32);
        }
    }
}

#[test]
fn a_padded_output_is_written_only_where_its_elements_are() {
    let dev = Device::cpu();
    let (m, n, pitch) = (3, 4, 6);
    let x = dev
        .tensor_from_slice(&(0..12).map(|v| v as f32).collect::<Vec<_>>(), &[m, n])
        .unwrap();
    // out is 4 x 3 with a row pitch of 6: the gaps keep their -1.
    let mut out = dev
        .tensor_with_strides(&vec![-1.0f32; 4 * pitch], &[n, m], &[pitch as isize, 1], 0)
        .unwrap();
    launch(
        &dev,
        &transpose_kernel(),
        [1, 1, 1],
        &mut [(&x).into(), (&mut out).into()],
    )
    .unwrap();
    assert_eq!(
        out.to_vec().unwrap(),
        vec![0.0, 4.0, 8.0, 1.0, 5.0, 9.0, 2.0, 6.0, 10.0, 3.0, 7.0, 11.0]
    );
}

#[test]
fn writing_through_an_overlapping_layout_is_refused() {
    let dev = Device::cpu();
    let x = dev.zeros::<f32>(&[3, 4]).unwrap();
    // Rows of 3 elements 2 apart: row i and i+1 share an element.
    let mut out = dev
        .tensor_with_strides(&[0.0f32; 16], &[4, 3], &[2, 1], 0)
        .unwrap();
    let err = launch(
        &dev,
        &transpose_kernel(),
        [1, 1, 1],
        &mut [(&x).into(), (&mut out).into()],
    )
    .unwrap_err();
    assert!(matches!(err, Error::OverlappingOutput { .. }));
    assert_eq!(
        err.to_string(),
        "kernel `transpose`, argument `out` on device cpu: the kernel writes this tensor, but its shape [4, 3] with strides [2, 1] overlaps itself: axis 0 (extent 4, stride 2) steps by less than the 3 element(s) the smaller axes span"
    );
}

#[test]
fn a_view_that_leaves_its_buffer_is_an_error() {
    let dev = Device::cpu();
    let err = dev
        .tensor_with_strides(&[0.0f32; 10], &[3, 4], &[4, 1], 0)
        .unwrap_err();
    assert!(matches!(err, Error::InvalidTensor { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with("invalid tensor of shape [3, 4] on device cpu:"),
        "{err}"
    );
}

#[test]
fn ndarray_arrays_convert_in_logical_order() {
    let dev = Device::cpu();
    let a = ndarray::Array2::from_shape_fn((3, 5), |(i, j)| (i * 5 + j) as f32);
    // A transposed view: logical order differs from memory order.
    let t = dev.tensor_from_ndarray(&a.t()).unwrap();
    assert_eq!(t.shape(), &[5, 3]);
    let back = t.to_ndarray().unwrap();
    assert_eq!(back, a.t().into_dyn());
    // A row-major array (taken as one slice) and a strided view of one.
    let r = dev.tensor_from_ndarray(&a).unwrap();
    assert_eq!(r.shape(), &[3, 5]);
    assert_eq!(r.to_ndarray().unwrap(), a.clone().into_dyn());
    let every_other = a.slice(ndarray::s![.., ..;2]);
    let s = dev.tensor_from_ndarray(&every_other).unwrap();
    assert_eq!(s.to_ndarray().unwrap(), every_other.into_dyn());
}

#[test]
fn descriptors_lay_out_tensors_row_and_column_major() {
    use tile_tensor::descriptor::{StrideOrder, TensorDescriptor};
    let dev = Device::cpu();
    let data: Vec<f32> = (0..6).map(|v| v as f32).collect();
    let row = TensorDescriptor::packed(&[2, 3], StrideOrder::RowMajor).unwrap();
    let col = TensorDescriptor::packed(&[2, 3], StrideOrder::ColumnMajor).unwrap();
    let a = dev.tensor_from_descriptor(&data, &row).unwrap();
    let b = dev.tensor_from_descriptor(&data, &col).unwrap();
    assert_eq!((a.strides(), b.strides()), (&[3, 1][..], &[1, 2][..]));
    assert_eq!(a.to_vec().unwrap(), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    assert_eq!(b.to_vec().unwrap(), [0.0, 2.0, 4.0, 1.0, 3.0, 5.0]);
    // A leading dimension of 4 (a padded pitch) needs 1 + 1·4 + 2·1 = 7
    // elements.
    let pitched = TensorDescriptor::with_strides(&[2, 3], &[4, 1], StrideOrder::RowMajor).unwrap();
    let err = dev.tensor_from_descriptor(&data, &pitched).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tensor of shape [2, 3] needs 7 elements, found 6 (device cpu)"
    );
    let wider: Vec<f32> = (0..7).map(|v| v as f32).collect();
    let c = dev.tensor_from_descriptor(&wider, &pitched).unwrap();
    assert_eq!(c.to_vec().unwrap(), [0.0, 1.0, 2.0, 4.0, 5.0, 6.0]);
}

#[test]
fn a_tensor_carries_its_ck_descriptor() {
    use tile_tensor::descriptor::{StrideOrder, TensorDescriptor};
    let dev = Device::cpu();
    let (m, n) = (5, 9);
    let row_major = dev.zeros::<f32>(&[m, n]).unwrap();
    let d = row_major.descriptor().unwrap();
    assert_eq!(
        d,
        TensorDescriptor::packed(&[m, n], StrideOrder::RowMajor).unwrap()
    );
    // A column-major tensor made from a descriptor gives that descriptor back.
    let column = TensorDescriptor::packed(&[m, n], StrideOrder::ColumnMajor).unwrap();
    let t = dev
        .tensor_from_descriptor(&vec![1.0f32; column.element_space_size()], &column)
        .unwrap();
    assert_eq!(t.descriptor().unwrap(), column);
    assert_eq!(t.descriptor().unwrap().element_space_size(), m * n);
    // A reversed axis has no CK descriptor.
    let reversed = dev
        .tensor_with_strides(&[1.0f32, 2.0, 3.0], &[3], &[-1], 2)
        .unwrap();
    let err = reversed.descriptor().unwrap_err().to_string();
    assert!(
        err.contains("no CK descriptor for strides [-1]") && err.contains("cpu"),
        "{err}"
    );
}

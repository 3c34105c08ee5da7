//! `multiple_of(x, n)`: a column offset promised a multiple of the vector
//! reads its window in whole vectors; the promise is checked, and a launch
//! that breaks it fails on the CPU device and in the interpreter with the
//! value and the divisor.

use tile::ir::interp::HostTensor;
use tile::{tile_kernel, Device, Error, Tensor};

/// `y[r, ..B] = 2 · x[r, start..start + B]`, the columns past `x`'s rows
/// zero.
#[tile_kernel(configs(B = 32), aligned(x, y))]
fn shifted_rows<const B: usize>(x: &Tensor<f32, 2>, y: &mut Tensor<f32, 2>, start: i32) {
    let r = program_id(0);
    let from = multiple_of(start, 8);
    let t = partition_view(x.offset([0, from]), [1, B]).load_masked(r, 0);
    partition_view(y, [1, B]).store(t * 2.0, r, 0);
}

const ROWS: usize = 3;
const COLS: usize = 48;

fn input() -> Vec<f32> {
    (0..ROWS * COLS).map(|i| i as f32 - 50.0).collect()
}

fn expected(start: usize) -> Vec<f32> {
    let x = input();
    (0..ROWS * 32)
        .map(|i| {
            let (r, c) = (i / 32, start + i % 32);
            if c < COLS {
                2.0 * x[r * COLS + c]
            } else {
                0.0
            }
        })
        .collect()
}

#[test]
fn an_offset_that_keeps_the_promise_reads_its_window() {
    let dev = Device::cpu();
    let x = dev.tensor_from_slice(&input(), &[ROWS, COLS]).unwrap();
    for start in [0, 8, 24] {
        let mut y: Tensor<f32> = dev.zeros(&[ROWS, 32]).unwrap();
        shifted_rows::<32>::launch(&dev, [ROWS as u32], (&x, &mut y, start as i32)).unwrap();
        assert_eq!(y.to_vec().unwrap(), expected(start), "start {start}");
    }
}

#[test]
fn an_offset_that_breaks_the_promise_fails_the_launch() {
    let dev = Device::cpu();
    let x = dev.tensor_from_slice(&input(), &[ROWS, COLS]).unwrap();
    let mut y: Tensor<f32> = dev.zeros(&[ROWS, 32]).unwrap();
    let err = shifted_rows::<32>::launch(&dev, [ROWS as u32], (&x, &mut y, 12)).unwrap_err();
    assert!(matches!(err, Error::Execution { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.starts_with("kernel `shifted_rows` failed on device cpu: program (0, 0, 0): `multiple_of(..)` at tests/multiple_of.rs:14:16"),
        "{text}"
    );
    assert!(
        text.ends_with("assertion failed: `multiple_of`: 12 is not a multiple of 8"),
        "{text}"
    );
    let x = HostTensor::from_vec(&[ROWS, COLS], input()).unwrap();
    let mut y = HostTensor::zeros(tile::ir::DType::F32, &[ROWS, 32]);
    let err = shifted_rows::<32>::interpret([ROWS as u32], (&x, &mut y, 12)).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("assertion failed: `multiple_of`: 12 is not a multiple of 8"),
        "{err}"
    );
}

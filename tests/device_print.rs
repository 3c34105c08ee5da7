//! `device_print!` in kernels on the CPU device: a print of scalars is one
//! line per program, a print with tiles one line per element; the lines
//! reach the device's sink in program order, also from a launch that then
//! fails, and say what plain Rust says of the same values (floats as
//! `{:?}` formats them).

use std::sync::{Arc, Mutex};
use tile::{tile_kernel, Device, Error};

#[tile_kernel(configs(B = 4))]
fn show<const B: usize>(x: &Tensor<f32>, tag: u8) {
    let pid = program_id(0);
    device_print!("program {} of {}, tag {tag}", pid, num_programs(0));
    let t = partition_view(x, [B]).load(pid);
    device_print!("x = {} at {:?}", t, iota::<i32>([B]) + pid * B as i32);
}

#[tile_kernel(configs(B = 4))]
fn show_then_check<const B: usize>(x: &Tensor<f32>) {
    let pid = program_id(0);
    let t = partition_view(x, [B]).load(pid);
    device_print!("sum {}", t.sum(0));
    device_assert!(t < 100.0, "program {} holds too much", pid);
}

#[tile_kernel(configs(B = 2))]
fn show_in_a_loop<const B: usize>(x: &Tensor<i32, 2>) {
    let pid = program_id(0);
    for i in 0..3 {
        device_print!("step {} of program {}", i, pid);
    }
    let t = partition_view(x, [B, B]).load(pid, 0);
    device_print!("{}", t);
}

/// A CPU device whose printed lines are collected.
fn collecting() -> (Device, Arc<Mutex<Vec<String>>>) {
    let dev = Device::cpu();
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&lines);
    dev.on_print(move |line| sink.lock().unwrap().push(line.to_string()));
    (dev, lines)
}

#[test]
fn scalars_print_a_line_a_program_and_tiles_a_line_an_element() {
    let (dev, lines) = collecting();
    let values: Vec<f32> = (0..12).map(|i| i as f32 * 0.75 - 2.0).collect();
    let x = dev.tensor_from_slice(&values, &[12]).unwrap();
    show::<4>::launch(&dev, [3], (&x, 7)).unwrap();
    let mut want = Vec::new();
    for p in 0..3 {
        want.push(format!("program ({p}, 0, 0): program {p} of 3, tag 7"));
        for e in 0..4 {
            let i = 4 * p + e;
            want.push(format!(
                "program ({p}, 0, 0) element [{e}]: x = {:?} at {i}",
                values[i]
            ));
        }
    }
    assert_eq!(*lines.lock().unwrap(), want);
}

#[test]
fn a_launch_that_fails_still_delivers_its_lines() {
    let (dev, lines) = collecting();
    let mut values = vec![1.0f32; 8];
    values[6] = 250.0;
    let x = dev.tensor_from_slice(&values, &[8]).unwrap();
    let err = show_then_check::<4>::launch(&dev, [2], (&x,)).unwrap_err();
    assert!(matches!(err, Error::Execution { .. }), "{err:?}");
    assert!(
        err.to_string().ends_with("program 1 holds too much"),
        "{err}"
    );
    assert_eq!(
        *lines.lock().unwrap(),
        ["program (0, 0, 0): sum 4.0", "program (1, 0, 0): sum 253.0"]
    );
}

#[test]
fn prints_in_loops_and_of_two_dimensional_tiles() {
    let (dev, lines) = collecting();
    let x = dev
        .tensor_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8], &[4, 2])
        .unwrap();
    show_in_a_loop::<2>::launch(&dev, [2], (&x,)).unwrap();
    let mut want = Vec::new();
    for p in 0..2 {
        for i in 0..3 {
            want.push(format!("program ({p}, 0, 0): step {i} of program {p}"));
        }
        for r in 0..2 {
            for c in 0..2 {
                let v = 4 * p + 2 * r + c + 1;
                want.push(format!("program ({p}, 0, 0) element [{r}, {c}]: {v}"));
            }
        }
    }
    assert_eq!(*lines.lock().unwrap(), want);
}

#[test]
fn the_ir_carries_the_print_and_its_message() {
    let ir = show::<4>::ir();
    assert!(ir.contains(r#"print 0 "program {} of {}, tag {}""#), "{ir}");
    assert!(ir.contains(r#"print 1 "x = {} at {}""#), "{ir}");
}

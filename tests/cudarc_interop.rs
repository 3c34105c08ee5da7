//! `tile` kernels on cudarc's memory and streams, without copies, on the
//! CUDA driver stand-in (`tile-standin`, on `LD_LIBRARY_PATH` as
//! `libcuda.so.1` with `libcuda.so` linked to it, the names cudarc and the
//! runtime open, so both share one driver instance): cudarc allocates and
//! fills the input, the runtime launches a kernel on it (and on a
//! `CudaView` of part of it) on cudarc's stream, and cudarc reads the
//! result back; a `tile` tensor's memory is
//! read by cudarc as a slice, and a `tile` stream used as cudarc's.
//!
//! Driver libraries are opened once per process, so the checks run in a
//! child process (this test binary again, running the ignored test
//! [`cudarc_on_the_stand_in`]) with the environment set.

#[path = "../examples/common/emulation_images.rs"]
mod emulation_images;
#[path = "support/standin_child.rs"]
mod standin_child;

use cudarc::driver::CudaContext;
use std::sync::Arc;
use tile::runtime::driver::GpuApi;
use tile::{tile_kernel, Device};
use tile_codegen::{Sm, Target};

/// The name of the child test.
const CHILD: &str = "cudarc_on_the_stand_in";

/// `out = x + 1`, one tile per program.
#[tile_kernel(configs(B = 32))]
fn plus_one<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    partition_view(out, [B]).store(partition_view(x, [B]).load(pid) + 1.0, pid);
}

#[test]
fn tile_kernels_run_on_cudarc_memory_and_streams() {
    let dir = standin_child::standin_dir("cudarc", &[GpuApi::Cuda]);
    let written = emulation_images::write_images(
        &dir.0,
        &[&plus_one::<32>::INFO],
        &[Target::Nvptx(Sm::Sm80)],
    );
    assert_eq!(written, 1, "`plus_one` has sm_80 PTX");
    standin_child::run_child(&dir.0, CHILD, &[]);
}

#[test]
#[ignore = "run by tile_kernels_run_on_cudarc_memory_and_streams, with the stand-in as the driver"]
fn cudarc_on_the_stand_in() {
    let context = CudaContext::new(0).expect("cudarc's context on the stand-in");
    let theirs = context.new_stream().expect("a cudarc stream");
    let device = Device::from_cudarc(&context).expect("the device of cudarc's context");
    assert_eq!(device.to_string(), "cuda:0");
    let n = 128;
    let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
    let input = Arc::new(theirs.clone_htod(&xs).expect("cudarc uploads"));
    let output = Arc::new(theirs.alloc_zeros::<f32>(n).expect("cudarc allocates"));
    let x = device
        .tensor_from_cudarc(Arc::clone(&input), &[n])
        .expect("x over cudarc's slice");
    let mut out = device
        .tensor_from_cudarc(Arc::clone(&output), &[n])
        .expect("out over cudarc's slice");
    let stream = device.stream_from_cudarc(&theirs).expect("cudarc's stream");
    assert_eq!(stream.as_raw(), Some(theirs.cu_stream().cast()));
    plus_one::<32>::launch_on(&stream, [n as u32 / 32], (&x, &mut out)).expect("a launch");
    stream.synchronize().expect("done");
    let want: Vec<f32> = xs.iter().map(|v| v + 1.0).collect();
    assert_eq!(
        theirs.clone_dtoh(&*output).expect("cudarc reads back"),
        want
    );

    // A cudarc view of part of a slice, borrowed.
    let part = input.slice(32..96);
    // SAFETY: `input` outlives the launch, which is done before it drops
    // (the stream is synchronized below).
    let x_part = unsafe { device.tensor_from_cudarc_borrowed(&part, &[64]) }.expect("a view");
    let mut y_part = device.empty::<f32>(&[64]).expect("y");
    plus_one::<32>::launch_on(&stream, [2], (&x_part, &mut y_part)).expect("on a view");
    stream.synchronize().expect("done");
    assert_eq!(y_part.to_vec().expect("y"), want[32..96].to_vec());

    // A tile tensor read by cudarc, and a tile stream used by cudarc.
    let ones = device
        .tensor_from_slice(&vec![1.0f32; n], &[n])
        .expect("ones");
    let mut twos = device.empty::<f32>(&[n]).expect("twos");
    let ours = device.stream().expect("a tile stream");
    plus_one::<32>::launch_on(&ours, [n as u32 / 32], (&ones, &mut twos)).expect("a launch");
    // SAFETY: used only while `ours` lives (in this scope).
    let as_theirs = unsafe { ours.to_cudarc(&context) }.expect("cudarc's view of our stream");
    let view = twos
        .as_cudarc(&as_theirs)
        .expect("cudarc's view of our tensor");
    assert_eq!(
        as_theirs.clone_dtoh(&*view).expect("cudarc reads"),
        vec![2.0f32; n]
    );
    drop(view);
    assert_eq!(twos.to_vec().expect("still ours"), vec![2.0f32; n]);

    // A stream or slice of another context is refused by name.
    let cpu = Device::cpu();
    assert_eq!(
        cpu.stream_from_cudarc(&theirs)
            .map(|_| ())
            .unwrap_err()
            .to_string(),
        "a cudarc stream used on a device: cuda:0 (cudarc) and cpu are different devices"
    );
}

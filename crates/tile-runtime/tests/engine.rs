//! The runtime held by an engine: a `Device` and its `Stream`s stored side
//! by side in one struct (a stream owns a handle to its device), tensors
//! written in place, events on the CPU, and the errors of what only a GPU
//! does.

use tile_ir::samples;
use tile_runtime::{launch_on, Device, Error, KernelSpec, Stream, Tensor};

/// What an inference engine keeps: its device, a stream per worker, its
/// kernels.
struct Engine {
    device: Device,
    streams: Vec<Stream>,
    add: KernelSpec,
}

impl Engine {
    fn new(device: &Device, workers: usize) -> Result<Engine, Error> {
        let ir = samples::vector_add(64).unwrap().to_string();
        Ok(Engine {
            device: device.clone(),
            streams: (0..workers)
                .map(|_| device.stream())
                .collect::<Result<_, _>>()?,
            add: KernelSpec::without_images(
                "vector_add",
                "test",
                Box::leak(ir.into_boxed_str()),
                4,
            ),
        })
    }

    /// `out = x + y` on worker `w`'s stream.
    fn add(
        &self,
        w: usize,
        (x, y): (&Tensor<f32>, &Tensor<f32>),
        out: &mut Tensor<f32>,
    ) -> Result<(), Error> {
        let grid = [x.shape()[0].div_ceil(64) as u32, 1, 1];
        launch_on(
            &self.streams[w],
            &self.add,
            grid,
            &mut [x.into(), y.into(), out.into()],
        )
    }
}

#[test]
fn an_engine_keeps_its_device_beside_its_streams() {
    let engine = Engine::new(&Device::cpu(), 2).expect("an engine");
    let n = 200;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let x = engine.device.tensor_from_slice(&xs, &[n]).unwrap();
    let mut out = engine.device.empty::<f32>(&[n]).unwrap();
    let start = engine.streams[1].record().unwrap();
    engine.add(1, (&x, &x), &mut out).unwrap();
    let end = engine.streams[1].record().unwrap();
    engine.streams[1].synchronize().unwrap();
    assert!(end.is_done().unwrap());
    assert!(end.elapsed_ms(&start).unwrap() >= 0.0);
    let doubled: Vec<f32> = xs.iter().map(|v| v * 2.0).collect();
    assert_eq!(out.to_vec().unwrap(), doubled);
    assert_eq!(engine.streams[0].device().to_string(), "cpu");
    assert_eq!(engine.streams[0].as_raw(), None);
    assert_eq!(out.device_ptr(), None);
    assert_eq!(engine.device.info(), None);
}

#[test]
fn a_strided_tensor_is_overwritten_in_place_element_by_element() {
    let device = Device::cpu();
    // A column-major 2×3 view of 6 elements.
    let mut t = device
        .tensor_with_strides(&[0f32; 6], &[2, 3], &[1, 2], 0)
        .unwrap();
    let kept = t.clone();
    t.copy_from_slice(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    assert_eq!(t.to_vec().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(kept.to_vec().unwrap(), [0.0; 6], "a clone keeps its values");
    assert_eq!(
        t.copy_from_slice(&[1.0]).unwrap_err().to_string(),
        "tensor of shape [2, 3] needs 6 elements, found 1 (device cpu)"
    );
}

#[test]
fn what_only_a_gpu_does_is_refused_on_the_cpu() {
    let device = Device::cpu();
    let stream = device.stream().unwrap();
    assert_eq!(
        stream.capture(|_| Ok(())).unwrap_err().to_string(),
        "capturing a graph is not supported on device cpu"
    );
    // SAFETY: refused before the pointer is used.
    let raw = unsafe { device.tensor_from_raw::<f32>(0x1000, 4, (&[4], &[1]), None) };
    assert_eq!(
        raw.unwrap_err().to_string(),
        "invalid tensor of shape [4] on device cpu: a tensor over device memory needs a GPU device"
    );
}

#[test]
fn a_raw_stream_needs_a_gpu() {
    let device = Device::cpu();
    // SAFETY: refused before the handle is used.
    let stream = unsafe { device.stream_from_raw(std::ptr::null_mut()) };
    assert_eq!(
        stream.map(|_| ()).unwrap_err().to_string(),
        "a stream from a raw handle is not supported on device cpu"
    );
}

#[test]
fn copies_on_a_cpu_stream_are_done_when_they_return() {
    let device = Device::cpu();
    let stream = device.stream().unwrap();
    let mut t = device.zeros::<f32>(&[3]).unwrap();
    stream.upload(&mut t, &[1.0, 2.0, 3.0]).unwrap();
    assert_eq!(
        stream.download(&t).unwrap().wait().unwrap(),
        [1.0, 2.0, 3.0]
    );
    assert_eq!(
        stream.upload(&mut t, &[1.0]).unwrap_err().to_string(),
        "tensor of shape [3] needs 3 elements, found 1 (device cpu)"
    );
}

#[test]
fn slices_view_a_range_of_an_axis_and_fills_set_every_element() {
    let device = Device::cpu();
    let xs: Vec<f32> = (0..12).map(|i| i as f32).collect();
    let t = device.tensor_from_slice(&xs, &[3, 4]).unwrap();
    let rows = t.slice(0, 1..3).unwrap();
    assert_eq!(rows.shape(), [2, 4]);
    assert_eq!(rows.to_vec().unwrap(), xs[4..].to_vec());
    let cols = t.slice(1, 1..3).unwrap();
    assert_eq!(cols.to_vec().unwrap(), [1.0, 2.0, 5.0, 6.0, 9.0, 10.0]);
    assert_eq!(t.slice(1, 2..2).unwrap().shape(), [3, 0]);
    assert_eq!(
        t.slice(2, 0..1).map(|_| ()).unwrap_err().to_string(),
        "invalid tensor of shape [3, 4] on device cpu: no axis 2 to slice"
    );
    assert_eq!(
        t.slice(1, 3..5).map(|_| ()).unwrap_err().to_string(),
        "invalid tensor of shape [3, 4] on device cpu: the range 3..5 of axis 1 is not within 0..4"
    );
    let mut filled = device.full(&[2, 3], 2.5f32).unwrap();
    assert_eq!(filled.to_vec().unwrap(), [2.5; 6]);
    filled.fill(-1.0).unwrap();
    assert_eq!(filled.to_vec().unwrap(), [-1.0; 6]);
}

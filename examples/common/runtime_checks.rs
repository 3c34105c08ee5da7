//! The runtime's own checks for the GPU bundle (`demo --check`): on a
//! device, streams ordered by events, copies queued on a stream, a graph
//! replayed, a dependent launch, fills and slices, a kernel on memory
//! wrapped from its raw pointer, device prints, a failing `device_assert!`
//! stopping its stream, the autotuner, and the launch errors. Each is an
//! item of pass or fail with what it saw; on the CPU device the checks
//! that only a GPU does expect their `Unsupported` error instead.

use std::sync::{Arc, Mutex};
use tile::autotune::{Autotuner, Candidate};
use tile::{tile_kernel, Device, DeviceKind, Error, KernelSpec, LaunchArg};

/// `out = 2 x`, one tile per program.
#[tile_kernel(configs(B = 32))]
pub fn twice<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    partition_view(out, [B]).store(partition_view(x, [B]).load(pid) * 2.0, pid);
}

/// `out = 2 x` as a dependent launch: waits for the launch before it only
/// before reading `x`.
#[tile_kernel(configs(B = 32))]
pub fn twice_after<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    gdc_wait();
    let v = partition_view(x, [B]).load(pid) * 2.0;
    partition_view(out, [B]).store(v, pid);
    gdc_launch_dependents();
}

/// Prints a line per program and its tile.
#[tile_kernel(configs(B = 8))]
pub fn shout<const B: usize>(x: &Tensor<f32>) {
    let pid = program_id(0);
    device_print!(
        "program {} of {}: {}",
        pid,
        num_programs(0),
        partition_view(x, [B]).load(pid)
    );
}

/// Copies `x`, asserting every element is below `limit`.
#[tile_kernel(configs(B = 32))]
pub fn bounded<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>, limit: f32) {
    let pid = program_id(0);
    let v = partition_view(x, [B]).load(pid);
    device_assert!(v < limit, "program {pid}: a value is not below {limit}");
    partition_view(out, [B]).store(v, pid);
}

/// A copy in tiles of `B`: the autotuner's two candidates.
#[tile_kernel(configs(B = 16), configs(B = 32))]
pub fn copy<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    partition_view(out, [B]).store(partition_view(x, [B]).load(pid), pid);
}

/// The kernels of these checks, for the stand-ins' emulation images.
pub fn kernels() -> [&'static tile::meta::KernelInfo; 6] {
    [
        &twice::<32>::INFO,
        &twice_after::<32>::INFO,
        &shout::<8>::INFO,
        &bounded::<32>::INFO,
        &copy::<16>::INFO,
        &copy::<32>::INFO,
    ]
}

/// One check's name and what it found: `Ok` with a summary, or why it
/// failed.
pub type Outcome = (&'static str, Result<String, String>);

/// Every check on `dev`.
pub fn run(dev: &Device) -> Vec<Outcome> {
    let gpu = dev.kind() != DeviceKind::Cpu;
    vec![
        ("streams and events", streams(dev)),
        ("stream copies", copies(dev)),
        ("graph replay", graph(dev, gpu)),
        ("dependent launch", dependent(dev)),
        ("fills and slices", fills(dev)),
        ("raw device pointer", raw(dev, gpu)),
        ("device print", prints(dev)),
        ("device assert", asserts(dev)),
        ("autotune", autotune(dev)),
        ("launch errors", launch_errors(dev, gpu)),
    ]
}

/// A runtime error as a check's failure.
fn text(e: Error) -> String {
    e.to_string()
}

/// `Ok` if `got` is `want`, else an error showing both.
fn expect<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, expected {want:?}"))
    }
}

/// 256 values whose doubles are exact.
fn values() -> Vec<f32> {
    (0..256).map(|i| i as f32 * 0.25 - 16.0).collect()
}

/// `xs` doubled `times` times.
fn doubled(xs: &[f32], times: i32) -> Vec<f32> {
    xs.iter().map(|v| v * 2f32.powi(times)).collect()
}

/// Two streams ordered by an event: the second doubles what the first
/// wrote; the device time between two events.
fn streams(dev: &Device) -> Result<String, String> {
    let xs = values();
    let x = dev.tensor_from_slice(&xs, &[256]).map_err(text)?;
    let mut mid = dev.empty::<f32>(&[256]).map_err(text)?;
    let mut out = dev.empty::<f32>(&[256]).map_err(text)?;
    let (a, b) = (dev.stream().map_err(text)?, dev.stream().map_err(text)?);
    let start = a.record().map_err(text)?;
    twice::<32>::launch_on(&a, [8], (&x, &mut mid)).map_err(text)?;
    let done = a.record().map_err(text)?;
    b.wait(&done).map_err(text)?;
    twice::<32>::launch_on(&b, [8], (&mid, &mut out)).map_err(text)?;
    b.synchronize().map_err(text)?;
    let ms = done.elapsed_ms(&start).map_err(text)?;
    a.synchronize().map_err(text)?;
    expect(
        "the second stream's result",
        out.to_vec().map_err(text)?,
        doubled(&xs, 2),
    )?;
    Ok(format!(
        "ordered by an event; the first launch took {ms:.3} ms"
    ))
}

/// Upload, launch and download queued on one stream.
fn copies(dev: &Device) -> Result<String, String> {
    let xs = values();
    let mut x = dev.empty::<f32>(&[256]).map_err(text)?;
    let mut out = dev.empty::<f32>(&[256]).map_err(text)?;
    let stream = dev.stream().map_err(text)?;
    stream.upload(&mut x, &xs).map_err(text)?;
    twice::<32>::launch_on(&stream, [8], (&x, &mut out)).map_err(text)?;
    let got = stream.download(&out).map_err(text)?.wait().map_err(text)?;
    expect("the download", got, doubled(&xs, 1))?;
    Ok("upload, launch, download in order".into())
}

/// Two launches captured, replayed twice (on the CPU: `Unsupported`).
fn graph(dev: &Device, gpu: bool) -> Result<String, String> {
    let xs = values();
    let x = dev.tensor_from_slice(&xs, &[256]).map_err(text)?;
    let mut mid = dev.empty::<f32>(&[256]).map_err(text)?;
    let mut out = dev.empty::<f32>(&[256]).map_err(text)?;
    let stream = dev.stream().map_err(text)?;
    let captured = stream.capture(|s| {
        twice::<32>::launch_on(s, [8], (&x, &mut mid))?;
        twice::<32>::launch_on(s, [8], (&mid, &mut out))
    });
    let graph = match (captured, gpu) {
        (Ok(graph), true) => graph,
        (Err(Error::Unsupported { .. }), false) => return Ok("not on the CPU (as expected)".into()),
        (other, _) => return Err(format!("capture: {other:?}")),
    };
    for _ in 0..2 {
        out.fill(0.0).map_err(text)?;
        graph.launch(&stream).map_err(text)?;
        stream.synchronize().map_err(text)?;
        expect("a replay", out.to_vec().map_err(text)?, doubled(&xs, 2))?;
    }
    Ok("two launches, replayed twice".into())
}

/// Two dependent launches in a row on one stream.
fn dependent(dev: &Device) -> Result<String, String> {
    let xs = values();
    let x = dev.tensor_from_slice(&xs, &[256]).map_err(text)?;
    let mut mid = dev.empty::<f32>(&[256]).map_err(text)?;
    let mut out = dev.empty::<f32>(&[256]).map_err(text)?;
    let stream = dev.stream().map_err(text)?;
    twice_after::<32>::launch_on(&stream, [8], (&x, &mut mid)).map_err(text)?;
    twice_after::<32>::launch_on(&stream, [8], (&mid, &mut out)).map_err(text)?;
    stream.synchronize().map_err(text)?;
    expect(
        "the second launch",
        out.to_vec().map_err(text)?,
        doubled(&xs, 2),
    )?;
    Ok("the second waited for the first".into())
}

/// `full`, `fill`, and a launch on a slice.
fn fills(dev: &Device) -> Result<String, String> {
    let mut t = dev.full(&[96], 1.5f32).map_err(text)?;
    expect("full", t.to_vec().map_err(text)?, vec![1.5; 96])?;
    t.fill(-3.0).map_err(text)?;
    expect("fill", t.to_vec().map_err(text)?, vec![-3.0; 96])?;
    let xs = values();
    let x = dev.tensor_from_slice(&xs, &[256]).map_err(text)?;
    let half = x.slice(0, 128..256).map_err(text)?;
    let mut out = dev.empty::<f32>(&[128]).map_err(text)?;
    twice::<32>::launch(dev, [4], (&half, &mut out)).map_err(text)?;
    expect(
        "a slice",
        out.to_vec().map_err(text)?,
        doubled(&xs[128..], 1),
    )?;
    Ok("full, fill, a slice's second half".into())
}

/// A tensor over another tensor's device memory, from its raw pointer.
fn raw(dev: &Device, gpu: bool) -> Result<String, String> {
    let xs = values();
    let x = dev.tensor_from_slice(&xs, &[256]).map_err(text)?;
    let Some(pointer) = x.device_ptr() else {
        return if gpu {
            Err("a GPU tensor without a device pointer".into())
        } else {
            Ok("not on the CPU (as expected)".into())
        };
    };
    // SAFETY: `x`'s 256 elements, alive as long as the view and its
    // launches (the owner holds a clone of `x`, which shares its memory).
    let view = unsafe {
        dev.tensor_from_raw::<f32>(pointer, 256, (&[256], &[1]), Some(Arc::new(x.clone())))
    }
    .map_err(text)?;
    let mut out = dev.empty::<f32>(&[256]).map_err(text)?;
    twice::<32>::launch(dev, [8], (&view, &mut out)).map_err(text)?;
    expect("the view", out.to_vec().map_err(text)?, doubled(&xs, 1))?;
    Ok(format!("a view of {pointer:#x}"))
}

/// The lines a printing kernel sends, as the CPU device sends them.
fn prints(dev: &Device) -> Result<String, String> {
    let lines_on = |d: &Device| -> Result<Vec<String>, String> {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&lines);
        d.on_print(move |line| sink.lock().expect("the lines").push(line.to_string()));
        let x = d.tensor_from_slice(&values()[..24], &[24]).map_err(text)?;
        shout::<8>::launch(d, [3], (&x,)).map_err(text)?;
        let mut lines = lines.lock().expect("the lines").clone();
        lines.sort();
        Ok(lines)
    };
    let (got, want) = (lines_on(dev)?, lines_on(&Device::cpu())?);
    expect("the printed lines", &got, &want)?;
    Ok(format!("{} lines, as on the CPU", got.len()))
}

/// A false `device_assert!` fails its launch with its message and stops
/// the stream.
fn asserts(dev: &Device) -> Result<String, String> {
    let mut xs = values();
    xs[77] = 100.0;
    let x = dev.tensor_from_slice(&xs, &[256]).map_err(text)?;
    let mut out = dev.empty::<f32>(&[256]).map_err(text)?;
    let stream = dev.stream().map_err(text)?;
    let queued = bounded::<32>::launch_on(&stream, [8], (&x, &mut out, 50.0));
    let message = match queued.and_then(|()| stream.synchronize()) {
        Err(e) => e.to_string(),
        Ok(()) => return Err("the assertion did not fail".into()),
    };
    if !message.contains("program 2: a value is not below 50") {
        return Err(format!(
            "the failure does not name the assertion: {message}"
        ));
    }
    match twice::<32>::launch_on(&stream, [8], (&x, &mut out)) {
        Err(Error::StreamFailed { .. }) => Ok(message),
        other => Err(format!("the stream went on after the failure: {other:?}")),
    }
}

/// The autotuner chooses one of `copy`'s two specializations, timed with
/// events, and reuses the choice.
fn autotune(dev: &Device) -> Result<String, String> {
    let dir = std::env::temp_dir().join(format!("tile-check-autotune-{}", std::process::id()));
    let tuner = Autotuner::in_dir(&dir).with_progress(|_| {});
    let candidates = [
        Candidate {
            spec: copy::<16>::kernel_spec(),
            grid: [16, 1, 1],
        },
        Candidate {
            spec: copy::<32>::kernel_spec(),
            grid: [8, 1, 1],
        },
    ];
    let xs = values();
    let x = dev.tensor_from_slice(&xs, &[256]).map_err(text)?;
    let mut result = Ok(());
    for _ in 0..2 {
        let mut out = dev.zeros::<f32>(&[256]).map_err(text)?;
        let mut args = [(&x).into(), (&mut out).into()];
        let launched = tuner.launch(dev, &[256], &candidates, &mut args);
        result = result.and(launched.map(drop).map_err(text));
        result = result.and(expect(
            "the chosen copy",
            out.to_vec().map_err(text)?,
            xs.clone(),
        ));
    }
    let _ = std::fs::remove_dir_all(&dir);
    result?;
    expect("candidates timed", tuner.timed(), 2)?;
    Ok("timed both once, reused the choice".into())
}

/// The launch errors: a tensor of another device, a grid beyond the
/// device, an argument of the wrong dtype.
fn launch_errors(dev: &Device, gpu: bool) -> Result<String, String> {
    let x = dev.tensor_from_slice(&values(), &[256]).map_err(text)?;
    let mut out = dev.empty::<f32>(&[256]).map_err(text)?;
    let mut seen = Vec::new();
    if gpu {
        let on_cpu = Device::cpu()
            .tensor_from_slice(&values(), &[256])
            .map_err(text)?;
        match twice::<32>::launch(dev, [8], (&on_cpu, &mut out)) {
            Err(Error::WrongDevice { .. }) => seen.push("WrongDevice"),
            other => return Err(format!("a CPU tensor on {dev}: {other:?}")),
        }
        match twice::<32>::launch(dev, [u32::MAX], (&x, &mut out)) {
            Err(Error::GridTooLarge { .. }) => seen.push("GridTooLarge"),
            other => return Err(format!("a grid of 2^32 - 1 blocks on {dev}: {other:?}")),
        }
    }
    let ints = dev.tensor_from_slice(&[1i32; 256], &[256]).map_err(text)?;
    let spec: KernelSpec = twice::<32>::kernel_spec();
    let mut args: [LaunchArg<'_>; 2] = [(&ints).into(), (&mut out).into()];
    match tile::launch(dev, &spec, [8, 1, 1], &mut args) {
        Err(Error::ArgumentMismatch { .. }) => seen.push("ArgumentMismatch"),
        other => return Err(format!("an i32 tensor for an f32 one: {other:?}")),
    }
    Ok(seen.join(", "))
}

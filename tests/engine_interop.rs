//! The runtime as another engine uses it, on the CUDA driver stand-in
//! (`tile-standin`, put on `LD_LIBRARY_PATH` as `libcuda.so.1`), whose
//! call log shows every driver call the runtime makes:
//!
//! * a launch in the steady state is one `cuLaunchKernel` on the stream,
//!   with no allocation, copy or synchronization (the status record comes
//!   from the stream's pinned slab), and launches on two streams are on
//!   non-blocking streams, which nothing serializes;
//! * `zeros` fills on the device, without a host upload;
//! * kernels run on device memory and a stream the caller made with the
//!   driver directly (`tensor_from_raw`, `stream_from_raw`), and the
//!   result is read back with the driver, without the runtime's copies;
//! * copies queued on a stream go through its pinned staging memory: one
//!   async copy call each once warm, in order with its launches;
//! * a kernel that waits for its grid dependency (`gdc_wait`) is launched
//!   to overlap the launch before it on a Hopper stand-in
//!   (`cuLaunchKernelEx`), plainly on an sm_80 one, with the same results;
//! * events order two streams and time their work; two launches captured
//!   into a graph replay with one call; discovery lists the stand-in with
//!   its properties; a driver error says its name.
//!
//! Driver libraries are opened once per process, so the checks run in a
//! child process (this test binary again, running the ignored test
//! [`engine_on_the_stand_in`]) with the environment set.

#[path = "../examples/common/emulation_images.rs"]
mod emulation_images;
#[path = "support/standin_child.rs"]
mod standin_child;

use std::ffi::c_void;
use tile::runtime::driver::GpuApi;
use tile::{tile_kernel, Device, GpuArch};
use tile_codegen::{Sm, Target};
use tile_standin::calls::{Call, CallKind};

/// The name of the child test.
const CHILD: &str = "engine_on_the_stand_in";

/// `out = 2 x`, one tile per program.
#[tile_kernel(configs(B = 32))]
fn twice<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    partition_view(out, [B]).store(partition_view(x, [B]).load(pid) * 2.0, pid);
}

/// `out = 2 x` as the second of two dependent launches: it waits for the
/// launch before it on its stream only where it reads that launch's
/// output, and lets the next launch start once it has stored.
#[tile_kernel(configs(B = 32))]
fn twice_after<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    gdc_wait();
    let v = partition_view(x, [B]).load(pid) * 2.0;
    partition_view(out, [B]).store(v, pid);
    gdc_launch_dependents();
}

#[test]
fn engines_use_the_runtime_through_the_cuda_stand_in() {
    let dir = standin_child::standin_dir("engine", &[GpuApi::Cuda]);
    let written = emulation_images::write_images(
        &dir.0,
        &[&twice::<32>::INFO, &twice_after::<32>::INFO],
        &[Target::Nvptx(Sm::Sm80), Target::Nvptx(Sm::Sm90)],
    );
    assert_eq!(
        written, 4,
        "`twice` and `twice_after` have sm_80 and sm_90 PTX"
    );
    standin_child::run_child(&dir.0, CHILD, &[]);
    standin_child::run_child(&dir.0, HOPPER_CHILD, &[("TILE_STANDIN_SM", "90")]);
}

/// The name of the child test on a Hopper stand-in.
const HOPPER_CHILD: &str = "dependent_launches_on_a_hopper_stand_in";

/// Two dependent launches of `twice_after`: on sm_90 each is a launch
/// that may overlap the one before it (`cuLaunchKernelEx` with
/// programmatic stream serialization), elsewhere a plain launch; the
/// results are the same.
fn dependent_launches(device: &Device, driver: &Driver, overlapping: bool) {
    let xs: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let x = device.tensor_from_slice(&xs, &[64]).expect("x");
    let mut mid = device.empty::<f32>(&[64]).expect("mid");
    let mut out = device.empty::<f32>(&[64]).expect("out");
    let stream = device.stream().expect("a stream");
    twice_after::<32>::launch_on(&stream, [2], (&x, &mut mid)).expect("warm-up");
    stream.synchronize().expect("warm");
    driver.calls();
    twice_after::<32>::launch_on(&stream, [2], (&x, &mut mid)).expect("the first");
    twice_after::<32>::launch_on(&stream, [2], (&mid, &mut out)).expect("the second");
    let calls = driver.calls();
    let launches: Vec<&str> = names(&calls)
        .into_iter()
        .filter(|n| n.starts_with("cuLaunch"))
        .collect();
    let launch = if overlapping {
        "cuLaunchKernelEx"
    } else {
        "cuLaunchKernel"
    };
    assert_eq!(launches, [launch; 2]);
    stream.synchronize().expect("done");
    let quadrupled: Vec<f32> = xs.iter().map(|v| v * 4.0).collect();
    assert_eq!(out.to_vec().expect("out"), quadrupled);
}

#[test]
#[ignore = "run by engines_use_the_runtime_through_the_cuda_stand_in, with a Hopper stand-in as the driver"]
fn dependent_launches_on_a_hopper_stand_in() {
    let device = Device::cuda(0).expect("the Hopper stand-in");
    assert_eq!(
        device.info().map(|i| i.arch.to_string()).as_deref(),
        Some("sm_90")
    );
    dependent_launches(&device, &Driver::open(), true);
    let ptx = twice_after::<32>::ptx("sm_90").expect("sm_90 PTX");
    assert!(ptx.contains("griddepcontrol.wait;"), "{ptx}");
    assert!(ptx.contains("griddepcontrol.launch_dependents;"), "{ptx}");
    let older = twice_after::<32>::ptx("sm_80").expect("sm_80 PTX");
    assert!(!older.contains("griddepcontrol"), "{older}");
    // The CPU runs the kernel as well (its launches never overlap).
    let cpu = Device::cpu();
    let x = cpu.tensor_from_slice(&[1.5f32; 32], &[32]).expect("x");
    let mut out = cpu.empty::<f32>(&[32]).expect("out");
    twice_after::<32>::launch(&cpu, [1], (&x, &mut out)).expect("on the CPU");
    assert_eq!(out.to_vec().expect("out"), [3.0f32; 32]);
}

/// The stand-in loaded as the driver, for its call log and for calling it
/// as another library would.
struct Driver(libloading::Library);

impl Driver {
    fn open() -> Driver {
        // SAFETY: the stand-in, already loaded by the runtime under this
        // name (so this is the same instance, with the same log).
        Driver(unsafe { libloading::Library::new("libcuda.so.1") }.expect("the stand-in"))
    }

    /// The calls since the last [`Driver::calls`], and clears the log.
    fn calls(&self) -> Vec<Call> {
        type Read = unsafe extern "C" fn(*mut u8, usize) -> usize;
        type Clear = unsafe extern "C" fn();
        // SAFETY: the stand-in's exported signatures.
        let (read, clear) = unsafe {
            (
                *self.0.get::<Read>(b"tile_standin_calls").expect("the log"),
                *self
                    .0
                    .get::<Clear>(b"tile_standin_calls_clear")
                    .expect("clear"),
            )
        };
        // SAFETY: a null buffer of capacity 0 asks for the length only.
        let needed = unsafe { read(std::ptr::null_mut(), 0) };
        let mut buffer = vec![0u8; needed];
        // SAFETY: the buffer holds `needed` bytes.
        let written = unsafe { read(buffer.as_mut_ptr(), buffer.len()) };
        assert_eq!(written, needed);
        // SAFETY: no arguments.
        unsafe { clear() };
        tile_standin::calls::parse(std::str::from_utf8(&buffer).expect("UTF-8"))
            .expect("a well-formed log")
    }

    fn call<T: Copy>(&self, name: &[u8]) -> T {
        // SAFETY: each `T` requested is the entry point's `cuda.h`
        // signature.
        *unsafe { self.0.get::<T>(name) }.expect("an entry point")
    }
}

/// The names of `calls`, for messages.
fn names(calls: &[Call]) -> Vec<&str> {
    calls.iter().map(|c| c.name.as_str()).collect()
}

#[test]
#[ignore = "run by engines_use_the_runtime_through_the_cuda_stand_in, with the stand-in as the driver"]
fn engine_on_the_stand_in() {
    let found = Device::enumerate();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].arch, GpuArch::Cuda { major: 8, minor: 0 });
    assert_eq!(Device::count(GpuApi::Cuda).expect("a count"), 1);
    let device = Device::best().expect("a device");
    assert_eq!(device.info(), Some(&found[0]));
    let driver = Driver::open();
    steady_state_launches(&device, &driver);
    foreign_memory_and_stream(&device, &driver);
    events(&device);
    graphs(&device, &driver);
    copies(&device, &driver);
    fills_and_slices(&device, &driver);
    dependent_launches(&device, &driver, false);
}

/// One launch call per launch once a stream is warm; nothing serializes
/// two streams; `zeros` fills on the device.
fn steady_state_launches(device: &Device, driver: &Driver) {
    let xs: Vec<f32> = (0..256).map(|i| i as f32).collect();
    let x = device.tensor_from_slice(&xs, &[256]).expect("x");
    driver.calls();
    let mut out = device.zeros::<f32>(&[256]).expect("out");
    let made = driver.calls();
    assert!(
        made.iter()
            .all(|c| c.kind != CallKind::Copy || c.name.starts_with("cuMemsetD8")),
        "zeros copies nothing from the host: {:?}",
        names(&made)
    );
    let (a, b) = (device.stream().expect("a"), device.stream().expect("b"));
    let grid = [8];
    twice::<32>::launch_on(&a, grid, (&x, &mut out)).expect("warm-up");
    a.synchronize().expect("warm-up done");
    driver.calls();
    for _ in 0..4 {
        twice::<32>::launch_on(&a, grid, (&x, &mut out)).expect("a launch on a");
    }
    let steady = driver.calls();
    // Each launch asks which context is current (it is: nothing is set)
    // and queues the kernel.
    assert_eq!(
        names(&steady),
        ["cuCtxGetCurrent", "cuLaunchKernel"].repeat(4),
        "{steady:?}"
    );
    assert!(steady.iter().all(|c| !c.serializes), "{steady:?}");
    let mut other = device.zeros::<f32>(&[256]).expect("other");
    twice::<32>::launch_on(&b, grid, (&x, &mut other)).expect("warm-up on b");
    b.synchronize().expect("b");
    driver.calls();
    twice::<32>::launch_on(&a, grid, (&x, &mut out)).expect("on a");
    twice::<32>::launch_on(&b, grid, (&x, &mut other)).expect("on b");
    let two = driver.calls();
    assert_eq!(
        names(&two),
        ["cuCtxGetCurrent", "cuLaunchKernel"].repeat(2),
        "{two:?}"
    );
    assert_ne!(two[1].stream, two[3].stream);
    assert!(two.iter().all(|c| !c.serializes), "{two:?}");
    a.synchronize().expect("a");
    b.synchronize().expect("b");
    let doubled: Vec<f32> = xs.iter().map(|v| v * 2.0).collect();
    assert_eq!(out.to_vec().expect("out"), doubled);
    assert_eq!(other.to_vec().expect("other"), doubled);
}

type MemAlloc = unsafe extern "C" fn(*mut u64, usize) -> i32;
type MemFree = unsafe extern "C" fn(u64) -> i32;
type CopyHtoD = unsafe extern "C" fn(u64, *const c_void, usize) -> i32;
type CopyDtoH = unsafe extern "C" fn(*mut c_void, u64, usize) -> i32;
type StreamCreate = unsafe extern "C" fn(*mut *mut c_void, u32) -> i32;
type StreamDestroy = unsafe extern "C" fn(*mut c_void) -> i32;

/// A kernel on memory and a stream made with the driver directly, read
/// back with the driver.
fn foreign_memory_and_stream(device: &Device, driver: &Driver) {
    let n = 96;
    let xs: Vec<f32> = (0..n).map(|i| i as f32 - 7.5).collect();
    let (alloc, free) = (
        driver.call::<MemAlloc>(b"cuMemAlloc_v2"),
        driver.call::<MemFree>(b"cuMemFree_v2"),
    );
    let (htod, dtoh) = (
        driver.call::<CopyHtoD>(b"cuMemcpyHtoD_v2"),
        driver.call::<CopyDtoH>(b"cuMemcpyDtoH_v2"),
    );
    let (mut input, mut output) = (0u64, 0u64);
    // SAFETY: the driver's allocations of `n` f32 each, filled and freed
    // below, outliving the tensors over them (dropped before the frees).
    unsafe {
        assert_eq!(alloc(&mut input, n * 4), 0);
        assert_eq!(alloc(&mut output, n * 4), 0);
        assert_eq!(htod(input, xs.as_ptr().cast(), n * 4), 0);
    }
    let mut raw_stream: *mut c_void = std::ptr::null_mut();
    let create = driver.call::<StreamCreate>(b"cuStreamCreate");
    // SAFETY: the out-pointer is valid; flags 1 is non-blocking.
    assert_eq!(unsafe { create(&mut raw_stream, 1) }, 0);
    {
        // SAFETY: `n` f32 of this device's memory each, alive until freed
        // after this block; nothing else touches them meanwhile.
        let x = unsafe { device.tensor_from_raw::<f32>(input, n, (&[n], &[1]), None) }
            .expect("x over the caller's memory");
        // SAFETY: as above.
        let mut out = unsafe { device.tensor_from_raw::<f32>(output, n, (&[n], &[1]), None) }
            .expect("out over the caller's memory");
        assert_eq!(x.device_ptr(), Some(input));
        // SAFETY: a live stream of this device, destroyed after the
        // `Stream` drops (at the end of this block).
        let stream = unsafe { device.stream_from_raw(raw_stream) }.expect("the caller's stream");
        assert_eq!(stream.as_raw(), Some(raw_stream));
        driver.calls();
        twice::<32>::launch_on(&stream, [3], (&x, &mut out)).expect("a launch");
        let launched = driver.calls();
        assert_eq!(names(&launched).last(), Some(&"cuLaunchKernel"));
        assert_eq!(launched.last().map(|c| c.stream), Some(raw_stream as u64));
        stream.synchronize().expect("done");
        // A view that reaches past the memory it was given is refused.
        // SAFETY: refused before anything is made.
        let past = unsafe { device.tensor_from_raw::<f32>(input, n, (&[n + 1], &[1]), None) };
        assert_eq!(
            past.unwrap_err().to_string(),
            format!("invalid tensor of shape [{}] on device cuda:0: strides [1] reach elements 0 to {n}, outside the {n} given", n + 1)
        );
    }
    let mut back = vec![0f32; n];
    // SAFETY: `back` holds `n` f32; the memory is live until freed below.
    unsafe {
        assert_eq!(dtoh(back.as_mut_ptr().cast(), output, n * 4), 0);
        assert_eq!(free(input), 0);
        assert_eq!(free(output), 0);
        let destroy = driver.call::<StreamDestroy>(b"cuStreamDestroy_v2");
        assert_eq!(destroy(raw_stream), 0);
    }
    let doubled: Vec<f32> = xs.iter().map(|v| v * 2.0).collect();
    assert_eq!(back, doubled);
}

/// Events order a second stream after the first and time work on the
/// device; a stream over a handle the driver never gave fails with the
/// driver's error by name.
fn events(device: &Device) {
    let xs = vec![1.5f32; 64];
    let x = device.tensor_from_slice(&xs, &[64]).expect("x");
    let mut mid = device.zeros::<f32>(&[64]).expect("mid");
    let mut out = device.zeros::<f32>(&[64]).expect("out");
    let (a, b) = (device.stream().expect("a"), device.stream().expect("b"));
    let start = a.record().expect("start");
    twice::<32>::launch_on(&a, [2], (&x, &mut mid)).expect("first");
    let done = a.record().expect("done");
    b.wait(&done).expect("b waits for a");
    twice::<32>::launch_on(&b, [2], (&mid, &mut out)).expect("second");
    b.synchronize().expect("b");
    assert!(done.is_done().expect("a query"));
    assert!(done.elapsed_ms(&start).expect("a time") >= 0.0);
    assert_eq!(out.to_vec().expect("out"), vec![6.0f32; 64]);
    a.synchronize().expect("a");
    let cpu = Device::cpu();
    let on_cpu = cpu.stream().expect("a CPU stream");
    assert_eq!(
        b.wait(&on_cpu.record().expect("a CPU event"))
            .unwrap_err()
            .to_string(),
        "a stream waiting for an event: cuda:0 and cpu are different devices"
    );
    // SAFETY: the stand-in checks handles and refuses this one, so nothing
    // runs on it; nothing is queued that could outlive it.
    let bogus = unsafe { device.stream_from_raw(0xdead0 as *mut c_void) }.expect("a stream");
    let error = twice::<32>::launch_on(&bogus, [2], (&x, &mut out)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "CUDA driver call failed while launching the kernel: CUDA_ERROR_INVALID_HANDLE (400)"
    );
}

/// Two launches captured into a graph run on each replay, and a replay's
/// failed check is reported by the stream it ran on.
fn graphs(device: &Device, driver: &Driver) {
    let xs: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let x = device.tensor_from_slice(&xs, &[64]).expect("x");
    let mut mid = device.empty::<f32>(&[64]).expect("mid");
    let mut out = device.empty::<f32>(&[64]).expect("out");
    let stream = device.stream().expect("a stream");
    let graph = stream
        .capture(|s| {
            twice::<32>::launch_on(s, [2], (&x, &mut mid))?;
            twice::<32>::launch_on(s, [2], (&mid, &mut out))
        })
        .expect("a graph");
    driver.calls();
    graph.launch(&stream).expect("a replay");
    let replay = driver.calls();
    assert_eq!(
        names(&replay),
        ["cuCtxGetCurrent", "cuGraphLaunch"],
        "{replay:?}"
    );
    stream.synchronize().expect("the replay");
    let quadrupled: Vec<f32> = xs.iter().map(|v| v * 4.0).collect();
    assert_eq!(out.to_vec().expect("out"), quadrupled);
    out.copy_from_slice(&[0.0; 64]).expect("cleared");
    graph.launch(&stream).expect("again");
    stream.synchronize().expect("the second replay");
    assert_eq!(out.to_vec().expect("out"), quadrupled);
    let cpu = Device::cpu();
    let on_cpu = cpu.stream().expect("a CPU stream");
    assert_eq!(
        on_cpu.capture(|_| Ok(())).unwrap_err().to_string(),
        "capturing a graph is not supported on device cpu"
    );
}

/// Uploads and downloads queued on a stream, in order with its launches:
/// once its staging memory exists, each is one async copy call.
fn copies(device: &Device, driver: &Driver) {
    let n = 64;
    let mut x = device.empty::<f32>(&[n]).expect("x");
    let mut out = device.empty::<f32>(&[n]).expect("out");
    let stream = device.stream().expect("a stream");
    let first: Vec<f32> = (0..n).map(|i| i as f32).collect();
    // The first round makes the stream's status records and staging
    // buffers.
    stream.upload(&mut x, &first).expect("warm-up upload");
    twice::<32>::launch_on(&stream, [2], (&x, &mut out)).expect("warm-up launch");
    let warm = stream.download(&out).expect("warm-up download");
    assert_eq!(
        warm.wait().expect("warm"),
        first.iter().map(|v| v * 2.0).collect::<Vec<_>>()
    );
    driver.calls();
    for round in 0..3 {
        let values: Vec<f32> = (0..n).map(|i| (i + round) as f32).collect();
        stream.upload(&mut x, &values).expect("an upload");
        twice::<32>::launch_on(&stream, [2], (&x, &mut out)).expect("a launch");
        let back = stream.download(&out).expect("a download");
        let queued = driver.calls();
        assert_eq!(
            names(&queued),
            [
                "cuCtxGetCurrent",
                "cuMemcpyHtoDAsync_v2",
                "cuCtxGetCurrent",
                "cuLaunchKernel",
                "cuCtxGetCurrent",
                "cuMemcpyDtoHAsync_v2"
            ],
            "{queued:?}"
        );
        assert!(queued.iter().all(|c| !c.serializes), "{queued:?}");
        let doubled: Vec<f32> = values.iter().map(|v| v * 2.0).collect();
        assert_eq!(back.wait().expect("the values"), doubled);
        driver.calls();
    }
    let strided = device
        .tensor_with_strides(&[0f32; 4], &[2, 2], &[1, 2], 0)
        .expect("a column-major tensor");
    assert_eq!(
        stream.download(&strided).map(|_| ()).unwrap_err().to_string(),
        "invalid tensor of shape [2, 2] on device cuda:0: an asynchronous copy needs a row-major tensor, not strides [1, 2]"
    );
}

/// `full` and `fill` are one device fill (by word, by byte) where one
/// writes the value, else a copy from the host; a slice is a launch's
/// argument without a copy.
fn fills_and_slices(device: &Device, driver: &Driver) {
    driver.calls();
    let mut t = device.full(&[64], 1.5f32).expect("a full tensor");
    let filled = driver.calls();
    assert!(names(&filled).contains(&"cuMemsetD32Async"), "{filled:?}");
    assert!(
        filled.iter().all(|c| !c.name.starts_with("cuMemcpy")),
        "{filled:?}"
    );
    assert_eq!(t.to_vec().expect("t"), vec![1.5f32; 64]);
    t.fill(0.0).expect("zeros");
    assert!(names(&driver.calls()).contains(&"cuMemsetD8Async"));
    assert_eq!(t.to_vec().expect("t"), vec![0.0f32; 64]);
    let mut h = device
        .full(&[3], tile::f16::from_f32(1.0))
        .expect("6 bytes of f16");
    assert!(names(&driver.calls()).contains(&"cuMemcpyHtoDAsync_v2"));
    assert_eq!(h.to_vec().expect("h"), vec![tile::f16::from_f32(1.0); 3]);
    h.fill(tile::f16::from_f32(-2.0)).expect("again");
    assert_eq!(h.to_vec().expect("h"), vec![tile::f16::from_f32(-2.0); 3]);
    let xs: Vec<f32> = (0..128).map(|i| i as f32).collect();
    let x = device.tensor_from_slice(&xs, &[128]).expect("x");
    let second_half = x.slice(0, 64..128).expect("a slice");
    assert_eq!(second_half.device_ptr(), x.device_ptr().map(|p| p + 64 * 4));
    let mut out = device.empty::<f32>(&[64]).expect("out");
    twice::<32>::launch(device, [2], (&second_half, &mut out)).expect("a launch on a slice");
    let doubled: Vec<f32> = xs[64..].iter().map(|v| v * 2.0).collect();
    assert_eq!(out.to_vec().expect("out"), doubled);
}

//! The host's cost of a launch through `tile`'s runtime against a raw
//! `cuLaunchKernel` of the same kernel (vector add over one block), on
//! CUDA device 0, whatever its driver: the stand-in
//! (`benches/launch_overhead.rs` sets it up with launches checked but not
//! run, `TILE_STANDIN_LAUNCH=check`) or a GPU's (the GPU bundle's
//! `bin/launch_overhead`). Both paths queue batches of launches on a
//! non-blocking stream and synchronize after each batch; only the launch
//! calls are timed. The raw path builds its parameter array once and
//! reuses it, as the cheapest user of the driver would; `tile`'s checks
//! every argument on every launch. The driver calls per launch come from
//! the stand-in's call log (a real driver keeps none).

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::fmt::Write;
use std::time::{Duration, Instant};
use tile::{Device, Tensor};

/// Launches per batch, and batches timed.
const BATCH: usize = 1000;
const BATCHES: usize = 30;

/// The driver library the runtime opened: its entry points, and the
/// stand-in's call log when it is the stand-in.
struct Driver(libloading::Library);

type Launch = unsafe extern "C" fn(
    *mut c_void,
    u32,
    u32,
    u32,
    u32,
    u32,
    u32,
    u32,
    *mut c_void,
    *mut *mut c_void,
    *mut *mut c_void,
) -> i32;
type ModuleLoad =
    unsafe extern "C" fn(*mut *mut c_void, *const c_void, u32, *mut i32, *mut *mut c_void) -> i32;
type GetFunction = unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const i8) -> i32;
type StreamCreate = unsafe extern "C" fn(*mut *mut c_void, u32) -> i32;
type StreamSync = unsafe extern "C" fn(*mut c_void) -> i32;
type MemAlloc = unsafe extern "C" fn(*mut u64, usize) -> i32;
type ReadLog = unsafe extern "C" fn(*mut u8, usize) -> usize;
type ClearLog = unsafe extern "C" fn();

impl Driver {
    fn call<T: Copy>(&self, name: &str) -> Result<T, String> {
        // SAFETY: each `T` asked for is the entry point's `cuda.h`
        // signature (or the stand-in's, for its log).
        unsafe { self.0.get::<T>(name.as_bytes()) }
            .map(|f| *f)
            .map_err(|e| format!("{name}: {e}"))
    }

    /// The calls logged since the last call, by name, and clears the log;
    /// `None` for a driver without a log.
    fn calls(&self) -> Option<BTreeMap<String, usize>> {
        let read = self.call::<ReadLog>("tile_standin_calls").ok()?;
        let clear = self.call::<ClearLog>("tile_standin_calls_clear").ok()?;
        // SAFETY: a null buffer asks for the length; then a buffer of it.
        let text = unsafe {
            let mut buffer = vec![0u8; read(std::ptr::null_mut(), 0)];
            read(buffer.as_mut_ptr(), buffer.len());
            clear();
            String::from_utf8_lossy(&buffer).into_owned()
        };
        let mut counts = BTreeMap::new();
        for line in text.lines() {
            let name = line.split(' ').next().unwrap_or_default();
            *counts.entry(name.to_string()).or_default() += 1;
        }
        Some(counts)
    }
}

/// One path's figures: time per launch, driver calls per launch.
struct Figures {
    per_launch: Duration,
    calls: Option<BTreeMap<String, f64>>,
}

/// Times `BATCHES` batches of `launch` (after one untimed batch), with
/// `sync` after each.
fn time(
    driver: &Driver,
    mut launch: impl FnMut() -> Result<(), String>,
    mut sync: impl FnMut() -> Result<(), String>,
) -> Result<Figures, String> {
    for _ in 0..BATCH {
        launch()?;
    }
    sync()?;
    driver.calls();
    let mut total = Duration::ZERO;
    let mut calls: Option<BTreeMap<String, usize>> = None;
    for _ in 0..BATCHES {
        let start = Instant::now();
        for _ in 0..BATCH {
            launch()?;
        }
        total += start.elapsed();
        if let Some(batch) = driver.calls() {
            let all = calls.get_or_insert_with(BTreeMap::new);
            for (name, n) in batch {
                *all.entry(name).or_default() += n;
            }
        }
        sync()?;
        driver.calls();
    }
    let launches = (BATCH * BATCHES) as f64;
    Ok(Figures {
        per_launch: total / (BATCH * BATCHES) as u32,
        calls: calls.map(|c| {
            c.into_iter()
                .map(|(k, n)| (k, n as f64 / launches))
                .collect()
        }),
    })
}

/// The table of both paths on CUDA device 0, or why it could not be made.
pub fn measure() -> Result<String, String> {
    let device = Device::cuda(0).map_err(|e| e.to_string())?;
    let library = tile::runtime::driver::GpuApi::Cuda.libraries()[0].clone();
    // SAFETY: the driver library the runtime loaded under this name (so
    // the same instance).
    let driver = Driver(unsafe { libloading::Library::new(&library) }.map_err(|e| e.to_string())?);
    let n = 1024;
    let x = device
        .tensor_from_slice(&vec![1.0f32; n], &[n])
        .map_err(|e| e.to_string())?;
    let y = device
        .tensor_from_slice(&vec![2.0f32; n], &[n])
        .map_err(|e| e.to_string())?;
    let mut out = device.zeros::<f32>(&[n]).map_err(|e| e.to_string())?;
    let stream = device.stream().map_err(|e| e.to_string())?;
    let ours = time(
        &driver,
        || {
            crate::vector_add::vector_add::<1024>::launch_on(&stream, [1], (&x, &y, &mut out))
                .map_err(|e| e.to_string())
        },
        || stream.synchronize().map_err(|e| e.to_string()),
    )?;
    let raw = raw(&driver, &device, (&x, &y, &out))?;
    let mut text = String::new();
    let info = device
        .info()
        .map_or_else(|| device.to_string(), |i| i.to_string());
    let _ = writeln!(
        text,
        "launch overhead on {info}: host time per launch of vector add over one block,\n{BATCHES} batches of {BATCH} on a non-blocking stream (only the launch calls timed)\n"
    );
    let _ = writeln!(
        text,
        "| path | host time per launch | driver calls per launch |"
    );
    let _ = writeln!(
        text,
        "|------|---------------------:|-------------------------|"
    );
    for (path, figures) in [("raw cuLaunchKernel", &raw), ("tile launch_on", &ours)] {
        let calls = figures.calls.as_ref().map_or_else(
            || "not counted (no call log)".to_string(),
            |c| {
                c.iter()
                    .map(|(k, n)| format!("{k} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        );
        let _ = writeln!(
            text,
            "| {path} | {:.2} µs | {calls} |",
            figures.per_launch.as_secs_f64() * 1e6
        );
    }
    let _ = writeln!(
        text,
        "\ntile / raw: {:.2}×",
        ours.per_launch.as_secs_f64() / raw.per_launch.as_secs_f64()
    );
    Ok(text)
}

/// The raw path: the kernel's PTX for the device loaded with the driver,
/// launched with a parameter array built once.
fn raw(
    driver: &Driver,
    device: &Device,
    (x, y, out): (&Tensor<f32>, &Tensor<f32>, &Tensor<f32>),
) -> Result<Figures, String> {
    let info = &crate::vector_add::vector_add::<1024>::INFO;
    let spec = &info.specializations[0];
    let code = device
        .kernel_code(&crate::vector_add::vector_add::<1024>::kernel_spec())
        .map_err(|e| e.to_string())?
        .to_string();
    let ptx = spec
        .images
        .iter()
        .find(|i| i.target == code)
        .ok_or_else(|| format!("no PTX for {code}"))?;
    let mut text = ptx.bytes.to_vec();
    text.push(0);
    let name = tile::ir::text::parse_function(spec.ir)
        .map_err(|e| e.to_string())?
        .name;
    let name = std::ffi::CString::new(name).map_err(|e| e.to_string())?;
    let (mut module, mut function, mut stream) = (
        std::ptr::null_mut(),
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    );
    let mut status = 0u64;
    let check = |what: &str, code: i32| match code {
        0 => Ok(()),
        code => Err(format!("{what} failed ({code})")),
    };
    // SAFETY: the documented signatures; out-pointers valid; the PTX is
    // NUL-terminated; no options. The runtime made its context current on
    // this thread.
    unsafe {
        let load = driver.call::<ModuleLoad>("cuModuleLoadDataEx")?;
        let null = std::ptr::null_mut();
        check(
            "cuModuleLoadDataEx",
            load(&mut module, text.as_ptr().cast(), 0, null, null.cast()),
        )?;
        let get = driver.call::<GetFunction>("cuModuleGetFunction")?;
        check(
            "cuModuleGetFunction",
            get(&mut function, module, name.as_ptr()),
        )?;
        check(
            "cuStreamCreate",
            driver.call::<StreamCreate>("cuStreamCreate")?(&mut stream, 1),
        )?;
        check(
            "cuMemAlloc",
            driver.call::<MemAlloc>("cuMemAlloc_v2")?(&mut status, 64),
        )?;
    }
    let mut packet = tile::__private::abi::Packet::default();
    for t in [x, y, out] {
        let base = t.device_ptr().ok_or("a device tensor")?;
        packet.push_tensor(base, t.shape(), t.strides());
    }
    packet.push_pointer(status);
    let mut params = packet.pointers();
    let launch = driver.call::<Launch>("cuLaunchKernel")?;
    let sync = driver.call::<StreamSync>("cuStreamSynchronize")?;
    let block = ptx.block_threads;
    time(
        driver,
        // SAFETY: a function of this PTX with its parameters (three tensors
        // of 1,024 elements, a status record), a live stream; one block of
        // the image's threads, as the runtime launches it.
        || {
            let null = std::ptr::null_mut();
            let code = unsafe {
                launch(
                    function,
                    1,
                    1,
                    1,
                    block,
                    1,
                    1,
                    0,
                    stream,
                    params.as_mut_ptr(),
                    null,
                )
            };
            check("cuLaunchKernel", code)
        },
        // SAFETY: a live stream.
        || check("cuStreamSynchronize", unsafe { sync(stream) }),
    )
}

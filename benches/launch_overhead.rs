//! The host's cost of a launch through `tile`'s runtime against a raw
//! `cuLaunchKernel` of the same kernel, in one run, on the CUDA driver
//! stand-in with launches checked but not run (`TILE_STANDIN_LAUNCH=check`:
//! emulating the kernel would dwarf what is measured). Both queue batches
//! of launches of a tiny kernel on a non-blocking stream and synchronize
//! after each batch; only the launch calls are timed. The raw path builds
//! its parameter array once and reuses it, as the cheapest user of the
//! driver would; `tile`'s checks every argument on every launch. The
//! driver calls each path makes per launch come from the stand-in's call
//! log.
//!
//! `cargo bench --bench launch_overhead` (the figures depend on the host;
//! docs/benchmarks.md has a run's).

#[path = "../examples/common/emulation_images.rs"]
mod emulation_images;

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};
use tile::runtime::driver::GpuApi;
use tile::{tile_kernel, Device};
use tile_codegen::{Sm, Target};

/// Set in the child process, which measures.
const CHILD_ENV: &str = "TILE_LAUNCH_OVERHEAD_CHILD";
/// Launches per batch, and batches timed.
const BATCH: usize = 1000;
const BATCHES: usize = 30;

/// `out = x`, one tile per program: the smallest kernel with a load and a
/// store.
#[tile_kernel(configs(B = 32))]
fn copy<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    partition_view(out, [B]).store(partition_view(x, [B]).load(pid), pid);
}

fn main() {
    if std::env::var_os(CHILD_ENV).is_some() {
        measure();
        return;
    }
    let exe = std::env::current_exe().expect("this bench's path");
    let standin = exe
        .parent()
        .expect("the deps directory")
        .join("libtile_standin.so");
    let dir = std::env::temp_dir().join(format!("tile-launch-overhead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    for name in GpuApi::Cuda.libraries() {
        std::fs::copy(&standin, dir.join(name)).expect("copying the stand-in");
    }
    let written =
        emulation_images::write_images(&dir, &[&copy::<32>::INFO], &[Target::Nvptx(Sm::Sm80)]);
    assert_eq!(written, 1);
    let status = Command::new(&exe)
        .env(CHILD_ENV, "1")
        .env("LD_LIBRARY_PATH", library_path(&dir))
        .env(tile_standin::IMAGES_ENV, &dir)
        .env(tile_standin::LAUNCH_ENV, "check")
        .status()
        .expect("running the measurement");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(status.success(), "the measurement failed");
}

/// `LD_LIBRARY_PATH` with `dir` first.
fn library_path(dir: &std::path::Path) -> std::ffi::OsString {
    let rest = std::env::var_os("LD_LIBRARY_PATH").unwrap_or_default();
    let dirs = std::iter::once(PathBuf::from(dir)).chain(std::env::split_paths(&rest));
    std::env::join_paths(dirs).expect("a library path")
}

/// The stand-in as the driver: its entry points and its call log.
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

impl Driver {
    fn call<T: Copy>(&self, name: &[u8]) -> T {
        // SAFETY: each `T` asked for is the entry point's `cuda.h` signature.
        *unsafe { self.0.get::<T>(name) }.expect("an entry point")
    }

    /// The calls logged since the last call, by name, and clears the log.
    fn calls(&self) -> BTreeMap<String, usize> {
        let read =
            self.call::<unsafe extern "C" fn(*mut u8, usize) -> usize>(b"tile_standin_calls");
        let clear = self.call::<unsafe extern "C" fn()>(b"tile_standin_calls_clear");
        // SAFETY: a null buffer asks for the length; then a buffer of it.
        let text = unsafe {
            let mut buffer = vec![0u8; read(std::ptr::null_mut(), 0)];
            read(buffer.as_mut_ptr(), buffer.len());
            clear();
            String::from_utf8(buffer).expect("UTF-8")
        };
        let mut counts = BTreeMap::new();
        for call in tile_standin::calls::parse(&text).expect("a well-formed log") {
            *counts.entry(call.name).or_default() += 1;
        }
        counts
    }
}

/// Times `BATCHES` batches of `launch` (after one untimed batch), with
/// `sync` after each; the launch time per launch and the calls per launch
/// of the timed batches.
fn time(
    driver: &Driver,
    mut launch: impl FnMut(),
    mut sync: impl FnMut(),
) -> (Duration, BTreeMap<String, f64>) {
    for _ in 0..BATCH {
        launch();
    }
    sync();
    driver.calls();
    let mut total = Duration::ZERO;
    let mut calls = BTreeMap::new();
    for _ in 0..BATCHES {
        let start = Instant::now();
        for _ in 0..BATCH {
            launch();
        }
        total += start.elapsed();
        for (name, n) in driver.calls() {
            *calls.entry(name).or_default() += n;
        }
        sync();
        driver.calls();
    }
    let launches = (BATCH * BATCHES) as f64;
    let per_launch = calls
        .into_iter()
        .map(|(name, n): (String, usize)| (name, n as f64 / launches))
        .collect();
    (total / (BATCH * BATCHES) as u32, per_launch)
}

fn measure() {
    let device = Device::cuda(0).expect("the CUDA stand-in");
    // SAFETY: the stand-in, already loaded by the runtime under this name.
    let driver = Driver(unsafe { libloading::Library::new("libcuda.so.1") }.expect("the stand-in"));
    let n = 32;
    let x = device.tensor_from_slice(&vec![1.0f32; n], &[n]).expect("x");
    let mut out = device.zeros::<f32>(&[n]).expect("out");
    let stream = device.stream().expect("a stream");
    let (tile_time, tile_calls) = time(
        &driver,
        || copy::<32>::launch_on(&stream, [1], (&x, &mut out)).expect("a launch"),
        || stream.synchronize().expect("the batch"),
    );
    let (raw_time, raw_calls) = raw(&driver, (&x, &out));
    println!(
        "launch overhead: host time per launch of a 1-block kernel, {BATCHES} batches of {BATCH} on a non-blocking stream,"
    );
    println!("CUDA stand-in with launches checked but not run");
    println!();
    println!("| path | host time per launch | driver calls per launch |");
    println!("|------|---------------------:|-------------------------|");
    for (path, time, calls) in [
        ("raw cuLaunchKernel", raw_time, raw_calls),
        ("tile launch_on", tile_time, tile_calls),
    ] {
        let calls: Vec<String> = calls
            .iter()
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        println!(
            "| {path} | {:.2} µs | {} |",
            time.as_secs_f64() * 1e6,
            calls.join(", ")
        );
    }
    println!();
    println!(
        "tile / raw: {:.2}× (target ≤ 1.2×)",
        tile_time.as_secs_f64() / raw_time.as_secs_f64()
    );
}

type ModuleLoad =
    unsafe extern "C" fn(*mut *mut c_void, *const c_void, u32, *mut i32, *mut *mut c_void) -> i32;
type GetFunction = unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const i8) -> i32;
type StreamCreate = unsafe extern "C" fn(*mut *mut c_void, u32) -> i32;
type StreamSync = unsafe extern "C" fn(*mut c_void) -> i32;
type MemAlloc = unsafe extern "C" fn(*mut u64, usize) -> i32;

/// The raw path: the kernel's sm_80 PTX loaded with the driver, launched
/// with a parameter array built once.
fn raw(
    driver: &Driver,
    (x, out): (&tile::Tensor<f32>, &tile::Tensor<f32>),
) -> (Duration, BTreeMap<String, f64>) {
    let spec = &copy::<32>::INFO.specializations[0];
    let ptx = spec
        .images
        .iter()
        .find(|i| i.target == "sm_80")
        .expect("sm_80 PTX");
    let mut text = ptx.bytes.to_vec();
    text.push(0);
    let name = tile::ir::text::parse_function(spec.ir)
        .expect("the IR")
        .name;
    let name = std::ffi::CString::new(name).expect("a name");
    let (mut module, mut function, mut stream) = (
        std::ptr::null_mut(),
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    );
    let mut status = 0u64;
    // SAFETY: the documented signatures; out-pointers valid; the PTX is
    // NUL-terminated; no options.
    unsafe {
        let load = driver.call::<ModuleLoad>(b"cuModuleLoadDataEx");
        assert_eq!(
            load(
                &mut module,
                text.as_ptr().cast(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut()
            ),
            0
        );
        let get = driver.call::<GetFunction>(b"cuModuleGetFunction");
        assert_eq!(get(&mut function, module, name.as_ptr()), 0);
        assert_eq!(
            driver.call::<StreamCreate>(b"cuStreamCreate")(&mut stream, 1),
            0
        );
        assert_eq!(
            driver.call::<MemAlloc>(b"cuMemAlloc_v2")(&mut status, 64),
            0
        );
    }
    let mut packet = tile::__private::abi::Packet::default();
    for t in [x, out] {
        let base = t.device_ptr().expect("a device tensor");
        packet.push_tensor(base, t.shape(), t.strides());
    }
    packet.push_pointer(status);
    let mut params = packet.pointers();
    let launch = driver.call::<Launch>(b"cuLaunchKernel");
    let sync = driver.call::<StreamSync>(b"cuStreamSynchronize");
    time(
        driver,
        // SAFETY: a function of this PTX with its parameters (two tensors
        // of 32 elements, a status record), a live stream; one block of
        // 32 · num_warps threads as the runtime launches it.
        || unsafe {
            let block = 32 * copy::<32>::INFO.num_warps;
            let r = launch(
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
                std::ptr::null_mut(),
            );
            assert_eq!(r, 0);
        },
        // SAFETY: a live stream.
        || assert_eq!(unsafe { sync(stream) }, 0),
    )
}

//! Opening a HIP device through the HIP stand-in (`tile-standin`, put on
//! `LD_LIBRARY_PATH` as `libamdhip64.so`) as ROCm 6's runtime, whose
//! `hipGetDevicePropertiesR0600` fills `hipDeviceProp_tR0600`, and as ROCm
//! 5's, which lacks that symbol and whose `hipGetDeviceProperties` fills
//! ROCm 5's `hipDeviceProp_t`: the device's architecture, read from
//! `gcnArchName`, is the stand-in's in both.
//!
//! Driver libraries are opened once per process, so each runs in a child
//! process (this test binary again, running the ignored test
//! [`open_the_hip_stand_in`]) with the environment set.

use std::path::{Path, PathBuf};
use std::process::Command;
use tile_ir::samples;
use tile_runtime::driver::GpuApi;
use tile_runtime::{Device, Error, KernelSpec};

/// The name of the child test.
const CHILD: &str = "open_the_hip_stand_in";

/// A directory removed on drop.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A scratch directory holding `library` under every name the runtime
/// opens the HIP runtime by.
fn hip_dir(mode: &str, library: &[u8]) -> Scratch {
    let dir = Scratch(
        std::env::temp_dir().join(format!("tile-hip-standin-{mode}-{}", std::process::id())),
    );
    std::fs::create_dir_all(&dir.0).expect("a scratch directory");
    for name in GpuApi::Hip.libraries() {
        std::fs::write(dir.0.join(name), library).expect("writing the stand-in");
    }
    dir
}

/// Runs the child test with the libraries of `dir` first on
/// `LD_LIBRARY_PATH` and a `gfx` stand-in device; it must pass.
fn run_child(exe: &Path, dir: &Path, gfx: &str) {
    let rest = std::env::var_os("LD_LIBRARY_PATH").unwrap_or_default();
    let path = std::env::join_paths(
        std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&rest)),
    )
    .expect("a library path");
    let out = Command::new(exe)
        .args([CHILD, "--exact", "--ignored", "--test-threads=1"])
        .env("LD_LIBRARY_PATH", path)
        .env("TILE_STANDIN_GFX", gfx)
        .output()
        .expect("running the child");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{CHILD} ({gfx}) failed:\n{text}");
    assert!(text.contains("1 passed"), "{CHILD} did not run:\n{text}");
}

#[test]
fn the_architecture_is_read_as_rocm_6_and_as_rocm_5_lay_it_out() {
    let exe = std::env::current_exe().expect("this test's path");
    let standin = exe
        .parent()
        .expect("the deps directory")
        .join("libtile_standin.so");
    let rocm6 = std::fs::read(&standin).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (it is built with this test: tile-standin is a dev-dependency)",
            standin.display()
        )
    });
    let rocm5 = tile_standin::hip::as_rocm5(&rocm6).expect("the stand-in exports the R0600 symbol");
    for (mode, library, gfx, r0600) in [
        ("rocm6", &rocm6, "gfx90a", true),
        ("rocm5", &rocm5, "gfx1100", false),
    ] {
        let dir = hip_dir(mode, library);
        let path = dir.0.join(&GpuApi::Hip.libraries()[0]);
        assert_eq!(exports_r0600(&path), r0600, "{mode}");
        run_child(&exe, &dir.0, gfx);
    }
}

/// Whether the library at `path` exports `hipGetDevicePropertiesR0600`.
fn exports_r0600(path: &Path) -> bool {
    // SAFETY: the stand-in, whose loading runs no initialization code of its
    // own; the symbol is only looked up, never called.
    let library = unsafe { libloading::Library::new(path) }.expect("loading the stand-in");
    // SAFETY: as above.
    unsafe { library.get::<unsafe extern "C" fn()>(b"hipGetDevicePropertiesR0600") }.is_ok()
}

#[test]
#[ignore = "run by the_architecture_is_read_as_rocm_6_and_as_rocm_5_lay_it_out, with the stand-in as the HIP runtime"]
fn open_the_hip_stand_in() {
    let gfx = std::env::var("TILE_STANDIN_GFX").expect("the stand-in's processor");
    let device = Device::hip(0).expect("the HIP stand-in");
    let ir = samples::vector_add(1024).unwrap().to_string();
    // SAFETY: no images: nothing is ever launched.
    let kernel = unsafe {
        KernelSpec::new(
            "vector_add",
            "BLOCK=1024",
            Box::leak(ir.into_boxed_str()),
            4,
            &[],
            &[],
            &[],
        )
    };
    // The image wanted is named by the `gfx` part of `gcnArchName`.
    match device.kernel_code(&kernel) {
        Err(Error::NoImage { wanted, .. }) => assert_eq!(wanted, format!("architecture {gfx}")),
        other => panic!("expected no image for {gfx}, found {other:?}"),
    }
}

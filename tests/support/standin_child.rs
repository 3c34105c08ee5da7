//! What the tests that run through the driver stand-ins share: a scratch
//! directory holding the stand-in under the library names the runtime
//! opens, and the child process (this test binary again, running one of
//! its ignored tests) that opens the drivers from it, since a driver
//! library is opened once per process.

use std::path::{Path, PathBuf};
use std::process::Command;
use tile::runtime::driver::GpuApi;

/// A directory removed when dropped.
pub struct Scratch(pub PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A new scratch directory `tile-<name>-<pid>` holding, per API of `apis`,
/// one copy of the stand-in (built beside this test binary: `tile-standin`
/// is a dev-dependency) under the API's first library name and links to
/// it under the others, as a driver installation has them: every library
/// that opens the driver by any of its names gets the one instance.
pub fn standin_dir(name: &str, apis: &[GpuApi]) -> Scratch {
    let exe = std::env::current_exe().expect("this test's path");
    let standin = exe
        .parent()
        .expect("the deps directory")
        .join("libtile_standin.so");
    assert!(
        standin.exists(),
        "{} is missing: it is built with this test (tile-standin is a dev-dependency)",
        standin.display()
    );
    let dir = Scratch(std::env::temp_dir().join(format!("tile-{name}-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).expect("a scratch directory");
    for api in apis {
        let names = api.libraries();
        std::fs::copy(&standin, dir.0.join(&names[0])).expect("copying the stand-in");
        for other in &names[1..] {
            std::os::unix::fs::symlink(&names[0], dir.0.join(other)).expect("linking a name");
        }
    }
    dir
}

/// `LD_LIBRARY_PATH` with `dir` first, so the stand-ins are found before
/// any other library of their names, and the rest still found.
fn library_path(dir: &Path) -> std::ffi::OsString {
    let rest = std::env::var_os("LD_LIBRARY_PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&rest)))
        .expect("a library path")
}

/// Runs the ignored test `child` of this binary with the stand-ins of
/// `dir` as the drivers, the emulation images in `dir`, and `env` set; it
/// must pass. Its output goes to standard error.
pub fn run_child(dir: &Path, child: &str, env: &[(&str, &str)]) {
    let exe = std::env::current_exe().expect("this test's path");
    let out = Command::new(exe)
        .args([
            child,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("LD_LIBRARY_PATH", library_path(dir))
        .env(tile_standin::IMAGES_ENV, dir)
        .envs(env.iter().copied())
        .output()
        .expect("running the child");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{child} failed:\n{text}");
    assert!(text.contains("1 passed"), "{child} did not run:\n{text}");
    eprintln!("{text}");
}

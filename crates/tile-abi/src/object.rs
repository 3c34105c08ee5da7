//! Opening a shared object compiled by `tile-codegen` (host code, or an
//! emulation image) from its bytes: written to a directory only this user
//! can read, opened with the dynamic loader, and removed again (the mapping
//! stays). Shared by the CPU device and the emulator.

use libloading::Library;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// Opens `bytes`, a shared object named `name` in messages.
///
/// The C math library is first made global, so that the few math functions
/// an instruction-set level lacks an instruction for (`fmaf` on baseline
/// x86-64, for one) resolve.
///
/// # Safety
///
/// `bytes` must be an object `tile-codegen` compiled: opening a shared
/// object runs its initializers (those have none) and resolves its imports
/// (only C library functions).
pub unsafe fn open(bytes: &[u8], name: &str) -> Result<Library, String> {
    make_libm_global();
    let dir = PrivateDir::new().map_err(|e| e.to_string())?;
    let path = dir.0.join(format!("{name}.so"));
    fs::write(&path, bytes).map_err(|e| format!("writing {}: {e}", path.display()))?;
    // SAFETY: the caller vouches for the object (see above).
    unsafe { Library::new(&path) }.map_err(|e| e.to_string())
}

/// The symbol name as the loader looks it up (NUL-terminated).
pub fn symbol(name: &str) -> String {
    format!("{name}\0")
}

/// Opens the C math library with its symbols global, once per process, so
/// that the loader resolves the few functions LLVM calls where an ISA level
/// has no instruction. Best effort: without it, an object that needs one
/// fails to open with the loader's message.
fn make_libm_global() {
    static LIBM: OnceLock<Option<libloading::os::unix::Library>> = OnceLock::new();
    LIBM.get_or_init(|| {
        use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
        // SAFETY: the system's C math library; its initializers are the C
        // runtime's own, which every process already runs.
        unsafe { Library::open(Some("libm.so.6"), RTLD_NOW | RTLD_GLOBAL) }.ok()
    });
}

/// A directory only this user can read, removed with its files when dropped.
struct PrivateDir(PathBuf);

impl PrivateDir {
    fn new() -> std::io::Result<PrivateDir> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path = std::env::temp_dir().join(format!(
            "tile-object-{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        create_private(&path)?;
        Ok(PrivateDir(path))
    }
}

#[cfg(unix)]
fn create_private(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new().mode(0o700).create(path)
}

#[cfg(not(unix))]
fn create_private(path: &Path) -> std::io::Result<()> {
    fs::create_dir(path)
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        // Best effort: a leftover directory is harmless.
        let _ = fs::remove_dir_all(&self.0);
    }
}

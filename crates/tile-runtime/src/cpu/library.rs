//! Loading a kernel's shared object and running it.

use super::cache::default_stream_threshold;
use super::fault::{failure, RunError};
use super::grid::run_grid;
use super::math::MATH_TABLE;
use super::packet::pack;
use crate::launch::LaunchArg;
use libloading::Library;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use tile_abi::host::{self as abi, HostEntry, MathTable};
use tile_abi::{HostCheck, HostIsa};
use tile_ir::Function;

/// Why a kernel's shared object could not be loaded.
#[derive(Debug, thiserror::Error)]
#[error("cannot load the {isa} host code of kernel `{kernel}`: {reason}")]
pub struct LoadError {
    /// The kernel's name.
    pub kernel: String,
    /// The image's instruction-set level.
    pub isa: HostIsa,
    /// What failed: the file system, the dynamic loader's message, or a
    /// missing symbol.
    pub reason: String,
}

/// A kernel's host code, loaded into this process and ready to run.
#[derive(Debug)]
pub struct HostLibrary {
    func: Function,
    checks: Vec<HostCheck>,
    isa: HostIsa,
    entry: HostEntry,
    frame_bytes: usize,
    stream_threshold: u64,
    // Keeps the code `entry` points to mapped; declared last, so dropped
    // after everything that refers to it.
    _library: Library,
}

impl HostLibrary {
    /// Loads `bytes`, a shared object compiled for `isa`, as the code of
    /// `func` whose run-time checks are `checks`, and fills its math table.
    ///
    /// The object is written to a private temporary directory, opened with
    /// the dynamic loader (which resolves its few C library symbols: `memcpy`
    /// and `memset`, and on some levels math functions such as `fmaf`) and
    /// removed again; the mapping stays.
    ///
    /// # Safety
    /// `bytes` must be what `tile_codegen::host::compile` produced for
    /// `func` and `isa` (as `#[tile_kernel]` embeds it), with `checks` its
    /// list of checks: the loaded code is trusted to follow the contract of
    /// [`abi`] for `func`'s parameters. Any other shared object runs
    /// arbitrary code.
    pub unsafe fn load(
        bytes: &[u8],
        isa: HostIsa,
        func: Function,
        checks: Vec<HostCheck>,
    ) -> Result<HostLibrary, LoadError> {
        let error = |reason: String| LoadError {
            kernel: func.name.clone(),
            isa,
            reason,
        };
        if !isa.runs_here() {
            return Err(error(format!(
                "this CPU ({}) does not run {isa} code",
                std::env::consts::ARCH
            )));
        }
        make_libm_global();
        let dir = PrivateDir::new().map_err(|e| error(e.to_string()))?;
        let path = dir.0.join(format!("{}.so", func.name));
        fs::write(&path, bytes).map_err(|e| error(format!("writing {}: {e}", path.display())))?;
        // SAFETY: the caller guarantees the object is host code compiled by
        // tile; such objects have no initializers, so opening it runs no
        // code, and it needs only C library functions.
        let library = unsafe { Library::new(&path) }.map_err(|e| error(e.to_string()))?;
        drop(dir);
        // SAFETY: compiled host code defines the entry with exactly the
        // type of `HostEntry`.
        let entry: HostEntry =
            *unsafe { library.get::<HostEntry>(symbol(abi::ENTRY_SYMBOL).as_bytes()) }
                .map_err(|e| error(e.to_string()))?;
        // SAFETY: compiled host code defines the frame size as a `u64`
        // constant; reading it through its address is a plain load.
        let frame_bytes = unsafe {
            let at = library
                .get::<*const u64>(symbol(abi::FRAME_BYTES_SYMBOL).as_bytes())
                .map_err(|e| error(e.to_string()))?;
            at.read()
        };
        // SAFETY: compiled host code defines the table as a writable array
        // of `MATH_TABLE_SLOTS` function pointers (the layout of
        // `MathTable`) that nothing reads until the entry runs, which is
        // after this store.
        unsafe {
            let table = library
                .get::<*mut MathTable>(symbol(abi::MATH_TABLE_SYMBOL).as_bytes())
                .map_err(|e| error(e.to_string()))?;
            table.write(MATH_TABLE);
        }
        let frame_bytes = usize::try_from(frame_bytes)
            .map_err(|_| error(format!("a frame of {frame_bytes} bytes")))?;
        Ok(HostLibrary {
            func,
            checks,
            isa,
            entry,
            frame_bytes,
            stream_threshold: default_stream_threshold(),
            _library: library,
        })
    }

    /// The instruction-set level of the loaded code.
    pub fn isa(&self) -> HostIsa {
        self.isa
    }

    /// The bytes of scratch memory each worker gives a program instance.
    pub fn frame_bytes(&self) -> usize {
        self.frame_bytes
    }

    /// The streaming threshold passed to the code: an output tensor of at
    /// least this many bytes that the kernel never reads is stored with
    /// non-temporal stores, whole cache lines straight to memory (by
    /// default three quarters of the last-level cache).
    pub fn stream_threshold(&self) -> u64 {
        self.stream_threshold
    }

    /// Sets the streaming threshold: 0 streams every output the kernel never
    /// reads, `u64::MAX` none. Results do not depend on it, only speed.
    pub fn set_stream_threshold(&mut self, bytes: u64) {
        self.stream_threshold = bytes;
    }

    /// Runs every program instance of `grid` over `args`, spread over the
    /// available cores.
    ///
    /// The arguments are checked first ([`RunError::Argument`],
    /// [`RunError::Aliasing`]) and nothing runs unless all fit. On failure,
    /// the error is the one of the first failing instance in the
    /// interpreter's order (x fastest, then y, then z), whose failing access
    /// touched no memory; instances after it may or may not have run. As on
    /// a GPU, two instances that store one element race.
    pub fn run(&self, grid: [u32; 3], args: &mut [LaunchArg<'_>]) -> Result<(), RunError> {
        if grid.iter().any(|&g| i32::try_from(g).is_err()) {
            return Err(RunError::Grid { grid });
        }
        let packet = pack(&self.func, args, self.stream_threshold)?;
        if grid.contains(&0) {
            return Ok(());
        }
        // SAFETY: the code was compiled from `self.func` (the contract of
        // `load`), and `pack` checked every argument against its parameter,
        // so each pointer of the packet is the base of a live tensor with
        // the extents and strides beside it; compiled code checks every
        // access against those extents before making it, needs a frame of
        // `frame_bytes`, and keeps no state between calls. `args` stays
        // borrowed, mutably for the tensors it writes, for the whole run.
        let failed = unsafe { run_grid(self.entry, self.frame_bytes, grid, &packet) };
        match failed {
            None => Ok(()),
            Some((program, status)) => Err(failure(program, status, &self.checks)),
        }
    }
}

/// Opens the C math library with its symbols global, once per process, so
/// that the loader resolves the few functions LLVM calls where an ISA level
/// has no instruction (`fmaf` on baseline x86-64, say) when it opens a
/// kernel. Best effort: without it, a kernel that needs one fails to load
/// with the loader's message.
fn make_libm_global() {
    static LIBM: OnceLock<Option<libloading::os::unix::Library>> = OnceLock::new();
    LIBM.get_or_init(|| {
        use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
        // SAFETY: the system's C math library; its initializers are the C
        // runtime's own, which every process already runs.
        unsafe { Library::open(Some("libm.so.6"), RTLD_NOW | RTLD_GLOBAL) }.ok()
    });
}

/// The symbol name as the loader looks it up (NUL-terminated).
fn symbol(name: &str) -> String {
    format!("{name}\0")
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
            "tile-host-{}-{}-{nanos}",
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

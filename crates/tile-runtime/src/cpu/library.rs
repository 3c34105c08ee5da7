//! Loading a kernel's shared object and running it.

use super::cache::default_stream_threshold;
use super::fault::{failure, RunError};
use super::grid::run_grid;
use super::math::MATH_TABLE;
use super::packet::pack;
use crate::device_print::deliver;
use crate::launch::LaunchArg;
use libloading::Library;
use tile_abi::device_print::{empty_area, DEFAULT_CAPACITY};
use tile_abi::host::{self as abi, HostEntry, MathTable};
use tile_abi::{object, HostCheck, HostIsa};
use tile_ir::device_print::{prints, Printed};
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
        // SAFETY: the caller guarantees the object is host code compiled by
        // tile for `func`: no initializers, only C library imports.
        let library = unsafe { object::open(bytes, &func.name) }.map_err(error)?;
        // SAFETY: compiled host code defines the entry with exactly the
        // type of `HostEntry`.
        let entry: HostEntry =
            *unsafe { library.get::<HostEntry>(object::symbol(abi::ENTRY_SYMBOL).as_bytes()) }
                .map_err(|e| error(e.to_string()))?;
        // SAFETY: compiled host code defines the frame size as a `u64`
        // constant; reading it through its address is a plain load.
        let frame_bytes = unsafe {
            let at = library
                .get::<*const u64>(object::symbol(abi::FRAME_BYTES_SYMBOL).as_bytes())
                .map_err(|e| error(e.to_string()))?;
            at.read()
        };
        // SAFETY: compiled host code defines the table as a writable array
        // of `MATH_TABLE_SLOTS` function pointers (the layout of
        // `MathTable`) that nothing reads until the entry runs, which is
        // after this store.
        unsafe {
            let table = library
                .get::<*mut MathTable>(object::symbol(abi::MATH_TABLE_SYMBOL).as_bytes())
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
    /// The lines of the kernel's `device_print!`s go to standard output.
    pub fn run(&self, grid: [u32; 3], args: &mut [LaunchArg<'_>]) -> Result<(), RunError> {
        self.run_printing(grid, args, &mut |line| println!("{line}"))
    }

    /// [`run`](Self::run), handing the lines of the kernel's
    /// `device_print!`s to `print` (each program's in order, the programs in
    /// the interpreter's order), also when the run fails.
    pub fn run_printing(
        &self,
        grid: [u32; 3],
        args: &mut [LaunchArg<'_>],
        print: &mut dyn FnMut(&Printed),
    ) -> Result<(), RunError> {
        if grid.iter().any(|&g| i32::try_from(g).is_err()) {
            return Err(RunError::Grid { grid });
        }
        // The area in 8-byte words, so that its cursor is aligned for the
        // atomic add that claims records.
        let mut area: Option<Vec<u64>> = prints(&self.func).then(|| {
            empty_area(DEFAULT_CAPACITY)
                .chunks(8)
                .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
                .collect()
        });
        let address = area.as_mut().map_or(0, |a| a.as_mut_ptr() as u64);
        let packet = pack(&self.func, args, self.stream_threshold, address)?;
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
        // The print area, when there is one, is `area`'s memory, alive and
        // unaliased for the whole run; its header holds its capacity, which
        // compiled code checks each record against.
        let failed = unsafe { run_grid(self.entry, self.frame_bytes, grid, &packet.words) };
        if let Some(words) = area {
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            deliver(&self.func, &bytes, print);
        }
        match failed {
            None => Ok(()),
            Some((program, status)) => Err(failure(program, status, &self.func, &self.checks)),
        }
    }
}

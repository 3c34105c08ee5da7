//! An emulation image loaded into this process.

use crate::block::{run_block, Launch};
use crate::calls::runtime;
use crate::error::EmuError;
use crate::shadow::Allocation;
use libloading::Library;
use std::sync::Mutex;
use tile_abi::emulation::{
    LaunchFn, Manifest, RuntimeFn, LAUNCH_SYMBOL, MANIFEST_LEN_SYMBOL, MANIFEST_SYMBOL,
    RUNTIME_SYMBOL,
};
use tile_abi::object;

/// A GPU kernel compiled for this CPU (`tile_codegen::emulation`), loaded
/// and ready to run.
#[derive(Debug)]
pub struct EmulatedKernel {
    manifest: Manifest,
    entry: LaunchFn,
    /// The shared allocations in the loaded image.
    shared: Vec<Allocation>,
    /// Launches of one image run one at a time: its shared memory is the
    /// image's globals.
    running: Mutex<()>,
    // Keeps the code `entry` points to mapped; declared last, so dropped
    // after everything that refers to it.
    _library: Library,
}

impl EmulatedKernel {
    /// Loads an image from its bytes and connects it to this runtime.
    ///
    /// # Safety
    ///
    /// `bytes` must be an image `tile_codegen::emulation::compile` made:
    /// loading a shared object runs its code's contract, not ours.
    pub unsafe fn load(bytes: &[u8]) -> Result<EmulatedKernel, EmuError> {
        let error = |reason: String| EmuError::Load {
            kernel: String::new(),
            reason,
        };
        // SAFETY: the caller vouches for the image.
        let library = unsafe { object::open(bytes, "emulated") }.map_err(error)?;
        // SAFETY: an image defines the manifest as `u8` bytes and its length
        // as a `u64` constant; both are read once, here.
        let manifest = unsafe {
            let len = library
                .get::<*const u64>(object::symbol(MANIFEST_LEN_SYMBOL).as_bytes())
                .map_err(|e| error(e.to_string()))?
                .read();
            let start = library
                .get::<*const u8>(object::symbol(MANIFEST_SYMBOL).as_bytes())
                .map_err(|e| error(e.to_string()))?;
            std::slice::from_raw_parts(*start, len as usize).to_vec()
        };
        let manifest = Manifest::parse(&String::from_utf8_lossy(&manifest)).map_err(error)?;
        let error = |reason: String| EmuError::Load {
            kernel: manifest.kernel.clone(),
            reason,
        };
        // SAFETY: an image defines the entry with the type of `LaunchFn`.
        let entry: LaunchFn =
            *unsafe { library.get::<LaunchFn>(object::symbol(LAUNCH_SYMBOL).as_bytes()) }
                .map_err(|e| error(e.to_string()))?;
        // SAFETY: an image defines the runtime's pointer as a writable
        // pointer-sized global that its code reads only when it runs, which
        // is after this store.
        unsafe {
            let slot = library
                .get::<*mut RuntimeFn>(object::symbol(RUNTIME_SYMBOL).as_bytes())
                .map_err(|e| error(e.to_string()))?;
            slot.write(runtime);
        }
        let mut shared = Vec::new();
        for slot in &manifest.shared {
            // SAFETY: the manifest names the image's exported shared
            // allocations; only their addresses are taken.
            let address = unsafe {
                library
                    .get::<*mut u8>(object::symbol(&slot.symbol).as_bytes())
                    .map_err(|e| error(e.to_string()))?
                    .try_as_raw_ptr()
                    .ok_or_else(|| error(format!("no address for `{}`", slot.symbol)))?
            };
            shared.push(Allocation {
                symbol: slot.symbol.clone(),
                start: address as u64,
                len: slot.bytes,
            });
        }
        Ok(EmulatedKernel {
            manifest,
            entry,
            shared,
            running: Mutex::new(()),
            _library: library,
        })
    }

    /// What the image says about itself.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Runs the kernel over `grid` with blocks of `threads` threads, block
    /// after block in the grid's order (x fastest), each thread a coroutine;
    /// stops at the first failure.
    ///
    /// # Safety
    ///
    /// `args` must be what a driver hands the kernel (the manifest's
    /// [`ArgsAbi`](tile_abi::emulation::ArgsAbi)): CUDA's `kernelParams`, or
    /// a kernarg segment of at least the manifest's parameters, valid for
    /// the whole launch. Every access the kernel makes is checked against
    /// the memory registered with [`crate::register`], so pointers in the
    /// arguments may be anything; the argument bytes themselves are read
    /// unchecked.
    pub unsafe fn launch(
        &self,
        grid: [u32; 3],
        threads: u32,
        args: *const u8,
    ) -> Result<(), EmuError> {
        let refuse = |reason: String| EmuError::Launch {
            kernel: self.manifest.kernel.clone(),
            reason,
        };
        if threads == 0 || !threads.is_multiple_of(32) || threads > 1024 {
            return Err(refuse(format!(
                "a block of {threads} threads (a multiple of 32 up to 1024)"
            )));
        }
        if grid.contains(&0) {
            return Err(refuse(format!("the grid {grid:?} has an empty axis")));
        }
        let _running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        let launch = Launch {
            entry: self.entry,
            args,
            grid,
            threads,
            wave: self.manifest.wave,
            shared: self.shared.clone(),
        };
        let mut global = crate::global::GlobalShadow::default();
        for z in 0..grid[2] {
            for y in 0..grid[1] {
                for x in 0..grid[0] {
                    // SAFETY: the image's own entry, shared allocations and
                    // (the caller's contract) arguments.
                    unsafe { run_block(&launch, [x, y, z], &mut global) }.map_err(|e| match e {
                        EmuError::Launch { reason, .. } => refuse(reason),
                        other => other,
                    })?;
                }
            }
        }
        Ok(())
    }
}

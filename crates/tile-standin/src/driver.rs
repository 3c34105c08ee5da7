//! What both stand-ins hold and check: handles, loaded modules and their
//! kernels, streams and events (`streams.rs`), captures and graphs
//! (`capture.rs`), the sticky error of a faulted launch, the launch-shape
//! checks against a kernel's bounds and a device's limits, and the launch
//! itself through the emulation target.

use crate::capture::{Capture, Op};
use crate::memory;
use crate::streams::{Event, Stream};
use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::{Arc, Mutex, MutexGuard};
use tile_emu::{EmuError, EmulatedKernel};

/// A kernel as the driver reads it from the device image.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Kernel {
    /// Its name.
    pub(crate) name: String,
    /// The size in bytes of each explicit parameter.
    pub(crate) params: Vec<usize>,
    /// The only block shape it may be launched with (PTX `.reqntid`).
    pub(crate) required_block: Option<[u32; 3]>,
    /// The largest block shape (PTX `.maxntid`).
    pub(crate) max_block: Option<[u32; 3]>,
    /// The most threads of a block (AMDGPU `.max_flat_workgroup_size`).
    pub(crate) max_threads: Option<u32>,
    /// Its static shared memory (LDS) in bytes.
    pub(crate) static_shared: usize,
    /// The dynamic shared memory its code addresses (the emulation image's
    /// `tile_abi::image::DYNAMIC_SHARED_SYMBOL`), which a launch must give.
    pub(crate) dynamic_needed: usize,
    /// The most dynamic shared memory a launch may give: the driver's
    /// default until `cuFuncSetAttribute` raises it.
    pub(crate) dynamic_limit: usize,
    /// Where its parameters sit in its kernarg segment (AMDGPU).
    pub(crate) kernarg: Option<Kernarg>,
}

/// An AMDGPU kernel's kernarg segment.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Kernarg {
    /// The offset of each explicit parameter.
    pub(crate) offsets: Vec<usize>,
    /// The segment's size, hidden arguments included.
    pub(crate) segment: usize,
}

impl Kernarg {
    /// The bytes of the explicit parameters: the end of the last one.
    pub(crate) fn explicit(&self, sizes: &[usize]) -> usize {
        self.offsets
            .iter()
            .zip(sizes)
            .map(|(o, s)| o + s)
            .max()
            .unwrap_or(0)
    }
}

/// A device's launch limits.
pub(crate) struct Limits {
    /// Threads per block.
    pub(crate) threads: u32,
    /// Threads per block along x, y, z.
    pub(crate) block: [u32; 3],
    /// Blocks per grid along x, y, z.
    pub(crate) grid: [u32; 3],
    /// Static plus dynamic shared memory per block, without opting in.
    pub(crate) shared: usize,
    /// Static plus dynamic shared memory per block a function may opt in
    /// to.
    pub(crate) shared_optin: usize,
}

/// A loaded module: its kernels as the driver read them, and the emulation
/// image that runs them.
pub(crate) struct Loaded {
    pub(crate) kernels: Vec<Kernel>,
    pub(crate) image: EmulatedKernel,
}

impl Loaded {
    /// Pairs `kernels` with the emulation image made with `device_image`,
    /// once the image's kernel and parameters are found among them.
    pub(crate) fn new(kernels: Vec<Kernel>, device_image: &[u8]) -> Result<Loaded, String> {
        let image = crate::images::load(device_image)?;
        let manifest = image.manifest();
        let sizes: Vec<usize> = manifest.params.iter().map(|p| p.size).collect();
        let offsets: Vec<usize> = manifest.params.iter().map(|p| p.offset).collect();
        match kernels.iter().find(|k| k.name == manifest.kernel) {
            Some(Kernel {
                kernarg: Some(kernarg),
                ..
            }) if kernarg.offsets != offsets => Err(format!(
                "the emulation image of `{}` reads its parameters at offsets {offsets:?}, the code object has them at {:?}",
                manifest.kernel, kernarg.offsets
            )),
            Some(k) if k.params == sizes => {
                let dynamic = manifest
                    .shared
                    .iter()
                    .find(|s| s.symbol == tile_abi::image::DYNAMIC_SHARED_SYMBOL)
                    .map_or(0, |s| s.bytes);
                let kernels = kernels
                    .into_iter()
                    .map(|mut k| {
                        if k.name == manifest.kernel {
                            k.dynamic_needed = dynamic;
                        }
                        k
                    })
                    .collect();
                Ok(Loaded { kernels, image })
            }
            Some(k) => Err(format!(
                "the emulation image of `{}` takes parameters of {sizes:?} bytes, the device image {:?}",
                manifest.kernel, k.params
            )),
            None => Err(format!(
                "the emulation image's kernel `{}` is not in the device image",
                manifest.kernel
            )),
        }
    }
}

/// How an emulated launch faulted, as a driver classifies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// An access outside every allocation.
    IllegalAddress,
    /// An access not aligned for its instruction.
    Misaligned,
    /// Threads that never meet: the watchdog, on hardware.
    Timeout,
    /// Anything else.
    Failed,
}

/// Why a launch does not start.
pub(crate) enum Refused {
    /// A function or stream handle the driver did not hand out.
    Handle,
    /// An earlier launch's fault, sticky.
    Fault(Fault),
}

/// A driver's state: handles, modules, kernels, streams, events,
/// captures, graphs, sticky fault.
#[derive(Default)]
pub(crate) struct Driver {
    next_handle: u64,
    pub(crate) modules: HashMap<u64, Arc<Loaded>>,
    pub(crate) functions: HashMap<u64, (Arc<Loaded>, Kernel)>,
    /// The streams created, by handle.
    pub(crate) streams: HashMap<u64, Stream>,
    /// The per-thread default stream (one for all threads).
    pub(crate) per_thread: Stream,
    pub(crate) events: HashMap<u64, Event>,
    /// The open captures, by id.
    pub(crate) captures: HashMap<u64, Capture>,
    /// Graphs, and executable graphs: their operations.
    pub(crate) graphs: HashMap<u64, Arc<[Op]>>,
    pub(crate) execs: HashMap<u64, Arc<[Op]>>,
    /// The fault of a launch, reported from then on.
    pub(crate) sticky: Option<Fault>,
}

/// The first handle handed out: above the streams the driver knows by
/// number (0, 1, 2), and recognizable in a log.
const FIRST_HANDLE: u64 = 0x1001;

impl Driver {
    /// A fresh handle, of any kind (module, function, stream, event,
    /// graph), never one handed out before.
    pub(crate) fn handle(&mut self) -> u64 {
        self.next_handle = self.next_handle.max(FIRST_HANDLE - 1) + 1;
        self.next_handle
    }

    /// Registers `loaded`; its handle.
    pub(crate) fn add_module(&mut self, loaded: Loaded) -> u64 {
        let handle = self.handle();
        self.modules.insert(handle, Arc::new(loaded));
        handle
    }

    /// The handle of kernel `name` of `module`: `Err(None)` for an unknown
    /// module, `Err(Some(()))` for an unknown name.
    pub(crate) fn function(&mut self, module: u64, name: &str) -> Result<u64, Option<()>> {
        let loaded = self.modules.get(&module).cloned().ok_or(None)?;
        let kernel = loaded
            .kernels
            .iter()
            .find(|k| k.name == name)
            .cloned()
            .ok_or(Some(()))?;
        let handle = self.handle();
        self.functions.insert(handle, (loaded, kernel));
        Ok(handle)
    }

    /// Unloads `module` and forgets its functions; false if unknown.
    pub(crate) fn unload(&mut self, module: u64) -> bool {
        let Some(loaded) = self.modules.remove(&module) else {
            return false;
        };
        self.functions
            .retain(|_, (owner, _)| !Arc::ptr_eq(owner, &loaded));
        true
    }

    /// The module and kernel of `function`, to launch on `stream`: unless a
    /// handle is unknown, or a launch's fault is sticky.
    pub(crate) fn launchable(
        &self,
        function: u64,
        stream: u64,
    ) -> Result<(Arc<Loaded>, Kernel), Refused> {
        if !self.is_stream(stream) {
            return Err(Refused::Handle);
        }
        let found = self
            .functions
            .get(&function)
            .cloned()
            .ok_or(Refused::Handle)?;
        match self.sticky {
            Some(fault) => Err(Refused::Fault(fault)),
            None => Ok(found),
        }
    }
}

/// Success, in both APIs' numbering.
pub(crate) const SUCCESS: c_int = 0;
/// An argument out of range, in both APIs' numbering.
pub(crate) const INVALID_VALUE: c_int = 1;

/// Writes `value` through `out`: [`SUCCESS`], or [`INVALID_VALUE`] if
/// `out` is null.
///
/// # Safety
///
/// `out` is null or valid for a write of `T`.
pub(crate) unsafe fn put<T>(out: *mut T, value: T) -> c_int {
    if out.is_null() {
        return INVALID_VALUE;
    }
    // SAFETY: non-null, and valid by the caller's contract.
    unsafe { out.write(value) };
    SUCCESS
}

/// Writes `text`, truncated, and a NUL into the `len` bytes at `out`:
/// [`SUCCESS`], or [`INVALID_VALUE`] if `out` is null or `len` not
/// positive.
///
/// # Safety
///
/// `out` is null or valid for writes of `len` bytes.
pub(crate) unsafe fn put_str(out: *mut u8, len: usize, text: &str) -> c_int {
    if out.is_null() || len == 0 {
        return INVALID_VALUE;
    }
    let n = text.len().min(len - 1);
    // SAFETY: `n + 1 <= len` bytes (the caller's contract).
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), out, n);
        out.add(n).write(0);
    }
    SUCCESS
}

/// Locks a driver's state, made on first use.
pub(crate) fn lock(state: &'static Mutex<Option<Driver>>) -> MutexGuard<'static, Option<Driver>> {
    // The state is updated in single calls; a panic elsewhere leaves it
    // consistent.
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether a copy of `bytes` from `from` to `to` passes a driver's checks:
/// the `device` ends lie inside one allocation the device addresses each,
/// host pointers are non-null.
pub(crate) fn copyable(to: u64, from: u64, bytes: usize, device: [bool; 2]) -> bool {
    bytes == 0
        || [(to, device[0]), (from, device[1])]
            .into_iter()
            .all(|(address, on_device)| {
                if on_device {
                    memory::contains(address, bytes)
                } else {
                    address != 0
                }
            })
}

/// A copy of `bytes` from `from` to `to` after a driver's checks
/// ([`copyable`]).
pub(crate) fn copy(to: u64, from: u64, bytes: usize, device: [bool; 2]) -> Result<(), ()> {
    if !copyable(to, from, bytes, device) {
        return Err(());
    }
    if bytes > 0 {
        // SAFETY: device ranges lie inside live allocations (checked);
        // host ranges are the caller's, valid by the driver API's contract.
        unsafe { std::ptr::copy(from as *const u8, to as *mut u8, bytes) };
    }
    Ok(())
}

/// Whether a fill of `count` values of `width` bytes at `to` passes a
/// driver's checks: the range lies inside one allocation the device
/// addresses.
pub(crate) fn fillable(to: u64, width: usize, count: usize) -> bool {
    match count.checked_mul(width) {
        Some(0) => true,
        Some(bytes) => memory::contains(to, bytes),
        None => false,
    }
}

/// A fill of `count` values of `width` bytes (1 or 4, the lowest of
/// `value`) at `to`, after a driver's checks ([`fillable`]).
pub(crate) fn fill(to: u64, value: u32, width: usize, count: usize) -> Result<(), ()> {
    if !fillable(to, width, count) {
        return Err(());
    }
    // SAFETY: the range lies inside a live allocation (checked).
    unsafe {
        if width == 1 {
            std::ptr::write_bytes(to as *mut u8, value as u8, count);
        } else {
            let values = to as *mut u32;
            for i in 0..count {
                values.add(i).write_unaligned(value);
            }
        }
    }
    Ok(())
}

/// Why a launch of `kernel` with this shape is refused, as a driver
/// refuses it before the kernel runs.
pub(crate) fn check_shape(
    kernel: &Kernel,
    limits: &Limits,
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_shared: u32,
) -> Result<(), String> {
    if grid.contains(&0) || block.contains(&0) {
        return Err(format!("an empty grid {grid:?} or block {block:?}"));
    }
    if grid.iter().zip(limits.grid).any(|(&g, max)| g > max) {
        return Err(format!("the grid {grid:?} exceeds {:?}", limits.grid));
    }
    let threads: u64 = block.iter().map(|&b| u64::from(b)).product();
    if block.iter().zip(limits.block).any(|(&b, max)| b > max)
        || threads > u64::from(limits.threads)
    {
        return Err(format!(
            "the block {block:?} exceeds the device's {:?} and {} threads",
            limits.block, limits.threads
        ));
    }
    if let Some(required) = kernel.required_block.filter(|&r| r != block) {
        return Err(format!(
            "`{}` requires blocks of {required:?} (.reqntid), not {block:?}",
            kernel.name
        ));
    }
    if let Some(max) = kernel
        .max_block
        .filter(|m| block.iter().zip(m).any(|(b, m)| b > m))
    {
        return Err(format!(
            "`{}` allows blocks up to {max:?} (.maxntid), not {block:?}",
            kernel.name
        ));
    }
    if let Some(max) = kernel.max_threads.filter(|&m| threads > u64::from(m)) {
        return Err(format!(
            "`{}` allows blocks of up to {max} threads (.max_flat_workgroup_size), not {threads}",
            kernel.name
        ));
    }
    let dynamic = dynamic_shared as usize;
    if dynamic < kernel.dynamic_needed {
        return Err(format!(
            "`{}` addresses {} bytes of dynamic shared memory, the launch gives {dynamic}",
            kernel.name, kernel.dynamic_needed
        ));
    }
    if dynamic > kernel.dynamic_limit {
        return Err(format!(
            "{dynamic} bytes of dynamic shared memory, above the {} `{}` may use (raise it with cuFuncSetAttribute)",
            kernel.dynamic_limit, kernel.name
        ));
    }
    let total = kernel.static_shared + dynamic;
    if total > limits.shared_optin {
        return Err(format!(
            "{total} bytes of shared memory, above the device's {}",
            limits.shared_optin
        ));
    }
    if block[1] != 1 || block[2] != 1 {
        return Err(format!(
            "the block {block:?}: the stand-in runs one-dimensional blocks only"
        ));
    }
    Ok(())
}

/// Runs `kernel` of `loaded` over `grid` with blocks of `threads` threads
/// through the emulation target; the fault, if it faults (its message goes
/// to standard error).
///
/// # Safety
///
/// `args` is what the driver hands the kernel for the image's ABI (CUDA's
/// `kernelParams`, or an AMDGPU kernarg segment of the kernel's
/// parameters), valid for the launch.
pub(crate) unsafe fn run(
    loaded: &Loaded,
    kernel: &Kernel,
    grid: [u32; 3],
    threads: u32,
    args: *const u8,
) -> Result<(), Fault> {
    if !crate::images::launches_run() {
        return Ok(());
    }
    // SAFETY: the caller's contract; every access the kernel makes is
    // checked against the live allocations.
    let result = unsafe { loaded.image.launch(grid, threads, args) };
    result.map_err(|error| {
        eprintln!(
            "tile-standin: the launch of `{}` faulted: {error}",
            kernel.name
        );
        match error {
            EmuError::OutOfBounds { .. } | EmuError::SharedOutOfBounds { .. } => {
                Fault::IllegalAddress
            }
            EmuError::Misaligned { .. } => Fault::Misaligned,
            EmuError::Divergence { .. } => Fault::Timeout,
            _ => Fault::Failed,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A launch must give a kernel the dynamic shared memory its code
    /// addresses, no more than the function may use, and no more in all
    /// than the device lets a block opt in to.
    #[test]
    fn dynamic_shared_memory_is_checked_at_launch() {
        let kernel = Kernel {
            name: "k".into(),
            params: vec![],
            required_block: None,
            max_block: None,
            max_threads: None,
            static_shared: 1024,
            dynamic_needed: 96 * 1024,
            dynamic_limit: 47 * 1024,
            kernarg: None,
        };
        let limits = Limits {
            threads: 1024,
            block: [1024, 1024, 64],
            grid: [u32::MAX, 65_535, 65_535],
            shared: 48 * 1024,
            shared_optin: 99 * 1024,
        };
        let shape = |kernel: &Kernel, shared: u32| {
            check_shape(kernel, &limits, [1, 1, 1], [128, 1, 1], shared)
        };
        assert_eq!(
            shape(&kernel, 0).unwrap_err(),
            "`k` addresses 98304 bytes of dynamic shared memory, the launch gives 0"
        );
        assert_eq!(
            shape(&kernel, 96 * 1024).unwrap_err(),
            "98304 bytes of dynamic shared memory, above the 48128 `k` may use (raise it with cuFuncSetAttribute)"
        );
        let opted = Kernel {
            dynamic_limit: 98 * 1024,
            ..kernel.clone()
        };
        assert!(shape(&opted, 96 * 1024).is_ok());
        assert_eq!(
            shape(&opted, 98 * 1024 + 16).unwrap_err(),
            "100368 bytes of dynamic shared memory, above the 100352 `k` may use (raise it with cuFuncSetAttribute)"
        );
        let roomy = Kernel {
            dynamic_limit: 200 * 1024,
            ..kernel
        };
        assert_eq!(
            shape(&roomy, 99 * 1024).unwrap_err(),
            "102400 bytes of shared memory, above the device's 101376"
        );
    }
}

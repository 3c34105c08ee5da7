//! CUDA devices through the driver API of `cudarc` (loaded at run time):
//! the device's primary context, memory, PTX modules through the driver's
//! JIT, streams, and launches on the context's default stream or a stream.
//!
//! `cudarc` panics when it cannot open `libcuda`, so [`Cuda::open`] runs only
//! after [`crate::driver::probe`] found the driver, and checks once more that
//! `cudarc` finds it too before its first call.

use crate::error::Error;
use cudarc::driver::sys::{self, CUdevice_attribute, CUjit_option};
use cudarc::driver::{result, DriverError};
use std::ffi::{c_uint, c_void, CString};
use tile_abi::Packet;

/// A CUDA device with its retained primary context.
#[derive(Debug)]
pub(crate) struct Cuda {
    device: sys::CUdevice,
    context: sys::CUcontext,
    /// The compute capability, `(major, minor)`.
    pub(crate) capability: (u32, u32),
    /// The most shared memory a block may opt in to, in bytes.
    pub(crate) max_shared_optin: usize,
    /// Its streaming multiprocessors.
    pub(crate) multiprocessors: u32,
}

// SAFETY: a CUDA context and the device handle may be used from any thread;
// every call below first makes the context current on the calling thread.
unsafe impl Send for Cuda {}
// SAFETY: as above; the driver API is thread-safe.
unsafe impl Sync for Cuda {}

/// A loaded PTX module and its kernel function.
#[derive(Debug)]
pub(crate) struct CudaModule {
    module: sys::CUmodule,
    function: sys::CUfunction,
    /// The dynamic shared memory each launch passes, in bytes.
    dynamic_shared: u32,
}

// SAFETY: module and function handles are valid in every thread that makes
// their context current, which every use does.
unsafe impl Send for CudaModule {}
// SAFETY: as above.
unsafe impl Sync for CudaModule {}

/// The typed error of a failed driver call.
fn failed(call: &str) -> impl FnOnce(DriverError) -> Error + '_ {
    move |e| Error::DriverCall {
        api: "CUDA",
        call: call.to_string(),
        code: e.0 as i32,
    }
}

/// The size of the JIT's error log buffer.
const LOG_BYTES: usize = 16 * 1024;

impl Cuda {
    /// Opens device `ordinal` (already found by the probe): retains its
    /// primary context and reads its compute capability, shared memory and
    /// multiprocessors.
    pub(crate) fn open(ordinal: usize) -> Result<Cuda, Error> {
        // SAFETY: only tries to open the driver library with `libloading`.
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::NoDriver {
                api: "CUDA",
                tried: "cudarc's list of libcuda names".into(),
                reason: "the probe found a driver that cudarc cannot open".into(),
            });
        }
        result::init().map_err(failed("initialization"))?;
        let index = i32::try_from(ordinal).map_err(|_| Error::NoDevice {
            api: "CUDA",
            ordinal,
            available: 0,
        })?;
        let device = result::device::get(index).map_err(failed("getting the device"))?;
        let attribute = |a: CUdevice_attribute| {
            // SAFETY: `device` is a valid handle from `cuDeviceGet`.
            unsafe { result::device::get_attribute(device, a) }
                .map_err(failed("reading the device's attributes"))
                .map(|v| v.max(0) as u32)
        };
        let major = attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        let optin =
            attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?;
        let multiprocessors =
            attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?.max(1);
        // SAFETY: `device` is valid; the context is released on drop.
        let context = unsafe { result::primary_ctx::retain(device) }
            .map_err(failed("retaining the primary context"))?;
        Ok(Cuda {
            device,
            context,
            capability: (major, minor),
            max_shared_optin: optin as usize,
            multiprocessors,
        })
    }

    /// Makes the context current on this thread.
    fn current(&self) -> Result<(), Error> {
        // SAFETY: the context is retained until `self` drops.
        unsafe { result::ctx::set_current(self.context) }
            .map_err(failed("making the context current"))
    }

    /// Allocates `bytes` (> 0) of device memory.
    pub(crate) fn alloc(&self, bytes: usize) -> Result<u64, Error> {
        self.current()?;
        // SAFETY: the context is current; the memory is freed by `free`.
        unsafe { result::malloc_sync(bytes) }.map_err(failed("allocating device memory"))
    }

    /// Frees memory from [`Cuda::alloc`].
    pub(crate) fn free(&self, pointer: u64) -> Result<(), Error> {
        self.current()?;
        // SAFETY: `pointer` came from `alloc` and is freed once (by the
        // owning buffer's drop).
        unsafe { result::free_sync(pointer) }.map_err(failed("freeing device memory"))
    }

    /// Copies `data` to device memory at `pointer` (which holds at least
    /// `data.len()` bytes).
    pub(crate) fn upload(&self, pointer: u64, data: &[u8]) -> Result<(), Error> {
        self.current()?;
        // SAFETY: the destination holds `data.len()` bytes (the caller's
        // buffer), the source is a live slice.
        unsafe { result::memcpy_htod_sync(pointer, data) }.map_err(failed("copying to the device"))
    }

    /// Copies device memory at `pointer` into `data`.
    pub(crate) fn download(&self, pointer: u64, data: &mut [u8]) -> Result<(), Error> {
        self.current()?;
        // SAFETY: the source holds `data.len()` bytes, the destination is a
        // live, exclusively borrowed slice.
        unsafe { result::memcpy_dtoh_sync(data, pointer) }
            .map_err(failed("copying from the device"))
    }

    /// Copies `bytes` between two device buffers of at least that size.
    pub(crate) fn copy(&self, to: u64, from: u64, bytes: usize) -> Result<(), Error> {
        self.current()?;
        // SAFETY: both buffers are live allocations of at least `bytes`.
        unsafe { result::memcpy_dtod_sync(to, from, bytes) }
            .map_err(failed("copying on the device"))
    }

    /// Loads PTX text and finds the kernel `name` in it, opted in to
    /// `dynamic_shared` bytes of dynamic shared memory per block (when
    /// above what any kernel gets); a failed load is `Err` with the JIT's
    /// error log or the driver's refusal.
    pub(crate) fn load(
        &self,
        ptx: &[u8],
        name: &str,
        dynamic_shared: usize,
    ) -> Result<CudaModule, String> {
        if dynamic_shared > self.max_shared_optin {
            return Err(format!(
                "the kernel needs {dynamic_shared} bytes of shared memory per block; the device allows at most {}",
                self.max_shared_optin
            ));
        }
        let dynamic_shared = u32::try_from(dynamic_shared)
            .map_err(|_| format!("{dynamic_shared} bytes of shared memory"))?;
        self.current().map_err(|e| e.to_string())?;
        let ptx = CString::new(ptx.strip_suffix(b"\0").unwrap_or(ptx))
            .map_err(|e| format!("the PTX holds a NUL byte: {e}"))?;
        let mut log = vec![0u8; LOG_BYTES];
        let mut options = [
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut values: [*mut c_void; 2] = [log.as_mut_ptr().cast(), LOG_BYTES as *mut c_void];
        let mut module: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: the image is NUL-terminated PTX text; the options name a
        // log buffer of `LOG_BYTES` bytes that outlives the call, and its size
        // is passed by value in the pointer slot, as the driver API defines.
        let status = unsafe {
            sys::cuModuleLoadDataEx(
                &mut module,
                ptx.as_ptr().cast(),
                options.len() as c_uint,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        if status != sys::CUresult::CUDA_SUCCESS {
            return Err(jit_failure(status, &log));
        }
        let symbol = CString::new(name).map_err(|e| e.to_string())?;
        // SAFETY: `module` was just loaded.
        let function = match unsafe { result::module::get_function(module, symbol) } {
            Ok(function) => function,
            Err(e) => {
                // SAFETY: the module is unloaded once, here.
                let _ = unsafe { result::module::unload(module) };
                return Err(format!("the PTX has no kernel `{name}` ({e:?})"));
            }
        };
        if dynamic_shared > 0 {
            let attribute =
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
            // SAFETY: `function` belongs to the module just loaded; the
            // value is within the device's opt-in limit (checked above).
            let set = unsafe {
                result::function::set_function_attribute(function, attribute, dynamic_shared as i32)
            };
            if let Err(e) = set {
                // SAFETY: the module is unloaded once, here.
                let _ = unsafe { result::module::unload(module) };
                return Err(format!(
                    "opting the kernel in to {dynamic_shared} bytes of shared memory failed ({e:?})"
                ));
            }
        }
        Ok(CudaModule {
            module,
            function,
            dynamic_shared,
        })
    }

    /// Unloads a module.
    pub(crate) fn unload(&self, module: &CudaModule) -> Result<(), Error> {
        self.current()?;
        // SAFETY: the module is live and unloaded once (its owner's drop).
        unsafe { result::module::unload(module.module) }.map_err(failed("unloading a module"))
    }

    /// Creates a stream that synchronizes with the default stream (whose
    /// copies therefore wait for the stream's launches).
    pub(crate) fn create_stream(&self) -> Result<sys::CUstream, Error> {
        self.current()?;
        result::stream::create(result::stream::StreamKind::Default)
            .map_err(failed("creating a stream"))
    }

    /// Waits for every launch on `stream`.
    pub(crate) fn synchronize_stream(&self, stream: sys::CUstream) -> Result<(), Error> {
        self.current()?;
        // SAFETY: `stream` came from `create_stream` and is not destroyed
        // yet (its owner destroys it on drop).
        unsafe { result::stream::synchronize(stream) }.map_err(failed("synchronizing a stream"))
    }

    /// Destroys a stream from [`Cuda::create_stream`].
    pub(crate) fn destroy_stream(&self, stream: sys::CUstream) -> Result<(), Error> {
        self.current()?;
        // SAFETY: `stream` came from `create_stream` and is destroyed once
        // (its owner's drop), after synchronizing it.
        unsafe { result::stream::destroy(stream) }.map_err(failed("destroying a stream"))
    }

    /// Launches `module`'s kernel on `stream` (null: the default stream),
    /// asynchronously.
    pub(crate) fn launch(
        &self,
        module: &CudaModule,
        grid: [u32; 3],
        block: u32,
        packet: &mut Packet,
        stream: sys::CUstream,
    ) -> Result<(), Error> {
        self.current()?;
        let mut params = packet.pointers();
        // SAFETY: the function is live; `params` holds one pointer per kernel
        // parameter to bytes of its ABI type (checked against the kernel's
        // signature by the caller), alive until the call returns (the driver
        // copies them); every tensor pointer is a live allocation of this
        // context covering the tensor's reachable elements, kept alive until
        // the launch is known to be done; `stream` is null or live.
        unsafe {
            result::launch_kernel(
                module.function,
                (grid[0], grid[1], grid[2]),
                (block, 1, 1),
                module.dynamic_shared,
                stream,
                &mut params,
            )
        }
        .map_err(failed("launching the kernel"))
    }

    /// Waits for everything launched on the context.
    pub(crate) fn synchronize(&self) -> Result<(), Error> {
        self.current()?;
        result::ctx::synchronize().map_err(failed("synchronizing"))
    }
}

/// Why a PTX load failed: the driver's status and the JIT's error log (the
/// buffer up to its first NUL).
fn jit_failure(status: sys::CUresult, log: &[u8]) -> String {
    let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
    format!(
        "cuModuleLoadDataEx failed ({status:?}); JIT log: {}",
        String::from_utf8_lossy(&log[..end]).trim_end()
    )
}

impl Drop for Cuda {
    fn drop(&mut self) {
        // SAFETY: the primary context was retained once in `open`.
        if let Err(e) = unsafe { result::primary_ctx::release(self.device) } {
            tracing::warn!(code = e.0 as i32, "releasing a CUDA primary context failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_ptx_load_carries_the_jit_log() {
        let mut log = vec![0u8; 64];
        let text = b"ptxas application ptx input, line 9; error   : Unknown symbol 'x'\n";
        log.splice(..0, text.iter().copied());
        let reason = jit_failure(sys::CUresult::CUDA_ERROR_INVALID_PTX, &log);
        let error = Error::ModuleLoad {
            kernel: "vadd".into(),
            specialization: "BLOCK=1024".into(),
            device: "cuda:0".into(),
            reason,
        };
        assert_eq!(
            error.to_string(),
            "kernel `vadd` (BLOCK=1024) could not be loaded on device cuda:0: cuModuleLoadDataEx failed (CUDA_ERROR_INVALID_PTX); JIT log: ptxas application ptx input, line 9; error   : Unknown symbol 'x'"
        );
    }
}

//! HIP devices through the HIP runtime loaded with `libloading`: memory,
//! HSACO modules, streams, and launches on the null stream or a stream.
//!
//! The entry points are declared here rather than taken from the `hip-sys`
//! crate (0.1.0 to 0.1.2): the build script of its `hip-runtime-sys`
//! dependency panics unless it finds ROCm's `hip/hip_runtime_api.h`, and
//! links `libamdhip64`, so building would need ROCm, while this runtime
//! loads the library at run time and builds anywhere; its bindings are also
//! ROCm 5.4's only, without ROCm 6's `hipDeviceProp_tR0600`. The
//! signatures, constants and property layouts ([`properties`]) follow
//! `hip_runtime_api.h` of ROCm 5 and 6 instead.

mod properties;

use crate::driver::GpuApi;
use crate::error::Error;
use libloading::Library;
use properties::Properties;
use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use tile_abi::Packet;

/// A `hipError_t`: 0 for success.
type HipResult = c_int;
/// An opaque HIP object: a module, function, stream or device pointer.
pub(crate) type HipPtr = *mut c_void;

/// `hipMemcpyKind` values.
const HOST_TO_DEVICE: c_int = 1;
const DEVICE_TO_HOST: c_int = 2;
const DEVICE_TO_DEVICE: c_int = 3;

/// `HIP_LAUNCH_PARAM_*` markers of `hipModuleLaunchKernel`'s `extra`.
const PARAM_BUFFER_POINTER: usize = 1;
const PARAM_BUFFER_SIZE: usize = 2;
const PARAM_END: usize = 3;

/// `hipModuleLaunchKernel(f, grid xyz, block xyz, shared bytes, stream,
/// kernelParams, extra)`.
type LaunchKernel = unsafe extern "C" fn(
    HipPtr,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    HipPtr,
    *mut *mut c_void,
    *mut *mut c_void,
) -> HipResult;

/// The entry points used, copied out of the library (valid for the rest of
/// the process: `crate::driver::library` never unloads it).
#[derive(Debug)]
struct Api {
    init: unsafe extern "C" fn(c_uint) -> HipResult,
    set_device: unsafe extern "C" fn(c_int) -> HipResult,
    malloc: unsafe extern "C" fn(*mut HipPtr, usize) -> HipResult,
    free: unsafe extern "C" fn(HipPtr) -> HipResult,
    memcpy: unsafe extern "C" fn(HipPtr, *const c_void, usize, c_int) -> HipResult,
    load_data: unsafe extern "C" fn(*mut HipPtr, *const c_void) -> HipResult,
    get_function: unsafe extern "C" fn(*mut HipPtr, HipPtr, *const c_char) -> HipResult,
    unload: unsafe extern "C" fn(HipPtr) -> HipResult,
    launch: LaunchKernel,
    synchronize: unsafe extern "C" fn() -> HipResult,
    stream_create: unsafe extern "C" fn(*mut HipPtr) -> HipResult,
    stream_synchronize: unsafe extern "C" fn(HipPtr) -> HipResult,
    stream_destroy: unsafe extern "C" fn(HipPtr) -> HipResult,
}

/// A HIP device and the runtime library it is driven through.
#[derive(Debug)]
pub(crate) struct Hip {
    api: Api,
    device: c_int,
    /// The device's `gcnArchName`, e.g. `gfx90a:sramecc+:xnack-`.
    pub(crate) arch: String,
    /// Its compute units.
    pub(crate) multiprocessors: u32,
}

// SAFETY: the HIP runtime is thread-safe; every call first selects the
// device on the calling thread.
unsafe impl Send for Hip {}
// SAFETY: as above.
unsafe impl Sync for Hip {}

/// A loaded code object and its kernel function.
#[derive(Debug)]
pub(crate) struct HipModule {
    module: HipPtr,
    function: HipPtr,
}

// SAFETY: module handles are process-wide in HIP.
unsafe impl Send for HipModule {}
// SAFETY: as above.
unsafe impl Sync for HipModule {}

fn check(call: &str, status: HipResult) -> Result<(), Error> {
    if status == 0 {
        Ok(())
    } else {
        Err(Error::DriverCall {
            api: "HIP",
            call: call.to_string(),
            code: status,
        })
    }
}

/// A function pointer of `T` named `name` from `library`.
fn entry<T: Copy>(library: &Library, name: &str) -> Result<T, Error> {
    // SAFETY: every `T` requested (in `Hip::open` and `Properties::find`)
    // is the C signature of `name` in the HIP headers; the pointer is copied
    // out, and the library stays loaded for the rest of the process.
    unsafe { library.get::<T>(name.as_bytes()) }
        .map(|symbol| *symbol)
        .map_err(|e| Error::NoDriver {
            api: "HIP",
            tried: GpuApi::Hip.libraries().join(", "),
            reason: format!("{name}: {e}"),
        })
}

impl Hip {
    /// Opens device `ordinal` (already found by the probe) and reads its
    /// architecture name.
    pub(crate) fn open(ordinal: usize) -> Result<Hip, Error> {
        let library = crate::driver::library(GpuApi::Hip)?;
        let api = Api {
            init: entry(library, "hipInit")?,
            set_device: entry(library, "hipSetDevice")?,
            malloc: entry(library, "hipMalloc")?,
            free: entry(library, "hipFree")?,
            memcpy: entry(library, "hipMemcpy")?,
            load_data: entry(library, "hipModuleLoadData")?,
            get_function: entry(library, "hipModuleGetFunction")?,
            unload: entry(library, "hipModuleUnload")?,
            launch: entry(library, "hipModuleLaunchKernel")?,
            synchronize: entry(library, "hipDeviceSynchronize")?,
            stream_create: entry(library, "hipStreamCreate")?,
            stream_synchronize: entry(library, "hipStreamSynchronize")?,
            stream_destroy: entry(library, "hipStreamDestroy")?,
        };
        // SAFETY: the documented signature; flags must be 0.
        check("initialization", unsafe { (api.init)(0) })?;
        let device = c_int::try_from(ordinal).map_err(|_| Error::NoDevice {
            api: "HIP",
            ordinal,
            available: 0,
        })?;
        let properties = Properties::find(library)?;
        let (arch, multiprocessors) = properties.describe(device, &format!("hip:{ordinal}"))?;
        tracing::debug!(
            ordinal,
            call = properties.symbol(),
            arch,
            multiprocessors,
            "read a HIP device's gcnArchName and compute units"
        );
        Ok(Hip {
            api,
            device,
            arch,
            multiprocessors,
        })
    }

    fn select(&self) -> Result<(), Error> {
        // SAFETY: `device` is a valid ordinal.
        check("selecting the device", unsafe {
            (self.api.set_device)(self.device)
        })
    }

    /// Allocates `bytes` (> 0) of device memory.
    pub(crate) fn alloc(&self, bytes: usize) -> Result<u64, Error> {
        self.select()?;
        let mut pointer: HipPtr = std::ptr::null_mut();
        // SAFETY: the out-pointer is valid; the memory is freed by `free`.
        check("allocating device memory", unsafe {
            (self.api.malloc)(&mut pointer, bytes)
        })?;
        Ok(pointer as u64)
    }

    /// Frees memory from [`Hip::alloc`].
    pub(crate) fn free(&self, pointer: u64) -> Result<(), Error> {
        self.select()?;
        // SAFETY: `pointer` came from `alloc` and is freed once.
        check("freeing device memory", unsafe {
            (self.api.free)(pointer as HipPtr)
        })
    }

    /// Copies `data` to device memory at `pointer` (at least as large).
    pub(crate) fn upload(&self, pointer: u64, data: &[u8]) -> Result<(), Error> {
        self.select()?;
        // SAFETY: the destination holds `data.len()` bytes; the source is a
        // live slice.
        check("copying to the device", unsafe {
            (self.api.memcpy)(
                pointer as HipPtr,
                data.as_ptr().cast(),
                data.len(),
                HOST_TO_DEVICE,
            )
        })
    }

    /// Copies device memory at `pointer` into `data`.
    pub(crate) fn download(&self, pointer: u64, data: &mut [u8]) -> Result<(), Error> {
        self.select()?;
        // SAFETY: the source holds `data.len()` bytes; the destination is a
        // live, exclusively borrowed slice.
        check("copying from the device", unsafe {
            (self.api.memcpy)(
                data.as_mut_ptr().cast(),
                pointer as *const c_void,
                data.len(),
                DEVICE_TO_HOST,
            )
        })
    }

    /// Copies `bytes` between two device buffers of at least that size.
    pub(crate) fn copy(&self, to: u64, from: u64, bytes: usize) -> Result<(), Error> {
        self.select()?;
        // SAFETY: both buffers are live allocations of at least `bytes`.
        check("copying on the device", unsafe {
            (self.api.memcpy)(to as HipPtr, from as *const c_void, bytes, DEVICE_TO_DEVICE)
        })
    }

    /// Loads a code object and finds the kernel `name` in it.
    pub(crate) fn load(&self, hsaco: &[u8], name: &str) -> Result<HipModule, String> {
        self.select().map_err(|e| e.to_string())?;
        let mut module: HipPtr = std::ptr::null_mut();
        // SAFETY: the image is a complete code object held in memory for
        // the duration of the call.
        let status = unsafe { (self.api.load_data)(&mut module, hsaco.as_ptr().cast()) };
        if status != 0 {
            return Err(format!("hipModuleLoadData failed (error code {status})"));
        }
        let symbol = CString::new(name).map_err(|e| e.to_string())?;
        let mut function: HipPtr = std::ptr::null_mut();
        // SAFETY: `module` was just loaded; `symbol` is NUL-terminated.
        let status = unsafe { (self.api.get_function)(&mut function, module, symbol.as_ptr()) };
        if status != 0 {
            // SAFETY: the module is unloaded once, here.
            unsafe { (self.api.unload)(module) };
            return Err(format!(
                "the code object has no kernel `{name}` (error code {status})"
            ));
        }
        Ok(HipModule { module, function })
    }

    /// Unloads a module.
    pub(crate) fn unload(&self, module: &HipModule) -> Result<(), Error> {
        self.select()?;
        // SAFETY: the module is live and unloaded once (its owner's drop).
        check("unloading a module", unsafe {
            (self.api.unload)(module.module)
        })
    }

    /// Creates a blocking stream (the null stream's copies wait for its
    /// launches).
    pub(crate) fn create_stream(&self) -> Result<HipPtr, Error> {
        self.select()?;
        let mut stream: HipPtr = std::ptr::null_mut();
        // SAFETY: the out-pointer is valid; the stream is destroyed by
        // `destroy_stream`.
        check("creating a stream", unsafe {
            (self.api.stream_create)(&mut stream)
        })?;
        Ok(stream)
    }

    /// Waits for every launch on `stream`.
    pub(crate) fn synchronize_stream(&self, stream: HipPtr) -> Result<(), Error> {
        self.select()?;
        // SAFETY: `stream` came from `create_stream` and is not destroyed yet.
        check("synchronizing a stream", unsafe {
            (self.api.stream_synchronize)(stream)
        })
    }

    /// Destroys a stream from [`Hip::create_stream`].
    pub(crate) fn destroy_stream(&self, stream: HipPtr) -> Result<(), Error> {
        self.select()?;
        // SAFETY: `stream` came from `create_stream` and is destroyed once.
        check("destroying a stream", unsafe {
            (self.api.stream_destroy)(stream)
        })
    }

    /// Launches `module`'s kernel on `stream` (null: the null stream),
    /// asynchronously, with the parameters packed into one buffer.
    pub(crate) fn launch(
        &self,
        module: &HipModule,
        grid: [u32; 3],
        block: u32,
        packet: &Packet,
        stream: HipPtr,
    ) -> Result<(), Error> {
        self.select()?;
        let mut buffer = packet.packed();
        let mut size = buffer.len();
        let mut extra: [*mut c_void; 5] = [
            PARAM_BUFFER_POINTER as *mut c_void,
            buffer.as_mut_ptr().cast(),
            PARAM_BUFFER_SIZE as *mut c_void,
            (&mut size as *mut usize).cast(),
            PARAM_END as *mut c_void,
        ];
        // SAFETY: the function is live; `extra` names a buffer laid out as
        // the kernel's parameters (checked against its signature by the
        // caller) and its size, both alive until the call returns; every
        // tensor pointer is a live allocation covering the tensor's elements,
        // kept alive until the launch is known to be done; `stream` is null
        // or live.
        check("launching the kernel", unsafe {
            (self.api.launch)(
                module.function,
                grid[0],
                grid[1],
                grid[2],
                block,
                1,
                1,
                0,
                stream,
                std::ptr::null_mut(),
                extra.as_mut_ptr(),
            )
        })
    }

    /// Waits for everything launched on the device.
    pub(crate) fn synchronize(&self) -> Result<(), Error> {
        self.select()?;
        // SAFETY: no arguments.
        check("synchronizing", unsafe { (self.api.synchronize)() })
    }
}

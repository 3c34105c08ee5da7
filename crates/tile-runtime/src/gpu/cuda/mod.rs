//! CUDA devices through the driver API, bound by the runtime itself
//! (`sys.rs`): the device's primary context (or a context the caller
//! owns), memory, mapped pinned memory, PTX modules through the driver's
//! JIT, non-blocking streams, events, and copies and launches queued on
//! them.

mod device;
mod sys;

pub(crate) use device::describe;
use device::{attribute, device_of, properties};

use super::backend::{Backend, Function, Pattern, Raw};
use super::info::DeviceInfo;
use crate::driver::GpuApi;
use crate::error::Error;
use std::ffi::{c_int, c_uint, c_void, CString};
use sys::{attribute, Api, CuDevice, CuResult, Handle};
use tile_abi::Packet;

/// A CUDA device with its context.
#[derive(Debug)]
pub(crate) struct Cuda {
    api: &'static Api,
    device: CuDevice,
    context: Handle,
    /// Whether `context` is the device's primary context, retained here
    /// and released on drop (else the caller's, borrowed).
    retained: bool,
    /// The most shared memory a block may opt in to, in bytes.
    max_shared_optin: usize,
}

// SAFETY: a CUDA context and the device handle may be used from any thread;
// every call below first makes the context current on the calling thread.
unsafe impl Send for Cuda {}
// SAFETY: as above; the driver API is thread-safe.
unsafe impl Sync for Cuda {}

/// `Ok` for `CUDA_SUCCESS`, else the [`Error::DriverCall`] of `call`.
fn check(call: &str, status: CuResult) -> Result<(), Error> {
    if status == 0 {
        Ok(())
    } else {
        Err(Error::driver_call(GpuApi::Cuda, call, status))
    }
}

/// The size of the JIT's error log buffer.
const LOG_BYTES: usize = 16 * 1024;

/// Initializes the driver (once per process is enough; repeating is
/// harmless) and returns its entry points.
fn initialized() -> Result<&'static Api, Error> {
    let api = sys::api()?;
    // SAFETY: the documented signature; flags must be 0.
    check("initialization", unsafe { (api.init)(0) })?;
    Ok(api)
}

impl Cuda {
    /// Opens device `ordinal` through its primary context (retained until
    /// drop), with its properties.
    pub(crate) fn open(ordinal: usize) -> Result<(Cuda, DeviceInfo), Error> {
        let api = initialized()?;
        let device = device_of(api, ordinal)?;
        let properties = properties(api, device, ordinal)?;
        let mut context: Handle = std::ptr::null_mut();
        // SAFETY: `device` is valid; the context is released on drop.
        check("retaining the primary context", unsafe {
            (api.primary_retain)(&mut context, device)
        })?;
        let cuda = Cuda {
            api,
            device,
            context,
            retained: true,
            max_shared_optin: attribute(api, device, attribute::MAX_SHARED_OPTIN)? as usize,
        };
        Ok((cuda, properties))
    }

    /// Drives the device of `context`, a context the caller owns and keeps
    /// alive (see `Device::from_raw_cuda_context`).
    pub(crate) fn borrow(context: Handle) -> Result<(Cuda, DeviceInfo), Error> {
        let api = initialized()?;
        // SAFETY: the caller's contract: a live context.
        check("making the context current", unsafe {
            (api.ctx_set_current)(context)
        })?;
        let mut device: CuDevice = 0;
        // SAFETY: the out-pointer is valid; a context is current.
        check("reading the context's device", unsafe {
            (api.ctx_get_device)(&mut device)
        })?;
        let ordinal = usize::try_from(device).unwrap_or(0);
        let properties = properties(api, device, ordinal)?;
        let cuda = Cuda {
            api,
            device,
            context,
            retained: false,
            max_shared_optin: attribute(api, device, attribute::MAX_SHARED_OPTIN)? as usize,
        };
        Ok((cuda, properties))
    }

    /// Makes the context current on this thread, unless it is (asking the
    /// driver, since another library may have changed it; the query is a
    /// thread-local read, far cheaper than setting it).
    fn current(&self) -> Result<(), Error> {
        let mut now: Handle = std::ptr::null_mut();
        // SAFETY: the out-pointer is valid.
        check("reading the current context", unsafe {
            (self.api.ctx_get_current)(&mut now)
        })?;
        if now == self.context {
            return Ok(());
        }
        // SAFETY: the context is retained until `self` drops, or the
        // caller keeps it alive.
        check("making the context current", unsafe {
            (self.api.ctx_set_current)(self.context)
        })
    }

    /// Makes the context current, then runs `call` and checks its status.
    fn run(&self, what: &str, call: impl FnOnce(&Api) -> CuResult) -> Result<(), Error> {
        self.current()?;
        check(what, call(self.api))
    }
}

impl Backend for Cuda {
    #[cfg(feature = "cudarc")]
    fn cuda_context(&self) -> Option<Raw> {
        Some(self.context)
    }

    fn alloc(&self, bytes: usize) -> Result<u64, Error> {
        let mut pointer = 0u64;
        // SAFETY: the out-pointer is valid; the memory is freed by `free`.
        self.run("allocating device memory", |api| unsafe {
            (api.mem_alloc)(&mut pointer, bytes)
        })?;
        Ok(pointer)
    }

    fn free(&self, pointer: u64) -> Result<(), Error> {
        // SAFETY: `pointer` came from `alloc` and is freed once (by the
        // owning buffer's drop).
        self.run("freeing device memory", |api| unsafe {
            (api.mem_free)(pointer)
        })
    }

    fn host_alloc(&self, bytes: usize) -> Result<(*mut u8, u64), Error> {
        let mut host: *mut c_void = std::ptr::null_mut();
        // SAFETY: the out-pointer is valid; freed by `host_free`.
        self.run("allocating pinned host memory", |api| unsafe {
            (api.host_alloc)(&mut host, bytes, sys::HOST_ALLOC_MAPPED)
        })?;
        let mut device = 0u64;
        // SAFETY: `host` is a mapped pinned allocation just made; flags
        // must be 0.
        let mapped = self.run("mapping pinned host memory", |api| unsafe {
            (api.host_device_pointer)(&mut device, host, 0)
        });
        if let Err(e) = mapped {
            // SAFETY: freed once, here.
            unsafe { (self.api.host_free)(host) };
            return Err(e);
        }
        Ok((host.cast(), device))
    }

    fn host_free(&self, host: *mut u8) -> Result<(), Error> {
        // SAFETY: `host` came from `host_alloc` and is freed once.
        self.run("freeing pinned host memory", |api| unsafe {
            (api.host_free)(host.cast())
        })
    }

    unsafe fn upload(
        &self,
        to: u64,
        from: *const u8,
        bytes: usize,
        stream: Raw,
    ) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        self.run("copying to the device", |api| unsafe {
            (api.copy_htod)(to, from.cast(), bytes, stream)
        })
    }

    unsafe fn download(
        &self,
        to: *mut u8,
        from: u64,
        bytes: usize,
        stream: Raw,
    ) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        self.run("copying from the device", |api| unsafe {
            (api.copy_dtoh)(to.cast(), from, bytes, stream)
        })
    }

    fn copy(&self, to: u64, from: u64, bytes: usize, stream: Raw) -> Result<(), Error> {
        // SAFETY: both are live device buffers of at least `bytes` (the
        // callers' buffers), kept alive until the stream has run the copy.
        self.run("copying on the device", |api| unsafe {
            (api.copy_dtod)(to, from, bytes, stream)
        })
    }

    fn fill(&self, to: u64, pattern: Pattern, stream: Raw) -> Result<(), Error> {
        // SAFETY: `to` is a live device buffer holding what the pattern
        // writes (the caller's), aligned for words.
        self.run("filling device memory", |api| unsafe {
            match pattern {
                Pattern::Bytes { value, count } => (api.memset_d8)(to, value, count, stream),
                Pattern::Words { value, count } => (api.memset_d32)(to, value, count, stream),
            }
        })
    }

    fn stream_create(&self) -> Result<Raw, Error> {
        let mut stream: Handle = std::ptr::null_mut();
        // SAFETY: the out-pointer is valid; destroyed by `stream_destroy`.
        self.run("creating a stream", |api| unsafe {
            (api.stream_create)(&mut stream, sys::STREAM_NON_BLOCKING)
        })?;
        Ok(stream)
    }

    fn stream_synchronize(&self, stream: Raw) -> Result<(), Error> {
        // SAFETY: `stream` is live (its owner destroys it on drop).
        self.run("synchronizing a stream", |api| unsafe {
            (api.stream_synchronize)(stream)
        })
    }

    fn stream_destroy(&self, stream: Raw) -> Result<(), Error> {
        // SAFETY: `stream` came from `stream_create`, destroyed once.
        self.run("destroying a stream", |api| unsafe {
            (api.stream_destroy)(stream)
        })
    }

    fn stream_wait(&self, stream: Raw, event: Raw) -> Result<(), Error> {
        // SAFETY: both are live; flags must be 0.
        self.run("making a stream wait for an event", |api| unsafe {
            (api.stream_wait_event)(stream, event, 0)
        })
    }

    fn event_create(&self, timing: bool) -> Result<Raw, Error> {
        let mut event: Handle = std::ptr::null_mut();
        let flags: c_uint = if timing { 0 } else { sys::EVENT_DISABLE_TIMING };
        // SAFETY: the out-pointer is valid; destroyed by `event_destroy`.
        self.run("creating an event", |api| unsafe {
            (api.event_create)(&mut event, flags)
        })?;
        Ok(event)
    }

    fn event_record(&self, event: Raw, stream: Raw) -> Result<(), Error> {
        // SAFETY: both are live.
        self.run("recording an event", |api| unsafe {
            (api.event_record)(event, stream)
        })
    }

    fn event_done(&self, event: Raw) -> Result<bool, Error> {
        self.current()?;
        // SAFETY: `event` is live.
        match unsafe { (self.api.event_query)(event) } {
            0 => Ok(true),
            sys::NOT_READY => Ok(false),
            status => Err(Error::driver_call(
                GpuApi::Cuda,
                "querying an event",
                status,
            )),
        }
    }

    fn event_synchronize(&self, event: Raw) -> Result<(), Error> {
        // SAFETY: `event` is live.
        self.run("waiting for an event", |api| unsafe {
            (api.event_synchronize)(event)
        })
    }

    fn event_elapsed(&self, start: Raw, end: Raw) -> Result<f32, Error> {
        let mut ms = 0f32;
        // SAFETY: both events are live; the out-pointer is valid.
        self.run("reading the time between two events", |api| unsafe {
            (api.event_elapsed)(&mut ms, start, end)
        })?;
        Ok(ms)
    }

    fn event_destroy(&self, event: Raw) -> Result<(), Error> {
        // SAFETY: `event` came from `event_create`, destroyed once.
        self.run("destroying an event", |api| unsafe {
            (api.event_destroy)(event)
        })
    }

    fn synchronize(&self) -> Result<(), Error> {
        // SAFETY: no arguments; a context is current.
        self.run("synchronizing", |api| unsafe { (api.ctx_synchronize)() })
    }

    fn load(&self, ptx: &[u8], name: &str, dynamic_shared: usize) -> Result<Function, String> {
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
            sys::JIT_ERROR_LOG_BUFFER,
            sys::JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut values: [*mut c_void; 2] = [log.as_mut_ptr().cast(), LOG_BYTES as *mut c_void];
        let mut module: Handle = std::ptr::null_mut();
        // SAFETY: the image is NUL-terminated PTX text; the options name a
        // log buffer of `LOG_BYTES` bytes that outlives the call, and its size
        // is passed by value in the pointer slot, as the driver API defines.
        let status = unsafe {
            (self.api.module_load)(
                &mut module,
                ptx.as_ptr().cast(),
                options.len() as c_uint,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        if status != 0 {
            return Err(jit_failure(status, &log));
        }
        let unload = |why: String| {
            // SAFETY: the module was just loaded and is unloaded once, here.
            unsafe { (self.api.module_unload)(module) };
            why
        };
        let symbol = CString::new(name).map_err(|e| unload(e.to_string()))?;
        let mut function: Handle = std::ptr::null_mut();
        // SAFETY: `module` was just loaded; `symbol` is NUL-terminated.
        let status = unsafe { (self.api.module_function)(&mut function, module, symbol.as_ptr()) };
        if status != 0 {
            return Err(unload(format!(
                "the PTX has no kernel `{name}` ({})",
                crate::driver_names::name(GpuApi::Cuda, status)
            )));
        }
        if dynamic_shared > 0 {
            // SAFETY: `function` belongs to the module just loaded; the
            // value is within the device's opt-in limit (checked above).
            let status = unsafe {
                (self.api.function_attribute)(
                    function,
                    sys::FUNC_MAX_DYNAMIC_SHARED,
                    dynamic_shared as c_int,
                )
            };
            if status != 0 {
                return Err(unload(format!(
                    "opting the kernel in to {dynamic_shared} bytes of shared memory failed ({})",
                    crate::driver_names::name(GpuApi::Cuda, status)
                )));
            }
        }
        Ok(Function {
            module,
            function,
            dynamic_shared,
            overlap: false,
        })
    }

    fn unload(&self, function: &Function) -> Result<(), Error> {
        // SAFETY: the module is live and unloaded once (its owner's drop).
        self.run("unloading a module", |api| unsafe {
            (api.module_unload)(function.module)
        })
    }

    unsafe fn launch(
        &self,
        function: &Function,
        grid: [u32; 3],
        block: u32,
        packet: &mut Packet,
        stream: Raw,
    ) -> Result<(), Error> {
        let mut params = packet.pointers();
        if let (true, Some(launch_ex)) = (function.overlap, self.api.launch_kernel_ex) {
            let mut value = [0u64; 8];
            value[0] = 1;
            let mut attribute = sys::LaunchAttribute {
                id: sys::ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
                pad: [0; 4],
                value,
            };
            let config = sys::LaunchConfig {
                grid,
                block: [block, 1, 1],
                shared: function.dynamic_shared,
                stream,
                attrs: &mut attribute,
                num_attrs: 1,
            };
            // SAFETY: as below; `config` and its one attribute live until
            // the call returns.
            return self.run("launching the kernel", |_| unsafe {
                launch_ex(
                    &config,
                    function.function,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            });
        }
        // SAFETY: the function is live; `params` holds one pointer per
        // kernel parameter to bytes of its ABI type, alive until the call
        // returns (the driver copies them); the addresses in them are the
        // caller's contract; `stream` is null or live.
        self.run("launching the kernel", |api| unsafe {
            (api.launch_kernel)(
                function.function,
                grid[0],
                grid[1],
                grid[2],
                block,
                1,
                1,
                function.dynamic_shared,
                stream,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        })
    }

    fn capture_begin(&self, stream: Raw) -> Result<(), Error> {
        let graphs = self.graphs()?;
        // SAFETY: `stream` is live and not the legacy stream.
        self.run("beginning a stream capture", |_| unsafe {
            (graphs.begin_capture)(stream, sys::CAPTURE_RELAXED)
        })
    }

    fn capture_end(&self, stream: Raw) -> Result<Raw, Error> {
        let graphs = self.graphs()?;
        let mut graph: Handle = std::ptr::null_mut();
        // SAFETY: `stream` is capturing; the out-pointer is valid.
        self.run("ending a stream capture", |_| unsafe {
            (graphs.end_capture)(stream, &mut graph)
        })?;
        let mut exec: Handle = std::ptr::null_mut();
        // SAFETY: `graph` was just captured; the out-pointer is valid.
        let instantiated = self.run("instantiating a graph", |_| unsafe {
            (graphs.instantiate)(&mut exec, graph, 0)
        });
        // SAFETY: the executable graph does not need its template; the
        // graph is destroyed once, here.
        let destroyed = self.run("destroying a graph", |_| unsafe { (graphs.destroy)(graph) });
        instantiated.and(destroyed)?;
        Ok(exec)
    }

    fn graph_launch(&self, graph: Raw, stream: Raw) -> Result<(), Error> {
        let graphs = self.graphs()?;
        // SAFETY: both are live.
        self.run("launching a graph", |_| unsafe {
            (graphs.launch)(graph, stream)
        })
    }

    fn graph_destroy(&self, graph: Raw) -> Result<(), Error> {
        let graphs = self.graphs()?;
        // SAFETY: `graph` came from `capture_end`, destroyed once.
        self.run("destroying a graph", |_| unsafe {
            (graphs.exec_destroy)(graph)
        })
    }
}

impl Cuda {
    /// The graph entry points, or an error saying the driver lacks them.
    fn graphs(&self) -> Result<&'static sys::Graphs, Error> {
        self.api.graphs.as_ref().ok_or_else(|| Error::NoDriver {
            api: "CUDA",
            tried: GpuApi::Cuda.libraries().join(", "),
            reason: "the driver has no graph capture (CUDA 11.4 or later)".into(),
        })
    }
}

/// Why a PTX load failed: the driver's status and the JIT's error log (the
/// buffer up to its first NUL).
fn jit_failure(status: CuResult, log: &[u8]) -> String {
    let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
    format!(
        "cuModuleLoadDataEx failed ({}); JIT log: {}",
        crate::driver_names::name(GpuApi::Cuda, status),
        String::from_utf8_lossy(&log[..end]).trim_end()
    )
}

impl Drop for Cuda {
    fn drop(&mut self) {
        if !self.retained {
            return;
        }
        // SAFETY: the primary context was retained once in `open`.
        let status = unsafe { (self.api.primary_release)(self.device) };
        if status != 0 {
            tracing::warn!(
                code = status,
                name = crate::driver_names::name(GpuApi::Cuda, status),
                "releasing a CUDA primary context failed"
            );
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
        let reason = jit_failure(218, &log);
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

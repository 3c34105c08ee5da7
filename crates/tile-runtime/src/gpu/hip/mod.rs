//! HIP devices through the HIP runtime loaded with `libloading`: memory,
//! mapped pinned memory, HSACO modules, non-blocking streams, events,
//! copies and launches queued on them.
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
mod sys;

use super::backend::{Backend, Function, Pattern, Raw};
use super::info::{DeviceInfo, GpuArch};
use crate::driver::GpuApi;
use crate::error::Error;
use properties::Properties;
use std::ffi::{c_int, c_void, CString};
use sys::{Api, HipPtr, HipResult};
use tile_abi::Packet;

/// A HIP device and the runtime library it is driven through.
#[derive(Debug)]
pub(crate) struct Hip {
    api: &'static Api,
    device: c_int,
}

// SAFETY: the HIP runtime is thread-safe; every call first selects the
// device on the calling thread.
unsafe impl Send for Hip {}
// SAFETY: as above.
unsafe impl Sync for Hip {}

/// `Ok` for `hipSuccess`, else the [`Error::DriverCall`] of `call`.
fn check(call: &str, status: HipResult) -> Result<(), Error> {
    if status == 0 {
        Ok(())
    } else {
        Err(Error::driver_call(GpuApi::Hip, call, status))
    }
}

/// Reads the properties of device `ordinal` (`name` as the probe read
/// it).
pub(crate) fn describe(ordinal: usize, name: &str) -> Result<DeviceInfo, Error> {
    let library = crate::driver::library(GpuApi::Hip)?;
    let api = sys::api()?;
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
    let mut memory = 0usize;
    // SAFETY: the out-pointer is a valid `size_t`; `device` is an ordinal
    // below the probed count.
    check("reading the device's memory", unsafe {
        (api.total_mem)(&mut memory, device)
    })?;
    Ok(DeviceInfo {
        api: GpuApi::Hip,
        ordinal,
        name: name.to_string(),
        arch: GpuArch::Hip(arch),
        multiprocessors,
        memory_bytes: memory as u64,
        clock_khz: 0,
        memory_clock_khz: 0,
        memory_bus_bits: 0,
    })
}

impl Hip {
    /// Opens device `ordinal` (already found by the probe, named `name`),
    /// with its properties.
    pub(crate) fn open(ordinal: usize, name: &str) -> Result<(Hip, DeviceInfo), Error> {
        let properties = describe(ordinal, name)?;
        let hip = Hip {
            api: sys::api()?,
            device: ordinal as c_int,
        };
        Ok((hip, properties))
    }

    /// Selects the device on this thread, then runs `call` and checks its
    /// status.
    fn run(&self, what: &str, call: impl FnOnce(&Api) -> HipResult) -> Result<(), Error> {
        // SAFETY: `device` is a valid ordinal.
        check("selecting the device", unsafe {
            (self.api.set_device)(self.device)
        })?;
        check(what, call(self.api))
    }
}

impl Backend for Hip {
    fn alloc(&self, bytes: usize) -> Result<u64, Error> {
        let mut pointer: HipPtr = std::ptr::null_mut();
        // SAFETY: the out-pointer is valid; the memory is freed by `free`.
        self.run("allocating device memory", |api| unsafe {
            (api.malloc)(&mut pointer, bytes)
        })?;
        Ok(pointer as u64)
    }

    fn free(&self, pointer: u64) -> Result<(), Error> {
        // SAFETY: `pointer` came from `alloc` and is freed once.
        self.run("freeing device memory", |api| unsafe {
            (api.free)(pointer as HipPtr)
        })
    }

    fn host_alloc(&self, bytes: usize) -> Result<(*mut u8, u64), Error> {
        let mut host: HipPtr = std::ptr::null_mut();
        // SAFETY: the out-pointer is valid; freed by `host_free`.
        self.run("allocating pinned host memory", |api| unsafe {
            (api.host_malloc)(&mut host, bytes, sys::HOST_ALLOC_MAPPED)
        })?;
        let mut device: HipPtr = std::ptr::null_mut();
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
        Ok((host.cast(), device as u64))
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
            (api.memcpy_async)(
                to as HipPtr,
                from.cast(),
                bytes,
                sys::HOST_TO_DEVICE,
                stream,
            )
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
            (api.memcpy_async)(
                to.cast(),
                from as *const c_void,
                bytes,
                sys::DEVICE_TO_HOST,
                stream,
            )
        })
    }

    fn copy(&self, to: u64, from: u64, bytes: usize, stream: Raw) -> Result<(), Error> {
        // SAFETY: both are live device buffers of at least `bytes`, kept
        // alive until the stream has run the copy.
        self.run("copying on the device", |api| unsafe {
            (api.memcpy_async)(
                to as HipPtr,
                from as *const c_void,
                bytes,
                sys::DEVICE_TO_DEVICE,
                stream,
            )
        })
    }

    fn fill(&self, to: u64, pattern: Pattern, stream: Raw) -> Result<(), Error> {
        // SAFETY: `to` is a live device buffer holding what the pattern
        // writes (the caller's), aligned for words.
        self.run("filling device memory", |api| unsafe {
            match pattern {
                Pattern::Bytes { value, count } => {
                    (api.memset_async)(to as HipPtr, c_int::from(value), count, stream)
                }
                Pattern::Words { value, count } => {
                    (api.memset_d32)(to as HipPtr, value as c_int, count, stream)
                }
            }
        })
    }

    fn stream_create(&self) -> Result<Raw, Error> {
        let mut stream: HipPtr = std::ptr::null_mut();
        // SAFETY: the out-pointer is valid; destroyed by `stream_destroy`.
        self.run("creating a stream", |api| unsafe {
            (api.stream_create)(&mut stream, sys::STREAM_NON_BLOCKING)
        })?;
        Ok(stream)
    }

    fn stream_synchronize(&self, stream: Raw) -> Result<(), Error> {
        // SAFETY: `stream` is live.
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
        let mut event: HipPtr = std::ptr::null_mut();
        let flags = if timing { 0 } else { sys::EVENT_DISABLE_TIMING };
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
        let mut status = 0;
        // SAFETY: `event` is live.
        self.run("selecting the device", |api| {
            status = unsafe { (api.event_query)(event) };
            0
        })?;
        match status {
            0 => Ok(true),
            sys::NOT_READY => Ok(false),
            status => Err(Error::driver_call(GpuApi::Hip, "querying an event", status)),
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
        // SAFETY: no arguments.
        self.run("synchronizing", |api| unsafe { (api.synchronize)() })
    }

    fn load(&self, hsaco: &[u8], name: &str, _dynamic_shared: usize) -> Result<Function, String> {
        self.run("selecting the device", |_| 0)
            .map_err(|e| e.to_string())?;
        let mut module: HipPtr = std::ptr::null_mut();
        // SAFETY: the image is a complete code object held in memory for
        // the duration of the call.
        let status = unsafe { (self.api.load_data)(&mut module, hsaco.as_ptr().cast()) };
        if status != 0 {
            return Err(format!(
                "hipModuleLoadData failed ({})",
                crate::driver_names::name(GpuApi::Hip, status)
            ));
        }
        let symbol = CString::new(name).map_err(|e| e.to_string())?;
        let mut function: HipPtr = std::ptr::null_mut();
        // SAFETY: `module` was just loaded; `symbol` is NUL-terminated.
        let status = unsafe { (self.api.get_function)(&mut function, module, symbol.as_ptr()) };
        if status != 0 {
            // SAFETY: the module is unloaded once, here.
            unsafe { (self.api.unload)(module) };
            return Err(format!(
                "the code object has no kernel `{name}` ({})",
                crate::driver_names::name(GpuApi::Hip, status)
            ));
        }
        Ok(Function {
            module,
            function,
            dynamic_shared: 0,
            overlap: false,
        })
    }

    fn unload(&self, function: &Function) -> Result<(), Error> {
        // SAFETY: the module is live and unloaded once (its owner's drop).
        self.run("unloading a module", |api| unsafe {
            (api.unload)(function.module)
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
        let mut buffer = packet.packed();
        let mut size = buffer.len();
        let mut extra: [*mut c_void; 5] = [
            sys::PARAM_BUFFER_POINTER as *mut c_void,
            buffer.as_mut_ptr().cast(),
            sys::PARAM_BUFFER_SIZE as *mut c_void,
            (&mut size as *mut usize).cast(),
            sys::PARAM_END as *mut c_void,
        ];
        // SAFETY: the function is live; `extra` names a buffer laid out as
        // the kernel's parameters and its size, both alive until the call
        // returns; the addresses in it are the caller's contract; `stream`
        // is null or live.
        self.run("launching the kernel", |api| unsafe {
            (api.launch)(
                function.function,
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

    fn capture_begin(&self, stream: Raw) -> Result<(), Error> {
        let graphs = self.graphs()?;
        // SAFETY: `stream` is live and not the null stream.
        self.run("beginning a stream capture", |_| unsafe {
            (graphs.begin_capture)(stream, sys::CAPTURE_RELAXED)
        })
    }

    fn capture_end(&self, stream: Raw) -> Result<Raw, Error> {
        let graphs = self.graphs()?;
        let mut graph: HipPtr = std::ptr::null_mut();
        // SAFETY: `stream` is capturing; the out-pointer is valid.
        self.run("ending a stream capture", |_| unsafe {
            (graphs.end_capture)(stream, &mut graph)
        })?;
        let mut exec: HipPtr = std::ptr::null_mut();
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

impl Hip {
    /// The graph entry points, or an error saying the runtime lacks them.
    fn graphs(&self) -> Result<&'static sys::Graphs, Error> {
        self.api.graphs.as_ref().ok_or_else(|| Error::NoDriver {
            api: "HIP",
            tried: GpuApi::Hip.libraries().join(", "),
            reason: "the runtime has no graph capture".into(),
        })
    }
}

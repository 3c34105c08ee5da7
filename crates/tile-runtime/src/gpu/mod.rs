//! GPU devices: contexts, device memory, module loading and launch for CUDA
//! (`cuda/`) and HIP (`hip/`), both bound by the runtime itself at run
//! time, behind one [`backend::Backend`].
//!
//! A launch on a GPU: the caller (`crate::launch`) has checked the argument
//! count, dtypes, ranks and mutability against the kernel; here every
//! tensor must live on the launch's device, a written tensor whose buffer
//! is shared with a clone is copied first (clones never see each other's
//! writes), the parameters are packed per the kernel ABI
//! (`tile_abi::params`), a status record is taken from the stream's slab
//! (`queue.rs`), and the kernel is queued with `32 · num_warps` threads per
//! block. A queued launch's [`Pending`] record keeps the memory of every
//! tensor it uses alive until its stream is synchronized; then a non-zero
//! status becomes [`Error::DeviceCheck`].

mod backend;
mod cuda;
mod event;
mod graph;
mod hip;
mod image;
mod info;
mod launch;
mod memory;
mod queue;
mod tensor_map;

pub use event::Event;
pub use graph::Graph;
pub(crate) use graph::{Captured, Copying, Queued};
pub use info::{DeviceInfo, GpuArch};
pub(crate) use launch::{check_residency, enqueue, launch, Pending};
pub(crate) use memory::{row_major, scatter, Buffer};
pub use memory::{GpuTensor, Owner};
pub(crate) use queue::Queue;

use crate::driver::{GpuApi, GpuInfo};
use crate::error::Error;
use crate::kernel::KernelSpec;
use backend::{Backend, Function, Raw};
use std::fmt;
use std::sync::Arc;
use tile_ir::Function as IrFunction;

/// An opened GPU: the API driving it, what it is, and the stream the
/// runtime's own copies run on.
#[derive(Debug)]
pub(crate) struct Context {
    backend: Box<dyn Backend>,
    info: DeviceInfo,
    /// A non-blocking stream of the runtime's, for copies and fills.
    own: Raw,
    /// What keeps a borrowed context alive (another library's handle).
    _keep: Option<Owner>,
}

// SAFETY: the stream handle may be used from any thread (the backend makes
// the device current first); the backend is `Send + Sync`.
unsafe impl Send for Context {}
// SAFETY: as above.
unsafe impl Sync for Context {}

impl Context {
    /// Opens the GPU the probe found.
    pub(crate) fn open(found: GpuInfo) -> Result<Context, Error> {
        let (backend, info): (Box<dyn Backend>, DeviceInfo) = match found.api {
            GpuApi::Cuda => {
                let (cuda, info) = cuda::Cuda::open(found.ordinal)?;
                (Box::new(cuda), info)
            }
            GpuApi::Hip => {
                let (hip, info) = hip::Hip::open(found.ordinal, &found.name)?;
                (Box::new(hip), info)
            }
        };
        Self::with(backend, info)
    }

    /// Drives the device of a CUDA context the caller owns.
    ///
    /// # Safety
    ///
    /// `context` is a live `CUcontext` that outlives the returned context
    /// and everything made on it (`keep`, when given, is what keeps it
    /// alive).
    pub(crate) unsafe fn borrow_cuda(context: Raw, keep: Option<Owner>) -> Result<Context, Error> {
        let (cuda, info) = cuda::Cuda::borrow(context)?;
        let mut context = Self::with(Box::new(cuda), info)?;
        context._keep = keep;
        Ok(context)
    }

    fn with(backend: Box<dyn Backend>, info: DeviceInfo) -> Result<Context, Error> {
        let own = backend.stream_create()?;
        Ok(Context {
            backend,
            info,
            own,
            _keep: None,
        })
    }

    /// The CUDA context the device is driven through (`None` for HIP).
    #[cfg(feature = "cudarc")]
    pub(crate) fn cuda_context(&self) -> Option<Raw> {
        self.backend.cuda_context()
    }

    /// What the device is.
    pub(crate) fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The name the driver reports.
    pub(crate) fn name(&self) -> &str {
        &self.info.name
    }

    /// The API the device is driven through.
    pub(crate) fn api(&self) -> GpuApi {
        self.info.api
    }

    /// The device's streaming multiprocessors (CUDA) or compute units
    /// (HIP).
    pub(crate) fn multiprocessors(&self) -> u32 {
        self.info.multiprocessors
    }

    /// The runtime's own stream on the device.
    pub(crate) fn own_stream(&self) -> Raw {
        self.own
    }

    /// Waits for every launch on this device.
    pub(crate) fn synchronize(&self) -> Result<(), Error> {
        self.backend.synchronize()
    }

    /// Starts capturing `stream`'s work into a graph.
    pub(crate) fn capture_begin(&self, stream: Raw) -> Result<(), Error> {
        self.backend.capture_begin(stream)
    }

    /// Ends the capture of `stream`: the instantiated graph.
    pub(crate) fn capture_end(&self, stream: Raw) -> Result<Raw, Error> {
        self.backend.capture_end(stream)
    }

    /// Queues a copy of `bytes` from host memory to device memory on
    /// `stream`.
    ///
    /// # Safety
    ///
    /// As [`Backend::upload`].
    pub(crate) unsafe fn upload(
        &self,
        to: u64,
        from: *const u8,
        bytes: usize,
        stream: Raw,
    ) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        unsafe { self.backend.upload(to, from, bytes, stream) }
    }

    /// Queues a copy of `bytes` from device memory to host memory on
    /// `stream`.
    ///
    /// # Safety
    ///
    /// As [`Backend::download`].
    pub(crate) unsafe fn download(
        &self,
        to: *mut u8,
        from: u64,
        bytes: usize,
        stream: Raw,
    ) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        unsafe { self.backend.download(to, from, bytes, stream) }
    }

    /// Makes `stream` wait for `event` (both of this device).
    pub(crate) fn backend_wait(&self, stream: Raw, event: Raw) -> Result<(), Error> {
        self.backend.stream_wait(stream, event)
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        let result = self
            .backend
            .stream_synchronize(self.own)
            .and_then(|()| self.backend.stream_destroy(self.own));
        if let Err(e) = result {
            tracing::warn!(device = %self, error = %e, "destroying the device's stream failed");
        }
    }
}

/// GPUs print as `cuda:0` or `hip:1`.
impl fmt::Display for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.info.id())
    }
}

/// Every GPU of `api` the driver reports, with its properties; a device
/// whose properties cannot be read is left out (and logged).
pub(crate) fn enumerate(api: GpuApi) -> Result<Vec<DeviceInfo>, Error> {
    let count = crate::driver::count(api)?;
    let mut found = Vec::new();
    for ordinal in 0..count {
        let described = crate::driver::probe(api, ordinal).and_then(|gpu| match api {
            GpuApi::Cuda => cuda::describe(ordinal),
            GpuApi::Hip => hip::describe(ordinal, &gpu.name),
        });
        match described {
            Ok(info) => found.push(info),
            Err(e) => tracing::warn!(api = api.name(), ordinal, error = %e, "skipped a device"),
        }
    }
    Ok(found)
}

/// Loads `spec`'s device image for `context`: the PTX of the highest
/// `sm_*` not above a CUDA device's compute capability, or the HSACO of a
/// HIP device's exact `gfx` name. A failed load is [`Error::ModuleLoad`]
/// with the driver's message (the JIT's error log for PTX).
pub(crate) fn load(
    context: &Arc<Context>,
    spec: &KernelSpec,
    function: &IrFunction,
) -> Result<Module, Error> {
    let device = context.to_string();
    let failed = |reason: String| Error::ModuleLoad {
        kernel: spec.name.to_string(),
        specialization: spec.specialization.to_string(),
        device: device.clone(),
        reason,
    };
    if !(1..=32).contains(&spec.num_warps) {
        return Err(failed(format!(
            "the kernel asks for {} warps; a block holds 1 to 32",
            spec.num_warps
        )));
    }
    let (image, function, maps) = match &context.info.arch {
        GpuArch::Cuda { major, minor } => {
            let image = image::choose_ptx(spec, &device, (*major, *minor))?;
            let ptx = std::str::from_utf8(image.bytes)
                .map_err(|e| failed(format!("the {} PTX is not UTF-8: {e}", image.target)))?;
            tile_abi::params::check_ptx_signature(ptx, function).map_err(&failed)?;
            let maps = tile_abi::tma::maps_of_ptx(ptx).map_err(&failed)?;
            let dynamic_shared = image.kind.dynamic_shared_bytes(image.shared_memory_bytes);
            let mut loaded = context
                .backend
                .load(image.bytes, &function.name, dynamic_shared)
                .map_err(failed)?;
            loaded.overlap = waits_for_its_grid(function) && hopper_or_later(image.target);
            (image, loaded, maps)
        }
        GpuArch::Hip(arch) => {
            let image = image::choose_hsaco(spec, &device, arch)?;
            let loaded = context
                .backend
                .load(image.bytes, &function.name, 0)
                .map_err(failed)?;
            (image, loaded, Vec::new())
        }
    };
    image::check_block_threads(image).map_err(failed)?;
    Ok(Module {
        context: Arc::clone(context),
        target: image.target,
        block_threads: image.block_threads,
        function,
        maps,
    })
}

/// A kernel's device code loaded on one GPU, unloaded on drop.
#[derive(Debug)]
pub(crate) struct Module {
    context: Arc<Context>,
    /// The target of the image loaded, e.g. `sm_80`.
    pub(crate) target: &'static str,
    /// The threads of its blocks (`crate::Image::block_threads`).
    pub(crate) block_threads: u32,
    function: Function,
    /// The tensor maps its kernel takes after its other parameters:
    /// `(tensor parameter, box rows)` (`tile_abi::tma`).
    maps: Vec<(usize, u16)>,
}

// SAFETY: module and function handles are valid in every thread that
// makes their device current, which every use does (the backend).
unsafe impl Send for Module {}
// SAFETY: as above.
unsafe impl Sync for Module {}

impl Drop for Module {
    fn drop(&mut self) {
        if let Err(e) = self.context.backend.unload(&self.function) {
            tracing::warn!(device = %self.context, error = %e, "unloading a module failed");
        }
    }
}

/// Whether `function` waits for the grids its launch depends on
/// (`gdc_wait`): only then may its launch overlap the one before it.
fn waits_for_its_grid(function: &IrFunction) -> bool {
    let mut waits = false;
    function.walk(&mut |op| waits |= function.op(op).kind == tile_ir::OpKind::GridWait);
    waits
}

/// Whether PTX of `target` (`sm_90a`) is for compute capability 9.0 or
/// later, where `griddepcontrol` exists.
fn hopper_or_later(target: &str) -> bool {
    target
        .strip_prefix("sm_")
        .map(|n| n.trim_end_matches(|c: char| c.is_ascii_alphabetic()))
        .and_then(|n| n.parse::<u32>().ok())
        .is_some_and(|n| n >= 90)
}

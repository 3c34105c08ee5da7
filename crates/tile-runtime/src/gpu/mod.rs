//! GPU devices: contexts, device memory, module loading and launch for CUDA
//! (`cuda.rs`, through `cudarc`) and HIP (`hip.rs`, through `libloading`).
//!
//! A launch on a GPU: the caller (`crate::launch`) has checked the argument
//! count, dtypes, ranks and mutability against the kernel; here every
//! tensor must live on the launch's device, a written tensor whose buffer
//! is shared with a clone is copied first (clones never see each other's
//! writes), the parameters are packed per the kernel ABI (`tile_abi::params`), the
//! status record is zeroed, the kernel runs with `32 · num_warps` threads per
//! block, and after synchronizing a non-zero status becomes
//! [`Error::DeviceCheck`]. A launch on a [`Queue`] (a stream) returns once
//! it is queued: its [`Pending`] record keeps the status record and every
//! tensor's memory alive until the stream is synchronized. None of this has
//! run on real hardware yet.

mod cuda;
mod hip;
mod image;
mod tensor_map;

use crate::driver::{GpuApi, GpuInfo};
use crate::error::Error;
use crate::kernel::{KernelSpec, LoadedKernel};
use crate::launch::LaunchArg;
use crate::prints::{deliver, PrintSink};
use std::fmt;
use std::sync::Arc;
use tile_abi::print;
use tile_abi::status::STATUS_BYTES;
use tile_abi::{Packet, Status};
use tile_ir::interp::{HostBuffer, HostTensor};
use tile_ir::{DType, Function};

/// An opened GPU: the API's handles plus the device's ordinal and name.
#[derive(Debug)]
pub(crate) struct Context {
    backend: Backend,
    info: GpuInfo,
}

#[derive(Debug)]
enum Backend {
    Cuda(cuda::Cuda),
    Hip(hip::Hip),
}

impl Context {
    /// Opens the GPU the probe found.
    pub(crate) fn open(info: GpuInfo) -> Result<Context, Error> {
        let backend = match info.api {
            GpuApi::Cuda => Backend::Cuda(cuda::Cuda::open(info.ordinal)?),
            GpuApi::Hip => Backend::Hip(hip::Hip::open(info.ordinal)?),
        };
        Ok(Context { backend, info })
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
        match &self.backend {
            Backend::Cuda(c) => c.multiprocessors,
            Backend::Hip(h) => h.multiprocessors,
        }
    }

    /// Waits for every launch on this device.
    pub(crate) fn synchronize(&self) -> Result<(), Error> {
        match &self.backend {
            Backend::Cuda(c) => c.synchronize(),
            Backend::Hip(h) => h.synchronize(),
        }
    }

    fn alloc(&self, bytes: usize) -> Result<u64, Error> {
        match &self.backend {
            Backend::Cuda(c) => c.alloc(bytes),
            Backend::Hip(h) => h.alloc(bytes),
        }
    }

    fn free(&self, pointer: u64) -> Result<(), Error> {
        match &self.backend {
            Backend::Cuda(c) => c.free(pointer),
            Backend::Hip(h) => h.free(pointer),
        }
    }

    fn upload(&self, pointer: u64, data: &[u8]) -> Result<(), Error> {
        match &self.backend {
            Backend::Cuda(c) => c.upload(pointer, data),
            Backend::Hip(h) => h.upload(pointer, data),
        }
    }

    fn download(&self, pointer: u64, data: &mut [u8]) -> Result<(), Error> {
        match &self.backend {
            Backend::Cuda(c) => c.download(pointer, data),
            Backend::Hip(h) => h.download(pointer, data),
        }
    }

    fn copy(&self, to: u64, from: u64, bytes: usize) -> Result<(), Error> {
        match &self.backend {
            Backend::Cuda(c) => c.copy(to, from, bytes),
            Backend::Hip(h) => h.copy(to, from, bytes),
        }
    }
}

/// GPUs print as `cuda:0` or `hip:1`.
impl fmt::Display for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let api = match self.info.api {
            GpuApi::Cuda => "cuda",
            GpuApi::Hip => "hip",
        };
        f.pad(&format!("{api}:{}", self.info.ordinal))
    }
}

/// A stream of one GPU: launches on it run in order, asynchronously with the
/// host; the stream synchronizes with the default stream, whose copies (all
/// of this module's) therefore wait for its launches. Destroyed on drop.
#[derive(Debug)]
pub(crate) struct Queue {
    context: Arc<Context>,
    handle: QueueHandle,
}

#[derive(Debug)]
enum QueueHandle {
    Cuda(cudarc::driver::sys::CUstream),
    Hip(hip::HipPtr),
}

// SAFETY: CUDA and HIP stream handles may be used from any thread; every
// call first makes the stream's context current on the calling thread.
unsafe impl Send for Queue {}
// SAFETY: as above; the drivers serialize calls on one stream.
unsafe impl Sync for Queue {}

impl Queue {
    /// A new stream on `context`.
    pub(crate) fn new(context: &Arc<Context>) -> Result<Queue, Error> {
        let handle = match &context.backend {
            Backend::Cuda(c) => QueueHandle::Cuda(c.create_stream()?),
            Backend::Hip(h) => QueueHandle::Hip(h.create_stream()?),
        };
        Ok(Queue {
            context: Arc::clone(context),
            handle,
        })
    }

    /// Waits for every launch queued so far.
    pub(crate) fn synchronize(&self) -> Result<(), Error> {
        match (&self.context.backend, &self.handle) {
            (Backend::Cuda(c), QueueHandle::Cuda(s)) => c.synchronize_stream(*s),
            (Backend::Hip(h), QueueHandle::Hip(s)) => h.synchronize_stream(*s),
            // A queue is created by its own context's API.
            _ => self.context.synchronize(),
        }
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        let result =
            self.synchronize()
                .and_then(|()| match (&self.context.backend, &self.handle) {
                    (Backend::Cuda(c), QueueHandle::Cuda(s)) => c.destroy_stream(*s),
                    (Backend::Hip(h), QueueHandle::Hip(s)) => h.destroy_stream(*s),
                    _ => Ok(()),
                });
        if let Err(e) = result {
            tracing::warn!(device = %self.context, error = %e, "destroying a stream failed");
        }
    }
}

/// A queued launch: its status record (with the print area after it when
/// the kernel prints), and the memory of every tensor it uses, kept alive
/// until the launch is done.
#[derive(Debug)]
pub(crate) struct Pending {
    spec: KernelSpec,
    status: Buffer,
    /// The kernel and where its lines go, when it prints.
    prints: Option<(Arc<LoadedKernel>, PrintSink)>,
    _tensors: Vec<Arc<Buffer>>,
}

impl Pending {
    /// The launch's outcome; call once its stream is synchronized. The
    /// lines the kernel printed go to the device's sink first, also when
    /// the launch failed.
    pub(crate) fn finish(self) -> Result<(), Error> {
        let device = self.status.context.to_string();
        let mut bytes = vec![0u8; self.status.bytes];
        self.status
            .context
            .download(self.status.pointer, &mut bytes)?;
        if let Some((kernel, sink)) = &self.prints {
            let mut lines = Vec::new();
            deliver(
                &kernel.function,
                &bytes[print::GPU_AREA_OFFSET as usize..],
                &mut |line| lines.push(line.clone()),
            );
            sink.send(&lines);
        }
        let mut record = [0u8; STATUS_BYTES];
        record.copy_from_slice(&bytes[..STATUS_BYTES]);
        match image::status_error(&Status::from_bytes(&record), &self.spec, &device) {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

/// Device memory, freed on drop.
#[derive(Debug)]
struct Buffer {
    context: Arc<Context>,
    /// The device address (0 for an empty buffer, which owns no memory).
    pointer: u64,
    bytes: usize,
}

impl Buffer {
    fn new(context: &Arc<Context>, bytes: usize) -> Result<Buffer, Error> {
        let pointer = if bytes == 0 { 0 } else { context.alloc(bytes)? };
        Ok(Buffer {
            context: Arc::clone(context),
            pointer,
            bytes,
        })
    }

    fn upload(context: &Arc<Context>, data: &[u8]) -> Result<Buffer, Error> {
        let buffer = Buffer::new(context, data.len())?;
        if !data.is_empty() {
            context.upload(buffer.pointer, data)?;
        }
        Ok(buffer)
    }

    fn download(&self) -> Result<HostBuffer, Error> {
        let mut data = HostBuffer::zeroed(self.bytes);
        if self.bytes > 0 {
            self.context.download(self.pointer, &mut data)?;
        }
        Ok(data)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if self.bytes > 0 {
            if let Err(e) = self.context.free(self.pointer) {
                tracing::warn!(device = %self.context, error = %e, "freeing device memory failed");
            }
        }
    }
}

/// A tensor in GPU memory: a buffer and the layout of the elements in it
/// (validated on the host before the upload, so every reachable element
/// lies inside the buffer). Clones share the buffer until a kernel writes
/// one of them, which then gets its own copy.
#[derive(Clone, Debug)]
pub struct GpuTensor {
    buffer: Arc<Buffer>,
    /// One per tensor sharing `buffer`: what decides whether a write needs
    /// a copy (queued launches hold the buffer too, but they are not
    /// sharers: the stream orders them).
    sharers: Arc<()>,
    dtype: DType,
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: usize,
}

impl GpuTensor {
    /// Copies a host tensor (its whole buffer, layout kept) to `context`.
    pub(crate) fn upload(context: &Arc<Context>, host: &HostTensor) -> Result<GpuTensor, Error> {
        Ok(GpuTensor {
            buffer: Arc::new(Buffer::upload(context, host.data())?),
            sharers: Arc::new(()),
            dtype: host.dtype(),
            shape: host.shape().to_vec(),
            strides: host.strides().to_vec(),
            offset: host.offset(),
        })
    }

    /// Copies the tensor back to the host.
    pub(crate) fn download(&self) -> Result<HostTensor, Error> {
        let data = self.buffer.download()?;
        HostTensor::from_buffer_with_strides(
            self.dtype,
            &self.shape,
            &self.strides,
            self.offset,
            data,
        )
        .map_err(|e| Error::InvalidTensor {
            shape: self.shape.clone(),
            reason: e.to_string(),
            device: self.device(),
        })
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The extents, outermost first.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The strides in elements.
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// Where element `[0, .., 0]` lies in the tensor's buffer, in
    /// elements (the drivers align buffers to at least 256 bytes).
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The device the tensor lives on, as `cuda:0`.
    pub fn device(&self) -> String {
        self.buffer.context.to_string()
    }

    /// The address of element `[0, .., 0]`.
    fn base(&self) -> u64 {
        self.buffer.pointer + (self.offset * self.dtype.size_bytes()) as u64
    }

    /// Gives the tensor a buffer of its own if a clone shares it.
    fn make_unique(&mut self) -> Result<(), Error> {
        if Arc::get_mut(&mut self.sharers).is_some() {
            return Ok(());
        }
        let context = &self.buffer.context;
        let copy = Buffer::new(context, self.buffer.bytes)?;
        if copy.bytes > 0 {
            context.copy(copy.pointer, self.buffer.pointer, copy.bytes)?;
        }
        self.buffer = Arc::new(copy);
        self.sharers = Arc::new(());
        Ok(())
    }
}

/// Loads `spec`'s device image for `context`: the PTX of the highest
/// `sm_*` not above a CUDA device's compute capability, or the HSACO of a
/// HIP device's exact `gfx` name. A failed load is [`Error::ModuleLoad`]
/// with the driver's message (the JIT's error log for PTX).
pub(crate) fn load(
    context: &Arc<Context>,
    spec: &KernelSpec,
    function: &Function,
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
    let (target, handle, maps) = match &context.backend {
        Backend::Cuda(cuda) => {
            let image = image::choose_ptx(spec, &device, cuda.capability)?;
            let ptx = std::str::from_utf8(image.bytes)
                .map_err(|e| failed(format!("the {} PTX is not UTF-8: {e}", image.target)))?;
            tile_abi::params::check_ptx_signature(ptx, function).map_err(&failed)?;
            let maps = tile_abi::tma::maps_of_ptx(ptx).map_err(&failed)?;
            let dynamic_shared = image.kind.dynamic_shared_bytes(image.shared_memory_bytes);
            let module = cuda
                .load(image.bytes, &function.name, dynamic_shared)
                .map_err(failed)?;
            (image.target, ModuleHandle::Cuda(module), maps)
        }
        Backend::Hip(hip) => {
            let image = image::choose_hsaco(spec, &device, &hip.arch)?;
            let module = hip.load(image.bytes, &function.name).map_err(failed)?;
            (image.target, ModuleHandle::Hip(module), Vec::new())
        }
    };
    Ok(Module {
        context: Arc::clone(context),
        target,
        handle,
        maps,
    })
}

/// A kernel's device code loaded on one GPU, unloaded on drop.
#[derive(Debug)]
pub(crate) struct Module {
    context: Arc<Context>,
    /// The target of the image loaded, e.g. `sm_80`.
    pub(crate) target: &'static str,
    handle: ModuleHandle,
    /// The tensor maps its kernel takes after its other parameters:
    /// `(tensor parameter, box rows)` (`tile_abi::tma`).
    maps: Vec<(usize, u16)>,
}

#[derive(Debug)]
enum ModuleHandle {
    Cuda(cuda::CudaModule),
    Hip(hip::HipModule),
}

impl Drop for Module {
    fn drop(&mut self) {
        let result = match (&self.context.backend, &self.handle) {
            (Backend::Cuda(c), ModuleHandle::Cuda(m)) => c.unload(m),
            (Backend::Hip(h), ModuleHandle::Hip(m)) => h.unload(m),
            _ => Ok(()),
        };
        if let Err(e) = result {
            tracing::warn!(device = %self.context, error = %e, "unloading a module failed");
        }
    }
}

/// Where a tensor argument lives: `cpu`, or the GPU's name as `cuda:0`.
fn residence(arg: &LaunchArg<'_>) -> Option<String> {
    match arg {
        LaunchArg::Tensor(_) | LaunchArg::TensorMut(_) => Some("cpu".into()),
        LaunchArg::GpuTensor(t) => Some(t.device()),
        LaunchArg::GpuTensorMut(t) => Some(t.device()),
        LaunchArg::Scalar(_) => None,
    }
}

/// Checks that every tensor argument lives on `device` (printed as
/// `cpu`, `cuda:0`, ...).
pub(crate) fn check_residency(
    device: &str,
    spec: &KernelSpec,
    function: &Function,
    args: &[LaunchArg<'_>],
) -> Result<(), Error> {
    for (param, arg) in function.params.iter().zip(args) {
        if let Some(home) = residence(arg).filter(|home| home != device) {
            return Err(Error::WrongDevice {
                kernel: spec.name.to_string(),
                argument: param.name.clone(),
                tensor_device: home,
                device: device.to_string(),
            });
        }
    }
    Ok(())
}

/// The most blocks a grid may have along each axis on `api`'s devices; on
/// HIP the work-items along x (blocks times `block` threads) must also fit
/// the 32 bits of the dispatch packet's grid size.
fn grid_limits(api: GpuApi, block: u32) -> [u64; 3] {
    let x = match api {
        GpuApi::Cuda => i32::MAX as u64,
        GpuApi::Hip => (u64::from(u32::MAX) / u64::from(block.max(1))).min(i32::MAX as u64),
    };
    [x, 65_535, 65_535]
}

/// An error unless `grid` fits the limits of `api` for blocks of `block`
/// threads: the driver would refuse it, or a HIP grid size would wrap.
fn check_grid(
    api: GpuApi,
    spec: &KernelSpec,
    device: &str,
    grid: [u32; 3],
    block: u32,
) -> Result<(), Error> {
    let limit = grid_limits(api, block);
    if grid.iter().zip(&limit).any(|(&g, &l)| u64::from(g) > l) {
        return Err(Error::GridTooLarge {
            kernel: spec.name.to_string(),
            device: device.to_string(),
            grid,
            limit,
        });
    }
    Ok(())
}

/// Runs `kernel` on `context` and waits for it; the arguments have been
/// checked against it (count, dtypes, ranks, mutability) and live on this
/// device.
pub(crate) fn launch(
    (context, sink): (&Arc<Context>, &PrintSink),
    spec: &KernelSpec,
    kernel: &Arc<LoadedKernel>,
    grid: [u32; 3],
    args: &mut [LaunchArg<'_>],
) -> Result<(), Error> {
    let pending = enqueue((context, sink), None, spec, kernel, grid, args)?;
    context.synchronize()?;
    pending.finish()
}

/// Queues `kernel` on `queue` (`None`: the default stream), as [`launch`]
/// but without waiting: the outcome is the returned record's, once the
/// stream is synchronized. A kernel that prints gets a print area of
/// [`print::DEFAULT_CAPACITY`] records after its status record, whose lines
/// go to `sink` when the launch is finished.
pub(crate) fn enqueue(
    (context, sink): (&Arc<Context>, &PrintSink),
    queue: Option<&Queue>,
    spec: &KernelSpec,
    kernel: &Arc<LoadedKernel>,
    grid: [u32; 3],
    args: &mut [LaunchArg<'_>],
) -> Result<Pending, Error> {
    let device = context.to_string();
    let block = 32 * spec.num_warps;
    check_grid(context.api(), spec, &device, grid, block)?;
    let module = kernel.module.as_ref().ok_or_else(|| Error::ModuleLoad {
        kernel: spec.name.to_string(),
        specialization: spec.specialization.to_string(),
        device: device.clone(),
        reason: "the kernel was loaded for another device".into(),
    })?;
    for arg in args.iter_mut() {
        if let LaunchArg::GpuTensorMut(t) = arg {
            t.make_unique()?;
        }
    }
    let prints = tile_ir::prints::prints(&kernel.function);
    let mut record = vec![0u8; STATUS_BYTES];
    if prints {
        record.extend(print::empty_area(print::DEFAULT_CAPACITY));
    }
    let status = Buffer::upload(context, &record)?;
    let mut packet = Packet::default();
    let mut tensors = Vec::new();
    for (param, arg) in kernel.function.params.iter().zip(args.iter()) {
        let tensor = match arg {
            LaunchArg::GpuTensor(t) => &**t,
            LaunchArg::GpuTensorMut(t) => &**t,
            LaunchArg::Scalar(s) => {
                packet.push_scalar(*s);
                continue;
            }
            LaunchArg::Tensor(_) | LaunchArg::TensorMut(_) => {
                return Err(Error::WrongDevice {
                    kernel: spec.name.to_string(),
                    argument: param.name.clone(),
                    tensor_device: "cpu".into(),
                    device,
                })
            }
        };
        packet.push_tensor(tensor.base(), &tensor.shape, &tensor.strides);
        tensors.push(Arc::clone(&tensor.buffer));
    }
    packet.push_pointer(status.pointer);
    for &(param, rows) in &module.maps {
        packet.push_tensor_map(tensor_map(spec, kernel, (args, param, rows), &device)?);
    }
    let wrong_api = || Error::ModuleLoad {
        kernel: spec.name.to_string(),
        specialization: spec.specialization.to_string(),
        device: device.clone(),
        reason: "the module or the stream was made through another API".into(),
    };
    match (&context.backend, &module.handle, queue.map(|q| &q.handle)) {
        (Backend::Cuda(c), ModuleHandle::Cuda(m), stream) => {
            let stream = match stream {
                None => cudarc::driver::result::stream::null(),
                Some(QueueHandle::Cuda(s)) => *s,
                Some(_) => return Err(wrong_api()),
            };
            c.launch(m, grid, block, &mut packet, stream)?
        }
        (Backend::Hip(h), ModuleHandle::Hip(m), stream) => {
            let stream = match stream {
                None => std::ptr::null_mut(),
                Some(QueueHandle::Hip(s)) => *s,
                Some(_) => return Err(wrong_api()),
            };
            h.launch(m, grid, block, &packet, stream)?
        }
        _ => return Err(wrong_api()),
    }
    Ok(Pending {
        spec: *spec,
        status,
        prints: prints.then(|| (Arc::clone(kernel), sink.clone())),
        _tensors: tensors,
    })
}

/// The tensor map of argument `param` for boxes of `rows` rows, encoded
/// by the driver, or an error naming the argument, its layout and the
/// requirement it breaks.
fn tensor_map(
    spec: &KernelSpec,
    kernel: &LoadedKernel,
    (args, param, rows): (&[LaunchArg<'_>], usize, u16),
    device: &str,
) -> Result<[u8; tile_abi::tma::MAP_BYTES], Error> {
    let argument = kernel
        .function
        .params
        .get(param)
        .map_or_else(|| format!("#{param}"), |p| p.name.clone());
    let mismatch = |found: String| Error::ArgumentMismatch {
        kernel: spec.name.to_string(),
        argument: argument.clone(),
        device: device.to_string(),
        expected:
            "a tensor the TMA can copy from (the kernel's sm_90a image takes a tensor map of it)"
                .into(),
        found,
    };
    let tensor = match args.get(param) {
        Some(LaunchArg::GpuTensor(t)) => &**t,
        Some(LaunchArg::GpuTensorMut(t)) => &**t,
        _ => return Err(mismatch("no device tensor".into())),
    };
    let dtype = tensor.dtype;
    let layout = format!(
        "{dtype} of shape {:?} and strides {:?}",
        tensor.shape, tensor.strides
    );
    let tma_box = tile_abi::tma::TmaBox::new(dtype, usize::from(rows))
        .ok_or_else(|| mismatch(format!("{layout}: no box of {rows} rows of it")))?;
    let map = tile_abi::tma::TensorMap::new(
        tensor.base(),
        (dtype, &tensor.shape, &tensor.strides),
        tma_box,
    )
    .map_err(|e| mismatch(format!("{layout}: {e}")))?;
    tensor_map::encode(&map).map_err(|e| mismatch(format!("{layout}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_beyond_the_driver_limits_are_refused_before_launch() {
        // SAFETY: never launched; only its name is read.
        let spec = unsafe { KernelSpec::new("k", "default", "", 4, &[], &[], &[]) };
        let ok = |api, grid| check_grid(api, &spec, "gpu:0", grid, 128).is_ok();
        assert!(ok(GpuApi::Cuda, [i32::MAX as u32, 65_535, 65_535]));
        assert!(!ok(GpuApi::Cuda, [i32::MAX as u32 + 1, 1, 1]));
        assert!(!ok(GpuApi::Cuda, [1, 65_536, 1]));
        assert!(!ok(GpuApi::Hip, [1, 1, 70_000]));
        // 2^25 blocks of 128 work-items overflow HIP's 32-bit grid size.
        assert!(ok(GpuApi::Hip, [(1 << 25) - 1, 1, 1]));
        assert!(!ok(GpuApi::Hip, [1 << 25, 1, 1]));
        let error = check_grid(GpuApi::Cuda, &spec, "cuda:0", [1, 1 << 20, 1], 128).unwrap_err();
        assert_eq!(
            error.to_string(),
            "kernel `k`: the grid [1, 1048576, 1] exceeds what device cuda:0 launches, at most [2147483647, 65535, 65535] blocks"
        );
    }
}

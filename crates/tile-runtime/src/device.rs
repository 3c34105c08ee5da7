//! Devices: where tensors live and kernels run.

use crate::cpu::pages;
use crate::device_print::PrintSink;
use crate::driver::{probe, GpuApi};
use crate::error::Error;
use crate::gpu::{Context, GpuTensor, Queue};
use crate::kernel::{KernelCode, KernelSpec, ModuleCache};
use crate::stream::Stream;
use crate::tensor::{Storage, Tensor};
use std::fmt;
use std::sync::Arc;
use tile_ir::interp::{Element, HostBuffer, HostTensor};
use tile_tensor::descriptor::TensorDescriptor;

/// The kind of a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    /// The host CPU. Kernels run as the host code `#[tile_kernel]` compiled
    /// ahead of time (through the reference interpreter when they have none).
    Cpu,
    /// A CUDA device: kernels run as PTX loaded through the driver's JIT.
    Cuda,
    /// A HIP device: kernels run as HSACO code objects.
    Hip,
}

/// A device with its module cache (each kernel specialization is loaded
/// once per device). Clones are handles to the same device: they share
/// its opened GPU, its loaded kernels, its own stream and where its
/// prints go, so a `Device` can be stored beside the [`Stream`]s made
/// from it.
#[derive(Clone, Debug)]
pub struct Device {
    kind: DeviceKind,
    pub(crate) modules: Arc<ModuleCache>,
    /// The opened GPU (`None` for the CPU).
    pub(crate) gpu: Option<Arc<Context>>,
    /// The GPU's stream for [`crate::launch`], the runtime's own.
    pub(crate) queue: Option<Arc<Queue>>,
    /// Where the lines of `device_print!` go.
    pub(crate) prints: PrintSink,
}

impl Device {
    /// The host CPU.
    pub fn cpu() -> Device {
        Device {
            kind: DeviceKind::Cpu,
            modules: Arc::default(),
            gpu: None,
            queue: None,
            prints: PrintSink::default(),
        }
    }

    /// CUDA device `ordinal`, through the driver loaded at run time (its
    /// primary context; [`crate::launch`] runs on a non-blocking stream of
    /// the runtime's).
    ///
    /// Without a driver this is [`Error::NoDriver`], without that device
    /// [`Error::NoDevice`], and a failing driver call [`Error::DriverCall`].
    /// Not yet tested on real hardware.
    pub fn cuda(ordinal: usize) -> Result<Device, Error> {
        Self::gpu(GpuApi::Cuda, ordinal)
    }

    /// HIP device `ordinal`, through the HIP runtime loaded at run time
    /// (see [`Device::cuda`] for what is reported). Not yet tested on real
    /// hardware.
    pub fn hip(ordinal: usize) -> Result<Device, Error> {
        Self::gpu(GpuApi::Hip, ordinal)
    }

    fn gpu(api: GpuApi, ordinal: usize) -> Result<Device, Error> {
        let info = probe(api, ordinal)?;
        Self::on(Context::open(info)?)
    }

    /// The device of an opened GPU context.
    pub(crate) fn on(context: Context) -> Result<Device, Error> {
        let api = context.api();
        tracing::info!(device = %context, name = context.name(), "opened a {} device", api.name());
        let context = Arc::new(context);
        // SAFETY: the context's own stream lives as long as the context,
        // which the queue holds.
        let queue = unsafe { Queue::borrowed(&context, context.own_stream()) };
        Ok(Device {
            kind: match api {
                GpuApi::Cuda => DeviceKind::Cuda,
                GpuApi::Hip => DeviceKind::Hip,
            },
            modules: Arc::default(),
            gpu: Some(context),
            queue: Some(Arc::new(queue)),
            prints: PrintSink::default(),
        })
    }

    /// Sends the lines kernels print with `device_print!` on this device to
    /// `sink` instead of standard output. Each launch's lines come when it
    /// is done (on a GPU, when its stream is synchronized), in program
    /// order (x fastest); one program's lines in the order it printed them
    /// (on a GPU, the threads of a block in any order).
    pub fn on_print(&self, sink: impl FnMut(&tile_ir::device_print::Printed) + Send + 'static) {
        self.prints.set(Box::new(sink));
    }

    /// A new [`Stream`] on this device, for launches that run in order
    /// while the host goes on.
    pub fn stream(&self) -> Result<Stream, Error> {
        Stream::new(self)
    }

    /// Waits until every kernel launched on this device has finished (a
    /// no-op on the CPU, where launches return when done).
    pub fn synchronize(&self) -> Result<(), Error> {
        match &self.gpu {
            Some(context) => context.synchronize(),
            None => Ok(()),
        }
    }

    /// A zeroed host buffer of `bytes` for a tensor of this device, not yet
    /// written: on the CPU, where it is the tensor's own storage, a large one
    /// is advised to use huge pages (`cpu/pages.rs`); for a GPU it is only
    /// the staging copy of an upload.
    fn host_buffer(&self, bytes: usize) -> HostBuffer {
        match &self.gpu {
            Some(_) => HostBuffer::zeroed(bytes),
            None => pages::huge_page_buffer(bytes),
        }
    }

    /// Puts a host tensor on this device: itself on the CPU, a copy of its
    /// buffer (layout kept) in the GPU's memory.
    fn place<T: Element>(&self, host: HostTensor) -> Result<Tensor<T>, Error> {
        match &self.gpu {
            Some(context) => Ok(Tensor::new(Storage::Gpu(GpuTensor::upload(
                context, &host,
            )?))),
            None => Ok(Tensor::new(Storage::Host(host))),
        }
    }

    /// The best device on this machine: of every GPU the drivers report
    /// ([`Device::enumerate`]), the one with the most multiprocessors
    /// times clock (CUDA before HIP, then the lower ordinal, on a tie);
    /// the CPU when no GPU opens. Why each API or device was passed over
    /// is logged (`tracing`, at info level), and the choice too.
    pub fn best() -> Result<Device, Error> {
        let mut candidates = Self::enumerate();
        candidates.sort_by_key(|d| {
            let clock = u64::from(d.clock_khz.max(1));
            std::cmp::Reverse(u64::from(d.multiprocessors) * clock)
        });
        for info in candidates {
            match Self::gpu(info.api, info.ordinal) {
                Ok(device) => {
                    tracing::info!(device = %info, "Device::best chose a {} device", info.api.name());
                    return Ok(device);
                }
                Err(why) => {
                    tracing::info!(device = %info, reason = %why, "Device::best skipped a device")
                }
            }
        }
        tracing::info!("Device::best chose the CPU");
        Ok(Device::cpu())
    }

    /// What runs `kernel` on this device: its GPU image, its host code at
    /// the best instruction-set level this CPU runs, or the interpreter.
    /// Loads the kernel if it is not loaded yet (as the first launch would).
    pub fn kernel_code(&self, kernel: &KernelSpec) -> Result<KernelCode, Error> {
        let loaded = self
            .modules
            .get_or_load(kernel, || crate::launch::load(self, kernel))?;
        Ok(loaded.code())
    }

    /// The kind of this device.
    pub fn kind(&self) -> DeviceKind {
        self.kind
    }

    /// How many program instances run at once at most, one per processor:
    /// the streaming multiprocessors of a CUDA device, the compute units of
    /// a HIP device, the threads the CPU runs in parallel. A persistent
    /// kernel launches this many programs and loops over its tiles.
    pub fn multiprocessors(&self) -> u32 {
        match &self.gpu {
            Some(context) => context.multiprocessors(),
            None => crate::cpu::parallelism(),
        }
    }

    /// A tensor of `shape` (row-major) holding `data`.
    pub fn tensor_from_slice<T: Element>(
        &self,
        data: &[T],
        shape: &[usize],
    ) -> Result<Tensor<T>, Error> {
        let expected = numel(shape, self)?;
        if data.len() != expected {
            return Err(Error::DataLength {
                shape: shape.to_vec(),
                expected,
                found: data.len(),
                device: self.to_string(),
            });
        }
        // The elements' bytes go straight into the (advised) buffer.
        let mut buffer = self.host_buffer(data.len() * T::DTYPE.size_bytes());
        T::write_le_slice(data, &mut buffer);
        let host = HostTensor::from_buffer(T::DTYPE, shape, buffer)
            .map_err(|e| self.invalid(shape, e.to_string()))?;
        self.place(host)
    }

    /// A tensor of `shape` over the buffer `data`: element `[i, j, ..]` is
    /// `data[offset + i·strides[0] + j·strides[1] + ..]` (strides in
    /// elements, any sign), which must lie in `data` for every index. Such
    /// tensors can be views of column-major or padded buffers; a kernel may
    /// write one only if no two indices reach the same element.
    pub fn tensor_with_strides<T: Element>(
        &self,
        data: &[T],
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<Tensor<T>, Error> {
        numel(shape, self)?;
        let mut buffer = self.host_buffer(data.len() * T::DTYPE.size_bytes());
        T::write_le_slice(data, &mut buffer);
        let host = HostTensor::from_buffer_with_strides(T::DTYPE, shape, strides, offset, buffer)
            .map_err(|e| self.invalid(shape, e.to_string()))?;
        self.place(host)
    }

    /// A tensor over `data` laid out by a validated
    /// [`TensorDescriptor`] (Composable Kernel's lengths and strides, row- or
    /// column-major or explicit; see `tile_tensor::descriptor`): element
    /// `[i, j, ..]` is `data[i·strides[0] + j·strides[1] + ..]`. `data` must
    /// hold the descriptor's element space
    /// ([`TensorDescriptor::element_space_size`]), else
    /// [`Error::DataLength`].
    pub fn tensor_from_descriptor<T: Element>(
        &self,
        data: &[T],
        descriptor: &TensorDescriptor,
    ) -> Result<Tensor<T>, Error> {
        let shape = descriptor.lengths();
        let needed = descriptor.element_space_size();
        if data.len() < needed {
            return Err(Error::DataLength {
                shape: shape.to_vec(),
                expected: needed,
                found: data.len(),
                device: self.to_string(),
            });
        }
        let strides = descriptor
            .strides()
            .iter()
            .map(|&s| isize::try_from(s))
            .collect::<Result<Vec<isize>, _>>()
            .map_err(|e| self.invalid(shape, format!("a stride does not fit an isize: {e}")))?;
        self.tensor_with_strides(&data[..needed], shape, &strides, 0)
    }

    /// A tensor with the shape and elements of an `ndarray` array (in its
    /// logical order, whatever its memory layout).
    #[cfg(feature = "ndarray")]
    pub fn tensor_from_ndarray<T, S, D>(
        &self,
        array: &ndarray::ArrayBase<S, D>,
    ) -> Result<Tensor<T>, Error>
    where
        T: Element + Clone,
        S: ndarray::Data<Elem = T>,
        D: ndarray::Dimension,
    {
        if let Some(data) = array.as_slice() {
            // Standard (row-major, contiguous) layout: no gathering copy.
            return self.tensor_from_slice(data, array.shape());
        }
        let data: Vec<T> = array.iter().cloned().collect();
        self.tensor_from_slice(&data, array.shape())
    }

    /// A tensor of `shape` (row-major) filled with zeros: on a GPU, new
    /// memory zeroed on the device (nothing is copied from the host).
    pub fn zeros<T: Element>(&self, shape: &[usize]) -> Result<Tensor<T>, Error> {
        let bytes = numel(shape, self)?
            .checked_mul(T::DTYPE.size_bytes())
            .ok_or_else(|| self.invalid(shape, "the number of bytes overflows".into()))?;
        if let Some(context) = &self.gpu {
            let tensor = GpuTensor::zeros(context, T::DTYPE, shape)?;
            return Ok(Tensor::new(Storage::Gpu(tensor)));
        }
        let host = HostTensor::from_buffer(T::DTYPE, shape, self.host_buffer(bytes))
            .map_err(|e| self.invalid(shape, e.to_string()))?;
        self.place(host)
    }

    /// A tensor of `shape` (row-major) with every element `value`: on a GPU
    /// new memory filled on the device where a fill writes the value
    /// ([`Tensor::fill`]).
    pub fn full<T: Element>(&self, shape: &[usize], value: T) -> Result<Tensor<T>, Error> {
        let mut tensor = self.empty(shape)?;
        tensor.fill(value)?;
        Ok(tensor)
    }

    /// A tensor of `shape` (row-major) for a kernel to write: on a GPU,
    /// new memory that nothing initializes (its values are whatever the
    /// memory held, until written), so making it costs one allocation; on
    /// the CPU, zeros.
    pub fn empty<T: Element>(&self, shape: &[usize]) -> Result<Tensor<T>, Error> {
        let Some(context) = &self.gpu else {
            return self.zeros(shape);
        };
        let bytes = numel(shape, self)?
            .checked_mul(T::DTYPE.size_bytes())
            .ok_or_else(|| self.invalid(shape, "the number of bytes overflows".into()))?;
        let buffer = crate::gpu::Buffer::new(context, bytes)?;
        let strides = crate::gpu::row_major(shape);
        let tensor = GpuTensor::over(buffer, T::DTYPE, (shape, &strides, 0));
        Ok(Tensor::new(Storage::Gpu(tensor)))
    }

    pub(crate) fn invalid(&self, shape: &[usize], reason: String) -> Error {
        Error::InvalidTensor {
            shape: shape.to_vec(),
            reason,
            device: self.to_string(),
        }
    }
}

/// The number of elements of `shape`, or an error for a shape a kernel
/// cannot take (no axes, or more than `i32::MAX` along an axis).
pub(crate) fn numel(shape: &[usize], device: &Device) -> Result<usize, Error> {
    if shape.is_empty() {
        return Err(device.invalid(shape, "a tensor needs at least one axis".into()));
    }
    if let Some(axis) = shape.iter().position(|&d| d > i32::MAX as usize) {
        return Err(device.invalid(
            shape,
            format!(
                "axis {axis} exceeds the largest extent a kernel indexes, {}",
                i32::MAX
            ),
        ));
    }
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| device.invalid(shape, "the number of elements overflows".into()))
}

/// Devices print as `cpu`, `cuda:0`, `hip:1`.
impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.gpu {
            Some(context) => context.fmt(f),
            None => f.pad("cpu"),
        }
    }
}

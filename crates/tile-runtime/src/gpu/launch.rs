//! Launching a loaded kernel on a GPU stream: residency and grid checks,
//! argument packing, the status record from the stream's slab, and the
//! [`Pending`] record that finishes the launch once its stream is done.

use super::queue::{Queue, Slot};
use super::{Context, GpuTensor};
use crate::device::Device;
use crate::device_print::{deliver, PrintSink};
use crate::driver::GpuApi;
use crate::error::Error;
use crate::kernel::{KernelSpec, LoadedKernel};
use crate::launch::LaunchArg;
use std::sync::Arc;
use tile_abi::device_print;
use tile_abi::params::TensorRecord;
use tile_abi::status::STATUS_BYTES;
use tile_abi::{Packet, Status};
use tile_ir::Function;

/// A queued launch: its status slot (with the print area after it when
/// the kernel prints), and the memory of every tensor it uses, kept alive
/// until the launch is done.
#[derive(Debug)]
pub(crate) struct Pending {
    spec: KernelSpec,
    queue: Arc<Queue>,
    slot: Slot,
    /// The kernel and where its lines go, when it prints.
    prints: Option<(Arc<LoadedKernel>, PrintSink)>,
    _tensors: Vec<Arc<super::Buffer>>,
}

impl Pending {
    /// The launch's outcome; call once its stream is synchronized. The
    /// lines the kernel printed go to the device's sink first, also when
    /// the launch failed. The slot goes back to the stream's slab.
    pub(crate) fn finish(self) -> Result<(), Error> {
        let outcome = self.outcome();
        self.queue.give_back(self.slot);
        outcome
    }

    /// The outcome of the launch's last run (its slot read, then reset for
    /// the next): the lines it printed are delivered, a failed check is
    /// the error.
    pub(crate) fn outcome(&self) -> Result<(), Error> {
        let device = self.queue.context.to_string();
        let bytes = self.slot.read();
        self.slot.reset();
        if let Some((kernel, sink)) = &self.prints {
            let mut lines = Vec::new();
            deliver(
                &kernel.function,
                &bytes[device_print::GPU_AREA_OFFSET as usize..],
                &mut |line| lines.push(line.clone()),
            );
            sink.send(&lines);
        }
        let mut record = [0u8; STATUS_BYTES];
        record.copy_from_slice(&bytes[..STATUS_BYTES]);
        match super::image::status_error(&Status::from_bytes(&record), &self.spec, &device) {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// Gives the slot back unread (the launch will not run again).
    pub(crate) fn release(self) {
        self.queue.give_back(self.slot);
    }
}

/// Where each tensor of an argument lives: `cpu`, or the GPU's name as
/// `cuda:0` (none for a scalar).
fn residence(arg: &LaunchArg<'_>) -> Vec<String> {
    match arg {
        LaunchArg::Tensor(_) | LaunchArg::TensorMut(_) => vec!["cpu".into()],
        LaunchArg::GpuTensor(t) => vec![t.device()],
        LaunchArg::GpuTensorMut(t) => vec![t.device()],
        LaunchArg::Tensors(ts) => ts.iter().flat_map(residence).collect(),
        LaunchArg::Scalar(_) => Vec::new(),
    }
}

/// Whether a tensor argument's memory is `gpu`'s (`None`: the CPU's),
/// compared by identity: the cheap test each launch makes before the
/// names are compared.
fn at_home(arg: &LaunchArg<'_>, gpu: Option<&Arc<Context>>) -> bool {
    let tensor: &GpuTensor = match arg {
        LaunchArg::Scalar(_) => return true,
        LaunchArg::Tensor(_) | LaunchArg::TensorMut(_) => return gpu.is_none(),
        LaunchArg::Tensors(ts) => return ts.iter().all(|t| at_home(t, gpu)),
        LaunchArg::GpuTensor(t) => t,
        LaunchArg::GpuTensorMut(t) => t,
    };
    gpu.is_some_and(|c| Arc::ptr_eq(&tensor.buffer.context, c))
}

/// Checks that every tensor argument lives on `device`: its memory is the
/// device's, or of a device of the same name (two `Device`s of one GPU
/// share its memory).
pub(crate) fn check_residency(
    device: &Device,
    spec: &KernelSpec,
    function: &Function,
    args: &[LaunchArg<'_>],
) -> Result<(), Error> {
    let gpu = device.gpu.as_ref();
    if args.iter().all(|arg| at_home(arg, gpu)) {
        return Ok(());
    }
    let device = device.to_string();
    for (param, arg) in function.params.iter().zip(args) {
        if let Some(home) = residence(arg).into_iter().find(|home| *home != device) {
            return Err(Error::WrongDevice {
                kernel: spec.name.to_string(),
                argument: param.name.clone(),
                tensor_device: home,
                device,
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
    device: &dyn std::fmt::Display,
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

/// Runs `kernel` on `queue` (the device's own) and waits for it; the
/// arguments have been checked against it (count, dtypes, ranks,
/// mutability) and live on this device.
pub(crate) fn launch(
    (queue, sink): (&Arc<Queue>, &PrintSink),
    spec: &KernelSpec,
    kernel: &Arc<LoadedKernel>,
    grid: [u32; 3],
    args: &mut [LaunchArg<'_>],
) -> Result<(), Error> {
    let pending = enqueue((queue, sink), spec, kernel, grid, args)?;
    queue.synchronize()?;
    pending.finish()
}

/// Queues `kernel` on `queue`, as [`launch`] but without waiting: the
/// outcome is the returned record's, once the stream is synchronized. A
/// kernel that prints gets a print area of [`device_print::DEFAULT_CAPACITY`]
/// records after its status record, whose lines go to `sink` when the
/// launch is finished.
pub(crate) fn enqueue(
    (queue, sink): (&Arc<Queue>, &PrintSink),
    spec: &KernelSpec,
    kernel: &Arc<LoadedKernel>,
    grid: [u32; 3],
    args: &mut [LaunchArg<'_>],
) -> Result<Pending, Error> {
    let context: &Arc<Context> = &queue.context;
    let device = || context.to_string();
    let module = kernel.module.as_ref().ok_or_else(|| Error::ModuleLoad {
        kernel: spec.name.to_string(),
        specialization: spec.specialization.to_string(),
        device: device(),
        reason: "the kernel was loaded for another device".into(),
    })?;
    let block = module.block_threads;
    check_grid(context.api(), spec, context.as_ref(), grid, block)?;
    for arg in args.iter_mut() {
        match arg {
            LaunchArg::GpuTensorMut(t) => t.make_unique(queue.raw)?,
            LaunchArg::Tensors(ts) => {
                for element in ts.iter_mut() {
                    if let LaunchArg::GpuTensorMut(t) = element {
                        t.make_unique(queue.raw)?;
                    }
                }
            }
            _ => {}
        }
    }
    let prints = kernel.prints;
    let mut packet = Packet::default();
    let mut tensors = Vec::with_capacity(args.len());
    for (param, arg) in kernel.function.params.iter().zip(args.iter()) {
        let wrong = || Error::WrongDevice {
            kernel: spec.name.to_string(),
            argument: param.name.clone(),
            tensor_device: "cpu".into(),
            device: device(),
        };
        let tensor: &GpuTensor = match arg {
            LaunchArg::GpuTensor(t) => t,
            LaunchArg::GpuTensorMut(t) => t,
            LaunchArg::Scalar(s) => {
                packet.push_scalar(*s);
                continue;
            }
            LaunchArg::Tensors(ts) => {
                let records = records(context, ts).ok_or_else(wrong)??;
                packet.push_tensors(records.pointer, ts.len());
                tensors.push(Arc::new(records));
                tensors.extend(
                    ts.iter()
                        .filter_map(gpu_tensor)
                        .map(|t| Arc::clone(&t.buffer)),
                );
                continue;
            }
            LaunchArg::Tensor(_) | LaunchArg::TensorMut(_) => return Err(wrong()),
        };
        packet.push_tensor(tensor.base(), &tensor.shape, &tensor.strides);
        tensors.push(Arc::clone(&tensor.buffer));
    }
    let slot = queue.take(prints)?;
    packet.push_pointer(slot.device);
    for &(param, rows) in &module.maps {
        match tensor_map(spec, kernel, (args, param, rows), &device()) {
            Ok(map) => packet.push_tensor_map(map),
            Err(e) => {
                queue.give_back(slot);
                return Err(e);
            }
        }
    }
    // SAFETY: the packet was built from the kernel's own parameters
    // (checked against its signature when loaded); every tensor address
    // is a live buffer of this device covering the tensor's reachable
    // elements (validated when the tensor was made), and a tensor array's
    // address a buffer holding one record per tensor of it, its count
    // beside it, all kept alive by the returned record until the stream
    // has run the launch; the status slot
    // stays in the stream's slab until the record is finished.
    let launched = unsafe {
        context
            .backend
            .launch(&module.function, grid, block, &mut packet, queue.raw)
    };
    if let Err(e) = launched {
        queue.give_back(slot);
        return Err(e);
    }
    Ok(Pending {
        spec: *spec,
        queue: Arc::clone(queue),
        slot,
        prints: prints.then(|| (Arc::clone(kernel), sink.clone())),
        _tensors: tensors,
    })
}

/// The GPU tensor of a tensor argument, if it is one.
fn gpu_tensor<'x>(arg: &'x LaunchArg<'_>) -> Option<&'x GpuTensor> {
    match arg {
        LaunchArg::GpuTensor(t) => Some(t),
        LaunchArg::GpuTensorMut(t) => Some(t),
        _ => None,
    }
}

/// The records of a tensor array's tensors (`tile_abi::params::TensorRecord`)
/// in new device memory, or `None` if one of them is not in GPU memory.
/// Each launch with an array uploads its records (one allocation and one
/// copy the device's own stream waits for).
fn records(
    context: &Arc<Context>,
    tensors: &[LaunchArg<'_>],
) -> Option<Result<super::Buffer, Error>> {
    let mut bytes = Vec::new();
    for t in tensors {
        let t = gpu_tensor(t)?;
        bytes.extend(TensorRecord::encode(t.base(), &t.shape, &t.strides));
    }
    Some(super::Buffer::upload(context, &bytes))
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
    let mismatch = |found: String| {
        Error::ArgumentMismatch {
        kernel: spec.name.to_string(),
        argument: argument.clone(),
        device: device.to_string(),
        expected:
            "a tensor the TMA can copy from (the kernel's image for this device takes a tensor map of it)"
                .into(),
        found,
    }
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
    super::tensor_map::encode(&map).map_err(|e| mismatch(format!("{layout}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_beyond_the_driver_limits_are_refused_before_launch() {
        // SAFETY: never launched; only its name is read.
        let spec = unsafe { KernelSpec::new("k", "default", "", 4, &[], &[], &[]) };
        let ok = |api, grid| check_grid(api, &spec, &"gpu:0", grid, 128).is_ok();
        assert!(ok(GpuApi::Cuda, [i32::MAX as u32, 65_535, 65_535]));
        assert!(!ok(GpuApi::Cuda, [i32::MAX as u32 + 1, 1, 1]));
        assert!(!ok(GpuApi::Cuda, [1, 65_536, 1]));
        assert!(!ok(GpuApi::Hip, [1, 1, 70_000]));
        // 2^25 blocks of 128 work-items overflow HIP's 32-bit grid size.
        assert!(ok(GpuApi::Hip, [(1 << 25) - 1, 1, 1]));
        assert!(!ok(GpuApi::Hip, [1 << 25, 1, 1]));
        let error = check_grid(GpuApi::Cuda, &spec, &"cuda:0", [1, 1 << 20, 1], 128).unwrap_err();
        assert_eq!(
            error.to_string(),
            "kernel `k`: the grid [1, 1048576, 1] exceeds what device cuda:0 launches, at most [2147483647, 65535, 65535] blocks"
        );
    }
}

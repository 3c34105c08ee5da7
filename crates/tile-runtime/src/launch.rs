//! Launching a kernel: argument checking against the kernel's parameters,
//! then execution on the device.

use crate::arrays;
use crate::cpu::{HostIsa, HostLibrary};
use crate::device::{Device, DeviceKind};
use crate::error::Error;
use crate::gpu::{self, GpuTensor};
use crate::grid_axes;
use crate::kernel::{ImageKind, KernelSpec, LoadedKernel};
use crate::stream::Stream;
use crate::tensor::{Storage, Tensor};
use std::sync::Arc;
use tile_ir::interp::{self, Arg, Element, HostTensor};
use tile_ir::types::ALIGNED_TENSOR;
use tile_ir::{Function, OpKind, Scalar, Type};

/// One argument of a launch.
#[derive(Debug)]
pub enum LaunchArg<'a> {
    /// A tensor the kernel only reads.
    Tensor(&'a HostTensor),
    /// A tensor the kernel may write.
    TensorMut(&'a mut HostTensor),
    /// A scalar.
    Scalar(Scalar),
    /// A tensor in GPU memory the kernel only reads.
    GpuTensor(&'a GpuTensor),
    /// A tensor in GPU memory the kernel may write.
    GpuTensorMut(&'a mut GpuTensor),
    /// A tensor array: its tensors in index order, each a tensor argument
    /// (`Tensor`, `GpuTensor`; `TensorMut`, `GpuTensorMut` where the kernel
    /// may write them).
    Tensors(Vec<LaunchArg<'a>>),
}

impl LaunchArg<'_> {
    /// A scalar argument.
    pub fn scalar<T: Element>(value: T) -> LaunchArg<'static> {
        LaunchArg::Scalar(value.to_scalar())
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            LaunchArg::Tensor(t) => format!("&tensor<{}, {}>", t.dtype(), t.shape().len()),
            LaunchArg::TensorMut(t) => format!("&mut tensor<{}, {}>", t.dtype(), t.shape().len()),
            LaunchArg::Scalar(s) => s.dtype().to_string(),
            LaunchArg::GpuTensor(t) => format!("&tensor<{}, {}>", t.dtype(), t.shape().len()),
            LaunchArg::GpuTensorMut(t) => {
                format!("&mut tensor<{}, {}>", t.dtype(), t.shape().len())
            }
            LaunchArg::Tensors(ts) => {
                let each: Vec<String> = ts.iter().map(LaunchArg::describe).collect();
                format!("[{}]", each.join(", "))
            }
        }
    }
}

/// An interpreter argument as a launch argument, every tensor mutable (as
/// the interpreter takes them).
impl<'a> From<&'a mut Arg> for LaunchArg<'a> {
    fn from(arg: &'a mut Arg) -> Self {
        match arg {
            Arg::Tensor(t) => LaunchArg::TensorMut(t),
            Arg::Tensors(ts) => {
                LaunchArg::Tensors(ts.iter_mut().map(LaunchArg::TensorMut).collect())
            }
            Arg::Scalar(s) => LaunchArg::Scalar(*s),
        }
    }
}

/// A tensor array the kernel only reads.
impl<'a, T: Element> From<&'a [Tensor<T>]> for LaunchArg<'a> {
    fn from(tensors: &'a [Tensor<T>]) -> Self {
        LaunchArg::Tensors(tensors.iter().map(LaunchArg::from).collect())
    }
}

/// A tensor array the kernel may write.
impl<'a, T: Element> From<&'a mut [Tensor<T>]> for LaunchArg<'a> {
    fn from(tensors: &'a mut [Tensor<T>]) -> Self {
        LaunchArg::Tensors(tensors.iter_mut().map(LaunchArg::from).collect())
    }
}

impl<'a, T: Element> From<&'a Tensor<T>> for LaunchArg<'a> {
    fn from(tensor: &'a Tensor<T>) -> Self {
        match &tensor.storage {
            Storage::Host(host) => LaunchArg::Tensor(host),
            Storage::Gpu(gpu) => LaunchArg::GpuTensor(gpu),
        }
    }
}

impl<'a, T: Element> From<&'a mut Tensor<T>> for LaunchArg<'a> {
    fn from(tensor: &'a mut Tensor<T>) -> Self {
        match &mut tensor.storage {
            Storage::Host(host) => LaunchArg::TensorMut(host),
            Storage::Gpu(gpu) => LaunchArg::GpuTensorMut(gpu),
        }
    }
}

/// Runs `kernel` over `grid` on `device` with `args`, and waits for it.
///
/// The arguments are checked against the kernel's parameters first: their
/// number, each scalar's dtype, each tensor's dtype and rank, that every
/// tensor the kernel writes is passed mutably, and that every tensor the
/// kernel promises aligned (`aligned(...)`) is. Nothing runs unless all match.
/// A grid with several programs along an axis whose `program_id` the
/// kernel never reads is refused ([`Error::UnreadGridAxis`]): those
/// programs would repeat each other's work. A grid with an axis of extent
/// zero has no programs: once the arguments are checked, the launch
/// succeeds without running anything (as Triton's does; the CUDA and HIP
/// drivers would refuse it).
pub fn launch(
    device: &Device,
    kernel: &KernelSpec,
    grid: [u32; 3],
    args: &mut [LaunchArg<'_>],
) -> Result<(), Error> {
    let loaded = prepare(device, kernel, args)?;
    grid_axes::check(kernel.name, loaded.grid_axes, grid)?;
    if grid.contains(&0) {
        return Ok(());
    }
    match &device.queue {
        Some(queue) => gpu::launch((queue, &device.prints), kernel, &loaded, grid, args),
        None => run_on_cpu(device, kernel, &loaded, grid, args),
    }
}

/// Queues `kernel` over `grid` on `stream` with `args`: checked as
/// [`launch`] checks them, then, on a GPU, queued without waiting (the
/// device's verdict comes from [`Stream::synchronize`]); on the CPU it runs
/// before this returns. An empty grid queues nothing, as in [`launch`].
/// After a launch on the stream has failed while running, nothing more is
/// queued ([`Error::StreamFailed`]; see [`Stream`]).
pub fn launch_on(
    stream: &Stream,
    kernel: &KernelSpec,
    grid: [u32; 3],
    args: &mut [LaunchArg<'_>],
) -> Result<(), Error> {
    stream.usable(|| format!("kernel `{}` not launched", kernel.name))?;
    let device = stream.device();
    let loaded = prepare(device, kernel, args)?;
    grid_axes::check(kernel.name, loaded.grid_axes, grid)?;
    if grid.contains(&0) {
        return Ok(());
    }
    match stream.queue() {
        Some(queue) => {
            let sink = (queue, &device.prints);
            stream.push(gpu::enqueue(sink, kernel, &loaded, grid, args)?);
            Ok(())
        }
        None => stream.record_outcome(run_on_cpu(device, kernel, &loaded, grid, args)),
    }
}

/// Loads `kernel` on `device` (once) and checks a launch of it: the
/// arguments against its parameters, and their residence.
fn prepare(
    device: &Device,
    kernel: &KernelSpec,
    args: &[LaunchArg<'_>],
) -> Result<Arc<LoadedKernel>, Error> {
    let loaded = device
        .modules
        .get_or_load(kernel, || load(device, kernel))?;
    check_args(device, kernel, &loaded, args)?;
    gpu::check_residency(device, kernel, &loaded.function, args)?;
    Ok(loaded)
}

/// Runs a checked launch on the CPU: its host code, or the interpreter.
fn run_on_cpu(
    device: &Device,
    kernel: &KernelSpec,
    loaded: &LoadedKernel,
    grid: [u32; 3],
    args: &mut [LaunchArg<'_>],
) -> Result<(), Error> {
    match &loaded.host {
        Some(host) => {
            let mut lines = Vec::new();
            let run = host.run_printing(grid, args, &mut |line| lines.push(line.clone()));
            device.prints.send(&lines);
            run
        }
        .map_err(|e| Error::Execution {
            kernel: kernel.name.to_string(),
            device: device.to_string(),
            source: Box::new(e),
        }),
        None => run_interpreted(device, kernel, &loaded.function, grid, args),
    }
}

/// Loads `spec` on `device` (once: the device's module cache keeps it).
pub(crate) fn load(device: &Device, spec: &KernelSpec) -> Result<LoadedKernel, Error> {
    let error = |reason: String| Error::ModuleLoad {
        kernel: spec.name.to_string(),
        specialization: spec.specialization.to_string(),
        device: device.to_string(),
        reason,
    };
    let function = tile_ir::text::parse_function(spec.ir).map_err(|e| error(e.to_string()))?;
    tile_ir::verify::verify(&function).map_err(|e| error(e.to_string()))?;
    let writes = written_params(&function);
    let grid_axes = grid_axes::axes_read(&function);
    let prints = tile_ir::device_print::prints(&function);
    let host = match device.kind() {
        DeviceKind::Cpu => load_host_code(spec, &function).map_err(error)?,
        DeviceKind::Cuda | DeviceKind::Hip => None,
    };
    let module = match &device.gpu {
        Some(context) => Some(gpu::load(context, spec, &function)?),
        None => None,
    };
    Ok(LoadedKernel {
        function,
        writes,
        grid_axes,
        prints,
        host,
        module,
    })
}

/// The host code of `spec` at the best instruction-set level this CPU runs,
/// loaded; `None` when the spec has no such image (the CPU device then
/// interprets the kernel, and says so at debug level).
fn load_host_code(spec: &KernelSpec, function: &Function) -> Result<Option<HostLibrary>, String> {
    let image = HostIsa::ALL.into_iter().find_map(|isa| {
        spec.images
            .iter()
            .find(|image| image.kind == ImageKind::Host && image.target == isa.name())
            .filter(|_| isa.runs_here())
            .map(|image| (isa, image))
    });
    let Some((isa, image)) = image else {
        tracing::debug!(
            kernel = spec.name,
            specialization = spec.specialization,
            "no host code this CPU runs: the CPU device interprets the kernel"
        );
        return Ok(None);
    };
    // SAFETY: a `KernelSpec`'s images are trusted as the compiled code of
    // its IR (see `KernelSpec`): `#[tile_kernel]` compiles the host image
    // from exactly `spec.ir` with `tile_codegen::host::compile`, and
    // `spec.host_checks` is that compilation's list of checks.
    let library = unsafe {
        HostLibrary::load(
            image.bytes,
            isa,
            function.clone(),
            spec.host_checks.to_vec(),
        )
    }
    .map_err(|e| e.to_string())?;
    Ok(Some(library))
}

/// Per parameter: whether some store goes through a view of it (a partition
/// view or a layout view derived from it).
pub(crate) fn written_params(func: &Function) -> Vec<bool> {
    let mut writes = vec![false; func.params.len()];
    func.walk(&mut |op| {
        let op = func.op(op);
        if !op.kind.writes_memory() {
            return;
        }
        // An atomic's tensor is its operand 0; every store's view is its
        // operand 1.
        let param = match op.kind {
            OpKind::Atomic { .. } => op
                .operands
                .first()
                .and_then(|&t| tile_ir::lview::tensor_param(func, t)),
            _ => op
                .operands
                .get(1)
                .and_then(|&v| tile_ir::lview::viewed_param(func, v)),
        };
        if let Some(index) = param {
            writes[index] = true;
        }
    });
    writes
}

fn check_args(
    device: &Device,
    spec: &KernelSpec,
    kernel: &LoadedKernel,
    args: &[LaunchArg<'_>],
) -> Result<(), Error> {
    let params = &kernel.function.params;
    if args.len() != params.len() {
        let list = params
            .iter()
            .map(|p| format!("{}: {}", p.name, kernel.function.ty(p.value)))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(Error::ArgumentCount {
            kernel: spec.name.to_string(),
            expected: params.len(),
            params: list,
            found: args.len(),
        });
    }
    for ((param, arg), &written) in params.iter().zip(args).zip(&kernel.writes) {
        let ty = kernel.function.ty(param.value);
        let matches = arg_matches(ty, arg, written);
        let (element, t) = match ty {
            Type::Tensor(t) => (None, t),
            Type::Tensors(t) => (Some(()), t),
            _ => (None, &tile_ir::TensorType::new(ty.dtype(), 0)),
        };
        for (k, (shape, strides, offset)) in placements(arg).into_iter().enumerate() {
            let which = match element {
                Some(()) => format!("tensor {k} of "),
                None => String::new(),
            };
            let mismatch = |reason: String| Error::ArgumentMismatch {
                kernel: spec.name.to_string(),
                argument: param.name.clone(),
                device: device.to_string(),
                expected: format!("{} ({ALIGNED_TENSOR})", Type::Tensor(*t)),
                found: format!("{which}shape {shape:?} and strides {strides:?}: {reason}"),
            };
            if let Some(reason) = t.misalignment(shape, strides, offset).filter(|_| matches) {
                return Err(mismatch(reason));
            }
            // A written tensor that matches was passed `&mut`.
            if let Some(reason) = overlap(shape, strides).filter(|_| matches && written) {
                return Err(Error::OverlappingOutput {
                    kernel: spec.name.to_string(),
                    argument: param.name.clone(),
                    overlap: format!(
                        "{which}shape {shape:?} with strides {strides:?} overlaps itself: {reason}"
                    ),
                    device: device.to_string(),
                });
            }
        }
        if !matches {
            let expected = match ty {
                Type::Tensor(_) | Type::Tensors(_) if written => {
                    format!("&mut {ty} (the kernel writes it)")
                }
                Type::Tensor(_) | Type::Tensors(_) => format!("&{ty} or &mut {ty}"),
                other => other.to_string(),
            };
            return Err(Error::ArgumentMismatch {
                kernel: spec.name.to_string(),
                argument: param.name.clone(),
                device: device.to_string(),
                expected,
                found: arg.describe(),
            });
        }
    }
    Ok(())
}

/// Whether `arg` is of type `ty`: a scalar of its dtype, a tensor of its
/// dtype and rank (passed mutably where the kernel writes it), or a tensor
/// array of at most `i32::MAX` such tensors.
fn arg_matches(ty: &Type, arg: &LaunchArg<'_>, written: bool) -> bool {
    let tensor = |t: &tile_ir::TensorType, dtype: tile_ir::DType, shape: &[usize]| {
        dtype == t.dtype && shape.len() == t.rank
    };
    match (ty, arg) {
        (Type::Scalar(d), LaunchArg::Scalar(s)) => s.dtype() == *d,
        (Type::Tensor(t), LaunchArg::TensorMut(h)) => tensor(t, h.dtype(), h.shape()),
        (Type::Tensor(t), LaunchArg::Tensor(h)) => !written && tensor(t, h.dtype(), h.shape()),
        (Type::Tensor(t), LaunchArg::GpuTensorMut(g)) => tensor(t, g.dtype(), g.shape()),
        (Type::Tensor(t), LaunchArg::GpuTensor(g)) => !written && tensor(t, g.dtype(), g.shape()),
        (Type::Tensors(t), LaunchArg::Tensors(ts)) => {
            arrays::count_fits(ts.len())
                && ts
                    .iter()
                    .all(|e| arg_matches(&Type::Tensor(*t), e, written))
        }
        _ => false,
    }
}

/// Where each tensor of `arg` lies: shape, strides and the buffer offset of
/// its element zero (none for a scalar).
fn placements<'a>(arg: &'a LaunchArg<'_>) -> Vec<(&'a [usize], &'a [isize], usize)> {
    match arg {
        LaunchArg::Tensor(h) => vec![(h.shape(), h.strides(), h.offset())],
        LaunchArg::TensorMut(h) => vec![(h.shape(), h.strides(), h.offset())],
        LaunchArg::GpuTensor(g) => vec![(g.shape(), g.strides(), g.offset())],
        LaunchArg::GpuTensorMut(g) => vec![(g.shape(), g.strides(), g.offset())],
        LaunchArg::Tensors(ts) => ts.iter().flat_map(placements).collect(),
        LaunchArg::Scalar(_) => Vec::new(),
    }
}

/// Why a tensor of `shape` and `strides` may reach one element through two
/// indices, if it may: a written tensor must not (on a GPU the two writes
/// would race). Sorted by stride, every axis of extent above 1 must step
/// past everything the smaller axes reach — a sufficient condition, so a
/// few exotic non-overlapping layouts are refused too.
pub(crate) fn overlap(shape: &[usize], strides: &[isize]) -> Option<String> {
    if shape.contains(&0) {
        return None;
    }
    let mut axes: Vec<(usize, usize, usize)> = shape
        .iter()
        .zip(strides)
        .enumerate()
        .filter(|(_, (&e, _))| e > 1)
        .map(|(axis, (&e, &s))| (axis, e, s.unsigned_abs()))
        .collect();
    axes.sort_by_key(|&(_, _, s)| s);
    let mut reach = 1usize;
    for (axis, extent, stride) in axes {
        if stride < reach {
            return Some(format!(
                "axis {axis} (extent {extent}, stride {stride}) steps by less than the {reach} element(s) the smaller axes span"
            ));
        }
        reach = reach.saturating_add((extent - 1).saturating_mul(stride));
    }
    None
}

fn run_interpreted(
    device: &Device,
    spec: &KernelSpec,
    func: &Function,
    grid: [u32; 3],
    args: &mut [LaunchArg<'_>],
) -> Result<(), Error> {
    let mut interp_args = Vec::with_capacity(args.len());
    for (arg, param) in args.iter().zip(&func.params) {
        let wrong = |tensor_device: String| Error::WrongDevice {
            kernel: spec.name.to_string(),
            argument: param.name.clone(),
            tensor_device,
            device: device.to_string(),
        };
        interp_args.push(interpreter_arg(arg).map_err(wrong)?);
    }
    let mut lines = Vec::new();
    let options = interp::Options::default();
    let run = interp::run_printing(func, grid, &mut interp_args, &options, &mut |line| {
        lines.push(line)
    });
    device.prints.send(&lines);
    run.map_err(|e| Error::Execution {
        kernel: spec.name.to_string(),
        device: device.to_string(),
        source: Box::new(e),
    })?;
    for (arg, result) in args.iter_mut().zip(interp_args) {
        write_back(arg, result);
    }
    Ok(())
}

/// `arg` as the interpreter takes it (a copy of each host tensor), or the
/// device of a tensor the interpreter cannot read (`gpu::check_residency`
/// refuses those before any run).
fn interpreter_arg(arg: &LaunchArg<'_>) -> Result<Arg, String> {
    Ok(match arg {
        LaunchArg::Tensor(t) => Arg::Tensor((*t).clone()),
        LaunchArg::TensorMut(t) => Arg::Tensor((**t).clone()),
        LaunchArg::Scalar(s) => Arg::Scalar(*s),
        LaunchArg::GpuTensor(t) => return Err(t.device()),
        LaunchArg::GpuTensorMut(t) => return Err(t.device()),
        LaunchArg::Tensors(ts) => {
            let mut tensors = Vec::with_capacity(ts.len());
            for t in ts {
                match interpreter_arg(t)? {
                    Arg::Tensor(t) => tensors.push(t),
                    _ => return Err("no tensor".into()),
                }
            }
            Arg::Tensors(tensors)
        }
    })
}

/// Copies what the interpreter wrote into the tensors `arg` passes mutably,
/// into each tensor's own buffer (same layout), which keeps the device's
/// huge-page advice.
fn write_back(arg: &mut LaunchArg<'_>, result: Arg) {
    match (arg, result) {
        (LaunchArg::TensorMut(target), Arg::Tensor(written)) => {
            target.data_mut().copy_from_slice(written.data());
        }
        (LaunchArg::Tensors(targets), Arg::Tensors(written)) => {
            for (target, written) in targets.iter_mut().zip(written) {
                write_back(target, Arg::Tensor(written));
            }
        }
        _ => {}
    }
}

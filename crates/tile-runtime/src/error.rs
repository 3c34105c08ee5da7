//! The runtime's errors: every failure of device selection, tensor creation
//! and launch, as a value naming what went wrong and where.

/// An error of the runtime.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The GPU driver library of an API could not be loaded (or lacks an
    /// entry point).
    #[error("no {api} driver: none of {tried} could be loaded ({reason})")]
    NoDriver {
        /// `CUDA` or `HIP`.
        api: &'static str,
        /// The libraries tried.
        tried: String,
        /// What the loader said.
        reason: String,
    },
    /// The driver loaded but has no device of that ordinal.
    #[error("no {api} device {ordinal}: the driver reports {available} device(s)")]
    NoDevice {
        /// `CUDA` or `HIP`.
        api: &'static str,
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices the driver reports.
        available: usize,
    },
    /// A driver call failed.
    #[error("{api} driver call failed while {call}: {name} ({code})")]
    DriverCall {
        /// `CUDA` or `HIP`.
        api: &'static str,
        /// What was being done.
        call: String,
        /// The driver's status code.
        code: i32,
        /// The code's symbolic name, e.g. `CUDA_ERROR_ILLEGAL_ADDRESS`.
        name: &'static str,
    },
    /// A driver call succeeded but what it returned cannot be used (e.g. a
    /// device's architecture name that is not NUL-terminated text).
    #[error("{api} driver call {call} for device {device} returned an unusable {reply}: {reason}")]
    DriverReply {
        /// `CUDA` or `HIP`.
        api: &'static str,
        /// The entry point called, e.g. `hipGetDevicePropertiesR0600`.
        call: String,
        /// The device, as `hip:0`.
        device: String,
        /// What it returned, e.g. `gcnArchName`.
        reply: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A tensor was created from data whose length does not match its shape.
    #[error(
        "tensor of shape {shape:?} needs {expected} elements, found {found} (device {device})"
    )]
    DataLength {
        /// The requested shape.
        shape: Vec<usize>,
        /// The number of elements the shape holds.
        expected: usize,
        /// The number of elements given.
        found: usize,
        /// The device.
        device: String,
    },
    /// A tensor could not be described (e.g. a zero-rank or overflowing shape).
    #[error("invalid tensor of shape {shape:?} on device {device}: {reason}")]
    InvalidTensor {
        /// The requested shape.
        shape: Vec<usize>,
        /// What is wrong with it.
        reason: String,
        /// The device.
        device: String,
    },
    /// The kernel has no device image for this GPU.
    #[error("kernel `{kernel}` has no image for device {device} ({wanted}); compiled targets: {compiled}")]
    NoImage {
        /// The kernel's name.
        kernel: String,
        /// The device.
        device: String,
        /// What the device runs: `compute capability 8.6`, `architecture gfx90a`.
        wanted: String,
        /// The targets the kernel was compiled for, comma-separated (or `none`).
        compiled: String,
    },
    /// The kernel's embedded IR did not parse or verify, or the driver did
    /// not load its device image (the reason carries the JIT's error log).
    #[error(
        "kernel `{kernel}` ({specialization}) could not be loaded on device {device}: {reason}"
    )]
    ModuleLoad {
        /// The kernel's name.
        kernel: String,
        /// The specialization.
        specialization: String,
        /// The device.
        device: String,
        /// The parser's, verifier's or driver's message.
        reason: String,
    },
    /// The launch was given the wrong number of arguments.
    #[error("kernel `{kernel}` takes {expected} arguments ({params}), found {found}")]
    ArgumentCount {
        /// The kernel's name.
        kernel: String,
        /// The number of parameters.
        expected: usize,
        /// The parameters, as `name: type`.
        params: String,
        /// The number of arguments given.
        found: usize,
    },
    /// An argument does not match its parameter.
    #[error("kernel `{kernel}`, argument `{argument}` on device {device}: expected {expected}, found {found}")]
    ArgumentMismatch {
        /// The kernel's name.
        kernel: String,
        /// The parameter's name.
        argument: String,
        /// The device.
        device: String,
        /// What the parameter takes.
        expected: String,
        /// What was passed.
        found: String,
    },
    /// A tensor the kernel writes has a layout that reaches one element
    /// through two indices.
    #[error("kernel `{kernel}`, argument `{argument}` on device {device}: the kernel writes this tensor, but its {overlap}")]
    OverlappingOutput {
        /// The kernel's name.
        kernel: String,
        /// The parameter's name.
        argument: String,
        /// The tensor's layout and why it overlaps, as `shape [4, 3] with
        /// strides [2, 1] overlaps itself: axis 0 ...`.
        overlap: String,
        /// The device.
        device: String,
    },
    /// A tensor argument lives on another device than the launch's.
    #[error("kernel `{kernel}`, argument `{argument}`: the tensor lives on {tensor_device}, the launch is on {device}")]
    WrongDevice {
        /// The kernel's name.
        kernel: String,
        /// The parameter's name.
        argument: String,
        /// Where the tensor lives.
        tensor_device: String,
        /// The launch's device.
        device: String,
    },
    /// The grid has several programs along an axis whose index the kernel
    /// never reads: they would all do the same work, racing on every store.
    #[error(transparent)]
    UnreadGridAxis(#[from] crate::grid_axes::UnreadGridAxis),
    /// The grid has more blocks along an axis than the device launches.
    #[error("kernel `{kernel}`: the grid {grid:?} exceeds what device {device} launches, at most {limit:?} blocks")]
    GridTooLarge {
        /// The kernel's name.
        kernel: String,
        /// The device.
        device: String,
        /// The grid given.
        grid: [u32; 3],
        /// The most blocks per axis.
        limit: [u64; 3],
    },
    /// The kernel failed while running: an out-of-bounds access, a partition
    /// index outside the view, or another runtime check.
    #[error("kernel `{kernel}` failed on device {device}: {source}")]
    Execution {
        /// The kernel's name.
        kernel: String,
        /// The device.
        device: String,
        /// What the executor reported: the interpreter's
        /// `tile_ir::interp::InterpError` or compiled host code's
        /// [`crate::cpu::RunError`].
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A launch on a stream on which an earlier launch failed while
    /// running: like a GPU context after a device-side assertion, the
    /// stream runs nothing more (create a new one).
    #[error("{refused} on device {device}: an earlier launch on this stream failed ({first}); the stream runs nothing more, create a new one")]
    StreamFailed {
        /// What was refused: ``kernel `k` not launched``, or `synchronize`.
        refused: String,
        /// The device.
        device: String,
        /// The first failure on the stream, as its error wrote it.
        first: String,
    },
    /// Two things that must be of one device are not (two events timed
    /// against each other, a stream waiting for another's event).
    #[error("{what}: {first} and {second} are different devices")]
    DeviceMismatch {
        /// What was asked.
        what: String,
        /// The device of the first.
        first: String,
        /// The device of the second.
        second: String,
    },
    /// What was asked is not something the device does (capturing a graph
    /// on the CPU).
    #[error("{what} is not supported on device {device}")]
    Unsupported {
        /// What was asked.
        what: String,
        /// The device.
        device: String,
    },
    /// The autotuner could not choose: no candidates, candidates whose
    /// outputs disagree, or its choices could not be cleared.
    #[error("autotuning: {0}")]
    Autotune(String),
    /// A run-time check of a GPU kernel failed: the status record came back
    /// with a non-zero code.
    #[error("kernel `{kernel}` failed on device {device}: program ({}, {}, {}): check {check}: {op}: {fault}", program[0], program[1], program[2])]
    DeviceCheck {
        /// The kernel's name.
        kernel: String,
        /// The device.
        device: String,
        /// The program instance (block) that failed first.
        program: [u32; 3],
        /// The check's position in the kernel's list of checks.
        check: u32,
        /// The tile-IR op of the check, as `tile_ir::ValueNames::describe_site`
        /// writes it: where it is in the kernel's source, the tensors it
        /// touches, its text.
        op: String,
        /// What failed, from the record's code and values.
        fault: String,
    },
}

impl Error {
    /// The [`Error::DriverCall`] of `api`'s status `code` while `call`,
    /// with the code's symbolic name.
    pub(crate) fn driver_call(api: crate::driver::GpuApi, call: &str, code: i32) -> Error {
        Error::DriverCall {
            api: api.name(),
            call: call.to_string(),
            code,
            name: crate::driver_names::name(api, code),
        }
    }
}

//! A generated case's arguments on a GPU: each tensor's (and each tensor
//! of an array's) whole buffer
//! copied to the device with its layout kept (shape, strides of any sign,
//! offset, the gaps between elements holding their bytes), launched as
//! `&mut` (a kernel may write any of them; the runtime checks a written
//! one for overlap), and read back in logical order.

use tile::ir::f8::{F8E4M3, F8E5M2};
use tile::ir::interp::{Arg, Element, HostTensor};
use tile::ir::DType;
use tile::runtime::LaunchArg;
use tile::{Device, Error, Tensor};

/// A tensor of some element type on a device.
trait DeviceTensor {
    /// The tensor as a launch argument the kernel may write.
    fn launch_arg(&mut self) -> LaunchArg<'_>;
    /// Its elements, read back, as a row-major host tensor.
    fn read_back(&self) -> Result<HostTensor, String>;
}

impl<T: Element> DeviceTensor for Tensor<T> {
    fn launch_arg(&mut self) -> LaunchArg<'_> {
        LaunchArg::from(self)
    }

    fn read_back(&self) -> Result<HostTensor, String> {
        let values = self.to_vec().map_err(|e| format!("reading back: {e}"))?;
        HostTensor::from_vec(self.shape(), values).map_err(|e| format!("reading back: {e}"))
    }
}

/// One argument on the device.
enum DeviceArg {
    Scalar(tile::ir::Scalar),
    Tensor(Box<dyn DeviceTensor>),
    Tensors(Vec<Box<dyn DeviceTensor>>),
}

/// A case's arguments on a device.
pub struct DeviceArgs(Vec<DeviceArg>);

impl DeviceArgs {
    /// `args` copied to `dev`.
    pub fn upload(dev: &Device, args: &[Arg]) -> Result<DeviceArgs, String> {
        let args = args
            .iter()
            .enumerate()
            .map(|(i, arg)| match arg {
                Arg::Scalar(s) => Ok(DeviceArg::Scalar(*s)),
                Arg::Tensor(t) => upload_any(dev, t)
                    .map(DeviceArg::Tensor)
                    .map_err(|e| format!("argument {i}: {e}")),
                Arg::Tensors(ts) => ts
                    .iter()
                    .map(|t| upload_any(dev, t))
                    .collect::<Result<_, _>>()
                    .map(DeviceArg::Tensors)
                    .map_err(|e| format!("argument {i}: {e}")),
            })
            .collect::<Result<_, String>>()?;
        Ok(DeviceArgs(args))
    }

    /// The arguments of a launch.
    pub fn launch_args(&mut self) -> Vec<LaunchArg<'_>> {
        self.0
            .iter_mut()
            .map(|arg| match arg {
                DeviceArg::Scalar(s) => LaunchArg::Scalar(*s),
                DeviceArg::Tensor(t) => t.launch_arg(),
                DeviceArg::Tensors(ts) => {
                    LaunchArg::Tensors(ts.iter_mut().map(|t| t.launch_arg()).collect())
                }
            })
            .collect()
    }

    /// The arguments read back: scalars as they were, tensors row-major.
    pub fn read_back(&self) -> Result<Vec<Arg>, String> {
        self.0
            .iter()
            .enumerate()
            .map(|(i, arg)| match arg {
                DeviceArg::Scalar(s) => Ok(Arg::Scalar(*s)),
                DeviceArg::Tensor(t) => t
                    .read_back()
                    .map(Arg::Tensor)
                    .map_err(|e| format!("argument {i}: {e}")),
                DeviceArg::Tensors(ts) => ts
                    .iter()
                    .map(|t| t.read_back())
                    .collect::<Result<_, _>>()
                    .map(Arg::Tensors)
                    .map_err(|e| format!("argument {i}: {e}")),
            })
            .collect()
    }
}

/// `host` on `dev`, as a tensor of its element type.
fn upload_any(dev: &Device, host: &HostTensor) -> Result<Box<dyn DeviceTensor>, String> {
    match host.dtype() {
        DType::Bool => upload::<bool>(dev, host),
        DType::I8 => upload::<i8>(dev, host),
        DType::I16 => upload::<i16>(dev, host),
        DType::I32 => upload::<i32>(dev, host),
        DType::I64 => upload::<i64>(dev, host),
        DType::U8 => upload::<u8>(dev, host),
        DType::U16 => upload::<u16>(dev, host),
        DType::U32 => upload::<u32>(dev, host),
        DType::U64 => upload::<u64>(dev, host),
        DType::F16 => upload::<tile::f16>(dev, host),
        DType::BF16 => upload::<tile::bf16>(dev, host),
        DType::F32 => upload::<f32>(dev, host),
        DType::F64 => upload::<f64>(dev, host),
        DType::F8E4M3 => upload::<F8E4M3>(dev, host),
        DType::F8E5M2 => upload::<F8E5M2>(dev, host),
        DType::F4E2M1 => upload::<tile::f4e2m1>(dev, host),
        DType::F6E2M3 => upload::<tile::f6e2m3>(dev, host),
        DType::F6E3M2 => upload::<tile::f6e3m2>(dev, host),
        DType::F8E8M0 => upload::<tile::f8e8m0>(dev, host),
    }
}

/// `host`'s whole buffer on `dev` with `host`'s layout.
fn upload<T: Element + 'static>(
    dev: &Device,
    host: &HostTensor,
) -> Result<Box<dyn DeviceTensor>, String> {
    let size = host.dtype().size_bytes();
    let elements = host.data().len() / size;
    let buffer = HostTensor::with_strides(host.dtype(), &[elements], &[1], 0, host.data().to_vec())
        .and_then(|flat| flat.to_vec::<T>())
        .map_err(|e| format!("the buffer of a {} tensor: {e}", host.dtype()))?;
    let tensor: Tensor<T> = dev
        .tensor_with_strides(&buffer, host.shape(), host.strides(), host.offset())
        .map_err(|e: Error| e.to_string())?;
    Ok(Box::new(tensor))
}

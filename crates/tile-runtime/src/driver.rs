//! Finding GPUs: the CUDA driver (`libcuda.so.1`) and the HIP runtime
//! (`libamdhip64.so`) are loaded at run time, so building needs neither CUDA
//! nor ROCm, and a machine without them gets a typed error, never a panic.
//!
//! Only the calls that count and name devices are bound here; a device that
//! is found is then opened by the `gpu` module (memory, modules, launch).
//! [`crate::Device::best`] falls back to the CPU when no GPU opens, saying
//! why.

use crate::error::Error;
use libloading::{Library, Symbol};
use std::ffi::{c_char, c_int, c_uint};
use std::sync::OnceLock;

/// A GPU programming interface the runtime can probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuApi {
    /// NVIDIA's CUDA driver API.
    Cuda,
    /// AMD's HIP runtime.
    Hip,
}

impl GpuApi {
    /// The API's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            GpuApi::Cuda => "CUDA",
            GpuApi::Hip => "HIP",
        }
    }

    /// The shared libraries tried, in order: the driver's versioned name
    /// first (what a driver installation always has, and what a process
    /// linked against `libcuda` has loaded already, so both share one
    /// instance), then the development symlink.
    pub fn libraries(self) -> Vec<String> {
        match self {
            GpuApi::Cuda => ["libcuda.so.1", "libcuda.so"].map(String::from).to_vec(),
            GpuApi::Hip => ["libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"]
                .map(String::from)
                .to_vec(),
        }
    }

    /// The entry points used: initialization, device count, device handle
    /// and device name.
    fn symbols(self) -> [&'static [u8]; 4] {
        match self {
            GpuApi::Cuda => [
                b"cuInit\0",
                b"cuDeviceGetCount\0",
                b"cuDeviceGet\0",
                b"cuDeviceGetName\0",
            ],
            GpuApi::Hip => [
                b"hipInit\0",
                b"hipGetDeviceCount\0",
                b"hipDeviceGet\0",
                b"hipDeviceGetName\0",
            ],
        }
    }
}

/// A GPU found by [`probe`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuInfo {
    /// The API that found it.
    pub api: GpuApi,
    /// Its ordinal.
    pub ordinal: usize,
    /// The name the driver reports.
    pub name: String,
}

type Init = unsafe extern "C" fn(c_uint) -> c_int;
type Count = unsafe extern "C" fn(*mut c_int) -> c_int;
type Get = unsafe extern "C" fn(*mut c_int, c_int) -> c_int;
type Name = unsafe extern "C" fn(*mut c_char, c_int, c_int) -> c_int;

/// The first library of `api` that opens, loaded once per process and never
/// unloaded: a driver keeps threads and state past its initialization, so
/// closing it would pull code from under them.
pub(crate) fn library(api: GpuApi) -> Result<&'static Library, Error> {
    static CUDA: OnceLock<Result<Library, String>> = OnceLock::new();
    static HIP: OnceLock<Result<Library, String>> = OnceLock::new();
    let cell = match api {
        GpuApi::Cuda => &CUDA,
        GpuApi::Hip => &HIP,
    };
    cell.get_or_init(|| load(api))
        .as_ref()
        .map_err(|reason| Error::NoDriver {
            api: api.name(),
            tried: api.libraries().join(", "),
            reason: reason.clone(),
        })
}

/// Opens the first library of `api` that opens, or says why the first
/// one did not (the others fail the same way on a machine without the
/// driver).
fn load(api: GpuApi) -> Result<Library, String> {
    let mut first = None;
    for name in api.libraries() {
        // SAFETY: loading runs the library's initializers; these are the
        // vendors' driver libraries, which are designed to be loaded this
        // way, and nothing of ours runs concurrently inside them.
        match unsafe { Library::new(&name) } {
            Ok(lib) => return Ok(lib),
            Err(e) => {
                first.get_or_insert_with(|| e.to_string());
            }
        }
    }
    Err(first.unwrap_or_else(|| "no library names".into()))
}

/// A symbol of `lib`, or a typed error naming it.
fn symbol<'l, T>(api: GpuApi, lib: &'l Library, name: &[u8]) -> Result<Symbol<'l, T>, Error> {
    // SAFETY: `T` is the C signature of `name` in the vendor's headers (the
    // `Init`/`Count`/`Get`/`Name` types above, chosen per symbol).
    unsafe { lib.get::<T>(name) }.map_err(|e| Error::NoDriver {
        api: api.name(),
        tried: api.libraries().join(", "),
        reason: format!(
            "{}: {e}",
            String::from_utf8_lossy(name.strip_suffix(b"\0").unwrap_or(name))
        ),
    })
}

/// The number of GPUs of `api`: the driver must load and initialize.
pub fn count(api: GpuApi) -> Result<usize, Error> {
    let lib = library(api)?;
    let [init, count, _, _] = api.symbols();
    let init = symbol::<Init>(api, lib, init)?;
    let count = symbol::<Count>(api, lib, count)?;
    // SAFETY: the documented signature; flags must be 0.
    let status = unsafe { init(0) };
    if status != 0 {
        return Err(Error::driver_call(api, "initialization", status));
    }
    let mut devices: c_int = 0;
    // SAFETY: the out-pointer is a valid, aligned `int`.
    let status = unsafe { count(&mut devices) };
    if status != 0 {
        return Err(Error::driver_call(api, "counting devices", status));
    }
    Ok(usize::try_from(devices).unwrap_or(0))
}

/// Finds GPU `ordinal` of `api`: the driver must load and initialize and
/// the ordinal must be below the device count.
pub fn probe(api: GpuApi, ordinal: usize) -> Result<GpuInfo, Error> {
    let available = count(api)?;
    let lib = library(api)?;
    let [_, _, get, name] = api.symbols();
    let get = symbol::<Get>(api, lib, get)?;
    let name_of = symbol::<Name>(api, lib, name)?;
    let failed = |call: &str, code: c_int| Error::driver_call(api, call, code);
    let index = c_int::try_from(ordinal)
        .ok()
        .filter(|_| ordinal < available)
        .ok_or(Error::NoDevice {
            api: api.name(),
            ordinal,
            available,
        })?;
    let mut device: c_int = 0;
    // SAFETY: the out-pointer is a valid `int`; `index` is below the count.
    let status = unsafe { get(&mut device, index) };
    if status != 0 {
        return Err(failed("getting the device", status));
    }
    let mut buffer = [0 as c_char; 256];
    // SAFETY: the buffer holds `len` bytes, which the call NUL-terminates.
    let status = unsafe { name_of(buffer.as_mut_ptr(), buffer.len() as c_int, device) };
    if status != 0 {
        return Err(failed("naming the device", status));
    }
    let bytes: Vec<u8> = buffer
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    Ok(GpuInfo {
        api,
        ordinal,
        name: String::from_utf8_lossy(&bytes).into_owned(),
    })
}

//! Helpers shared by the integration tests: deterministic inputs, byte
//! comparisons of arguments, and the interpreter-against-host check.
#![allow(dead_code)] // each test binary uses its own subset

use std::fmt;
use tile_codegen::emit::EmitOptions;
use tile_codegen::host::{self, HostError, HostImage};
use tile_ir::builder::Builder;
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::layout::Layout;
use tile_ir::{DType, Function, Scalar, TensorType, Type, Value};
use tile_runtime::cpu::{HostIsa, HostLibrary, LoadError, RunError};
use tile_runtime::LaunchArg;

/// Deterministic values in [-2, 2) from a seed (an LCG; no dependency).
pub fn values(seed: u64, n: usize) -> Vec<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0
        })
        .collect()
}

/// An f32 tensor of `shape` with [`values`] of `seed`.
pub fn tensor(seed: u64, shape: &[usize]) -> Arg {
    let n = shape.iter().product();
    Arg::Tensor(HostTensor::from_vec(shape, values(seed, n)).unwrap())
}

/// A tensor of `dtype` and `shape` with [`values`] of `seed` cast to it.
pub fn tensor_of(seed: u64, shape: &[usize], dtype: DType) -> Arg {
    let n = shape.iter().product();
    let scalars: Vec<Scalar> = values(seed, n)
        .into_iter()
        .map(|v| tile_ir::eval::cast(Scalar::F32(v), dtype))
        .collect();
    Arg::Tensor(HostTensor::from_scalars(dtype, shape, &scalars).unwrap())
}

/// An f32 tensor of `shape` holding `0.5·i − 3` at linear index `i`.
pub fn iota(shape: &[usize]) -> Arg {
    let n: usize = shape.iter().product();
    Arg::Tensor(
        HostTensor::from_vec(shape, (0..n).map(|i| i as f32 * 0.5 - 3.0).collect()).unwrap(),
    )
}

/// An f32 tensor of `shape` holding zeros.
pub fn zeros(shape: &[usize]) -> Arg {
    let n: usize = shape.iter().product();
    Arg::Tensor(HostTensor::from_vec(shape, vec![0.0f32; n]).unwrap())
}

/// The number of blocks of `b` covering `n`.
pub fn blocks(n: usize, b: usize) -> u32 {
    n.div_ceil(b) as u32
}

/// Every argument's bytes (a tensor's whole buffer, gaps included).
pub fn bytes(args: &[Arg]) -> Vec<Vec<u8>> {
    args.iter()
        .map(|a| match a {
            Arg::Tensor(t) => t.data().to_vec(),
            Arg::Scalar(s) => s.to_bits().to_le_bytes().to_vec(),
        })
        .collect()
}

/// Runs `func` over `grid` through the interpreter and the host back end;
/// every buffer must be byte-identical afterwards. Returns the arguments
/// after the run.
pub fn host_agrees(func: &Function, grid: [u32; 3], args: Vec<Arg>) -> Vec<Arg> {
    let mut expected = args.clone();
    interp::run(func, grid, &mut expected).unwrap_or_else(|e| panic!("interpreter: {e}"));
    let mut actual = args;
    run_host(func, grid, &mut actual).unwrap_or_else(|e| panic!("{}: {e}", func.name));
    assert!(
        bytes(&actual) == bytes(&expected),
        "{} on grid {grid:?} differs from the interpreter",
        func.name
    );
    actual
}

/// Why host code did not run to the end: compiling, the launch's checks,
/// loading, or the run itself.
#[derive(Debug)]
pub enum HostRun {
    /// The host back end refused or failed.
    Compile(HostError),
    /// The launch breaks the interpreter's rules.
    Launch(interp::InterpError),
    /// The shared object did not load.
    Load(LoadError),
    /// The compiled code refused the arguments or failed in a program.
    Run(RunError),
}

impl fmt::Display for HostRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostRun::Compile(e) => e.fmt(f),
            HostRun::Launch(e) => e.fmt(f),
            HostRun::Load(e) => e.fmt(f),
            HostRun::Run(e) => e.fmt(f),
        }
    }
}

/// Loads `image`, compiled from `func`, into this process.
pub fn load(image: &HostImage, func: &Function) -> Result<HostLibrary, LoadError> {
    // SAFETY: `image` is what `host::compile` produced for `func`, with its
    // own list of checks.
    unsafe {
        HostLibrary::load(
            image.shared_object(),
            image.isa(),
            func.clone(),
            image.checks().to_vec(),
        )
    }
}

/// Compiles `func` exactly (the default [`EmitOptions`]) for the best
/// instruction-set level of this CPU, loads it and runs it over `grid`, after
/// checking `args` and `grid` as the interpreter does.
pub fn run_host(func: &Function, grid: [u32; 3], args: &mut [Arg]) -> Result<(), HostRun> {
    interp::check_launch(func, grid, args).map_err(HostRun::Launch)?;
    let isa = HostIsa::best_here().expect("a host instruction-set level runs here");
    let image = host::compile(func, isa, &EmitOptions::default()).map_err(HostRun::Compile)?;
    let library = load(&image, func).map_err(HostRun::Load)?;
    let mut args: Vec<LaunchArg<'_>> = args.iter_mut().map(launch_arg).collect();
    library.run(grid, &mut args).map_err(HostRun::Run)
}

/// An interpreter argument as a launch argument (every tensor mutable).
pub fn launch_arg(arg: &mut Arg) -> LaunchArg<'_> {
    match arg {
        Arg::Tensor(t) => LaunchArg::TensorMut(t),
        Arg::Scalar(s) => LaunchArg::Scalar(*s),
    }
}

/// A layout from its text form.
pub fn layout(text: &str) -> Layout {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e:?}"))
}

/// A new f32 tensor parameter of `rank` axes.
pub fn f32_tensor(b: &mut Builder, name: &str, rank: usize) -> Value {
    b.param(
        name,
        Type::Tensor(TensorType {
            dtype: DType::F32,
            rank,
        }),
    )
}

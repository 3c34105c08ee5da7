//! Helpers shared by the integration tests: the deterministic inputs of
//! `tile_testgen::inputs`, and running host code against the interpreter.
#![allow(dead_code)] // each test binary uses its own subset

use std::fmt;
use tile_codegen::host::{self, HostError, HostImage};
use tile_codegen::CodegenOptions;
use tile_ir::interp::{self, Arg};
use tile_ir::Function;
use tile_runtime::cpu::{HostIsa, HostLibrary, LoadError, RunError};
use tile_runtime::LaunchArg;
pub use tile_testgen::inputs::*;

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

/// Compiles `func` exactly (the default [`CodegenOptions`]) for the best
/// instruction-set level of this CPU, loads it and runs it over `grid`, after
/// checking `args` and `grid` as the interpreter does.
pub fn run_host(func: &Function, grid: [u32; 3], args: &mut [Arg]) -> Result<(), HostRun> {
    interp::check_launch(func, grid, args).map_err(HostRun::Launch)?;
    let isa = HostIsa::best_here().expect("a host instruction-set level runs here");
    let image = host::compile(func, isa, &CodegenOptions::default()).map_err(HostRun::Compile)?;
    let library = load(&image, func).map_err(HostRun::Load)?;
    let mut args: Vec<LaunchArg<'_>> = args.iter_mut().map(LaunchArg::from).collect();
    library.run(grid, &mut args).map_err(HostRun::Run)
}

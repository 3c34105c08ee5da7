//! Kernel metadata as the generated code exposes it: `KERNEL::INFO` is a
//! [`KernelInfo`] built at compile time, with every compiled specialization,
//! its optimized tile IR text and the text of each target's stages
//! ([`TargetText`]).

use crate::grid_axes::{self, UnreadGridAxis};
use std::fmt;
use tile_ir::interp::{self, Arg, HostTensor, InterpError};
use tile_ir::text::{parse_function, ParseError};
use tile_ir::DType;

pub use crate::stages::{NoStage, Stage, TargetText};
pub use tile_abi::ParamKind;

/// One runtime parameter of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    /// The parameter's name.
    pub name: &'static str,
    /// Its element type.
    pub dtype: DType,
    /// Tensor (with rank and mutability) or scalar.
    pub kind: ParamKind,
    /// Whether the kernel promises this tensor aligned (`aligned(...)`):
    /// contiguous rows, and a start, row strides and row length that are
    /// multiples of 16 bytes, which every launch checks.
    pub aligned: bool,
}

/// One compiled specialization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpecInfo {
    /// `BM=64,BN=64` (or `default` without const parameters).
    pub label: &'static str,
    /// The const parameters' values, in declaration order.
    pub values: &'static [i128],
    /// Its own warps on every target (`configs(..., num_warps = n)`), or
    /// `None` for the kernel's ([`KernelInfo::num_warps_on`]).
    pub num_warps: Option<u32>,
    /// The tile IR after the default pass pipeline, as text.
    pub ir: &'static str,
    /// The device code compiled for the kernel's GPU targets.
    pub images: &'static [crate::kernel::Image],
    /// The text of each image's stages, in the order of the images.
    pub texts: &'static [TargetText],
    /// The tile-IR ops of the GPU code's bounds checks, in program order.
    pub bounds_checks: &'static [&'static str],
    /// The run-time checks of the host images, in status-record order.
    pub host_checks: &'static [tile_abi::HostCheck],
}

/// Everything known about a kernel at compile time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    /// The kernel's name.
    pub name: &'static str,
    /// The const parameters' names, in declaration order.
    pub const_params: &'static [&'static str],
    /// The runtime parameters, in call order.
    pub params: &'static [ParamInfo],
    /// Warps per program instance, counted in each target's own warps
    /// (64-lane wavefronts on CDNA, 32 lanes elsewhere).
    pub num_warps: u32,
    /// The targets whose warps differ from `num_warps`
    /// (`num_warps(gfx942 = 16)`), with theirs.
    pub target_warps: &'static [(&'static str, u32)],
    /// The stages of software-pipelined loops the attribute asks for
    /// (`num_stages = n`), or `None` for each target's default.
    pub num_stages: Option<u32>,
    /// The targets whose stages differ from `num_stages`
    /// (`num_stages(sm_86 = 2)`), with theirs.
    pub target_stages: &'static [(&'static str, u32)],
    /// Whether its images compute with the fast f32 library (`fast_math`).
    pub fast_math: bool,
    /// Whether its GPU images take the GPU's own approximations of exp,
    /// exp2, log, log2, rsqrt and division (`approx_math`).
    pub approx_math: bool,
    /// The targets the kernel is built for.
    pub targets: &'static [&'static str],
    /// The compiled specializations.
    pub specializations: &'static [SpecInfo],
}

/// `target`'s own value among per-target `settings`, a generic AMD
/// processor taking a member's.
fn own_setting(settings: &[(&str, u32)], target: &str) -> Option<u32> {
    tile_abi::amd_generic::setting(target, |name| {
        settings.iter().find(|(t, _)| *t == name).map(|&(_, n)| n)
    })
}

impl KernelInfo {
    /// The kernel's warps on the target named `target`: its own where
    /// [`KernelInfo::target_warps`] gives one (for a generic AMD processor,
    /// a member's: `tile_abi::amd_generic::setting`), else
    /// [`KernelInfo::num_warps`].
    pub fn num_warps_on(&self, target: &str) -> u32 {
        own_setting(self.target_warps, target).unwrap_or(self.num_warps)
    }

    /// The warps of the specialization `spec` where its target has none of
    /// its own: the specialization's, else [`KernelInfo::num_warps`].
    pub const fn spec_warps(&self, spec: &SpecInfo) -> u32 {
        match spec.num_warps {
            Some(n) => n,
            None => self.num_warps,
        }
    }

    /// The warps of the specialization `spec` on the target named
    /// `target`: the specialization's, else [`KernelInfo::num_warps_on`].
    pub fn spec_warps_on(&self, spec: &SpecInfo, target: &str) -> u32 {
        spec.num_warps.unwrap_or_else(|| self.num_warps_on(target))
    }

    /// The stages the kernel asks for on the target named `target`: its
    /// own where [`KernelInfo::target_stages`] gives some (as for warps),
    /// else [`KernelInfo::num_stages`].
    pub fn num_stages_on(&self, target: &str) -> Option<u32> {
        own_setting(self.target_stages, target).or(self.num_stages)
    }

    /// The specialization compiled for `values`, or an error that lists the
    /// compiled ones.
    pub fn find(&self, values: &[i128]) -> Result<&'static SpecInfo, NotCompiled> {
        self.specializations
            .iter()
            .find(|s| s.values == values)
            .ok_or_else(|| NotCompiled {
                kernel: self.name,
                asked: self
                    .const_params
                    .iter()
                    .zip(values)
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect::<Vec<_>>()
                    .join(","),
                compiled: self.specializations.iter().map(|s| s.label).collect(),
            })
    }

    /// The index of the specialization for `values`, usable in constants.
    pub const fn index_of(&self, values: &[i128]) -> Option<usize> {
        let mut i = 0;
        while i < self.specializations.len() {
            let have = self.specializations[i].values;
            if have.len() == values.len() {
                let mut j = 0;
                while j < have.len() && have[j] == values[j] {
                    j += 1;
                }
                if j == have.len() {
                    return Some(i);
                }
            }
            i += 1;
        }
        None
    }
}

/// A specialization that was asked for but not compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotCompiled {
    /// The kernel's name.
    pub kernel: &'static str,
    /// The values asked for, as `NAME=value,...`.
    pub asked: String,
    /// The labels of the compiled specializations.
    pub compiled: Vec<&'static str>,
}

impl fmt::Display for NotCompiled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "kernel `{}` has no compiled specialization {}; the compiled ones are: {}; add `configs({})` to its attribute",
            self.kernel,
            self.asked,
            if self.compiled.is_empty() { "none".to_string() } else { self.compiled.join("; ") },
            self.asked.replace(',', ", ").replace('=', " = "),
        )
    }
}

impl std::error::Error for NotCompiled {}

/// Why running a kernel through the reference interpreter failed.
#[derive(Clone, Debug, PartialEq)]
pub enum InterpretError {
    /// The embedded IR did not parse back (a bug of the printer or parser).
    Parse(ParseError),
    /// The grid has several programs along an axis the kernel never reads,
    /// refused as a launch refuses it ([`crate::Error::UnreadGridAxis`]).
    UnreadGridAxis(UnreadGridAxis),
    /// The interpreter rejected the arguments or faulted while running.
    Run(InterpError),
}

impl fmt::Display for InterpretError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InterpretError::Parse(e) => write!(f, "the embedded tile IR does not parse: {e}"),
            InterpretError::UnreadGridAxis(e) => write!(f, "{e}"),
            InterpretError::Run(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for InterpretError {}

/// Runs a compiled specialization through the reference interpreter over a
/// grid of one to three axes, with the grid rules of a launch: several
/// programs along an axis the kernel never reads are refused before
/// anything runs, and a grid with an empty axis runs nothing. The
/// interpreter checks the arguments against the kernel's parameters (count,
/// dtypes, ranks).
pub fn interpret(spec: &SpecInfo, grid: &[u32], args: &mut [Arg]) -> Result<(), InterpretError> {
    let func = parse_function(spec.ir).map_err(InterpretError::Parse)?;
    let mut grid3 = [1u32; 3];
    for (g, &v) in grid3.iter_mut().zip(grid) {
        *g = v;
    }
    grid_axes::check(&func.name, grid_axes::axes_read(&func), grid3)
        .map_err(InterpretError::UnreadGridAxis)?;
    interp::run(&func, grid3, args).map_err(InterpretError::Run)
}

/// Copies a tensor argument back to the caller's tensor after a run.
pub fn write_back(arg: Arg, to: &mut HostTensor) {
    if let Arg::Tensor(t) = arg {
        *to = t;
    }
}

/// Writes the tensors an interpreter run left in a tensor-array argument
/// back into the caller's (generated `interpret` functions use it).
pub fn write_back_all(arg: Arg, to: &mut [HostTensor]) {
    if let Arg::Tensors(ts) = arg {
        for (to, t) in to.iter_mut().zip(ts) {
            *to = t;
        }
    }
}

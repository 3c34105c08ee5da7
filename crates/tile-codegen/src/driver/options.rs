//! What to compile a specialization for, and how: [`Options`], with each
//! target's own warps and stages.

use crate::cache::Cache;
use crate::target::Target;
use crate::CodegenOptions;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use tile_thread::lower::LowerOptions;

/// What to compile a specialization for, and how.
#[derive(Clone, Debug)]
pub struct Options {
    /// The targets, GPU and host levels, in order.
    pub targets: Vec<Target>,
    /// Warps per program instance on a GPU, counted in the target's own
    /// warps ([`Target::lowering_warps`]).
    pub num_warps: u32,
    /// The targets whose `num_warps` differs from [`Options::num_warps`]
    /// (`#[tile_kernel(num_warps(gfx942 = 16))]`), with theirs.
    pub target_warps: Vec<(Target, u32)>,
    /// What changes the code LLVM produces.
    pub codegen: CodegenOptions,
    /// The stages of software-pipelined loops on targets with `cp.async`
    /// (`#[tile_kernel(num_stages = n)]`); `None`: the most up to
    /// [`super::DEFAULT_STAGES`] whose shared memory fits each target.
    pub num_stages: Option<u32>,
    /// The targets whose stages differ from [`Options::num_stages`]
    /// (`#[tile_kernel(num_stages(sm_86 = 2))]`), with theirs.
    pub target_stages: Vec<(Target, u32)>,
    /// `TILE_DUMP`: the directory every stage is written under.
    pub dump_dir: Option<PathBuf>,
    /// The kernel cache, if any.
    pub cache: Option<Cache>,
    /// The most threads that compile targets at once, the calling thread
    /// among them (`None`: no bound of its own); the build's jobserver, or
    /// without one the machine's cores, bound them too.
    pub max_threads: Option<NonZeroUsize>,
}

/// `target`'s own value among per-target `settings`, a generic AMD
/// processor taking a member's.
fn own_setting(settings: &[(Target, u32)], target: Target) -> Option<u32> {
    tile_abi::amd_generic::setting(&target.to_string(), |name| {
        settings
            .iter()
            .find(|(t, _)| t.to_string() == name)
            .map(|&(_, n)| n)
    })
}

impl Options {
    /// The kernel's `num_warps` on `target`: its own where
    /// [`Options::target_warps`] gives one (for a generic AMD processor, a
    /// member's: `tile_abi::amd_generic::setting`).
    pub fn warps_on(&self, target: Target) -> u32 {
        own_setting(&self.target_warps, target).unwrap_or(self.num_warps)
    }

    /// The stages the kernel asks for on `target`: its own where
    /// [`Options::target_stages`] gives some (as for warps), else
    /// [`Options::num_stages`].
    pub fn stages_on(&self, target: Target) -> Option<u32> {
        own_setting(&self.target_stages, target).or(self.num_stages)
    }

    /// The lowering options `target`'s start from: its 32-lane warps for
    /// its `num_warps` ([`Options::warps_on`], [`Target::lowering_warps`]),
    /// and float sums reassociated under `fast_math`. The portable program
    /// (no target) takes the kernel's `num_warps` as 32-lane warps.
    pub fn lowering(&self, target: Option<Target>) -> LowerOptions {
        let warps = target.map_or(self.num_warps, |t| t.lowering_warps(self.warps_on(t)));
        self.lowering_with(warps)
    }

    /// The lowering options with `warps` 32-lane warps.
    pub(super) fn lowering_with(&self, warps: u32) -> LowerOptions {
        LowerOptions::warps(warps).with_reassociated_sums(self.codegen.fast_math)
    }
}

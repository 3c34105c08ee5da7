//! Passes over the tile IR, one file each, run by name from a [`PassManager`].
//!
//! | name           | what it does |
//! |----------------|--------------|
//! | `canonicalize` | constant folding, algebraic identities, `if`/`for` with known conditions or trip counts |
//! | `licm`         | moves the invariant ops a broadcast of a tile in a `for` reads (and invariant flips, slices, pads, concatenations) in front of the loop |
//! | `cse`          | merges pure ops that compute the same thing from the same operands |
//! | `dce`          | removes ops whose results are unused and that have no effect |
//! | `expand-scaled-dots` | rewrites each `dot_scaled` as the casts, products and `dot` that define it (the lowerings run it; not in the default pipeline) |
//! | `expand-fp4-pairs` | rewrites each `unpack_fp4` and `pack_fp4` as the shifts, bitcasts and reshapes that define it (the lowerings run it; not in the default pipeline) |
//!
//! Every pass keeps the IR valid; the manager verifies after each one, so a
//! pass that breaks an invariant is caught at once and named.

mod canonicalize;
mod cse;
mod dce;
mod expand_fp4_pairs;
mod expand_scaled_dots;
mod expansion;
mod licm;
mod rewrite;

use crate::function::{Function, OpId};
use crate::verify::{verify, VerifyError};

pub use canonicalize::Canonicalize;
pub use cse::Cse;
pub use dce::Dce;
pub use expand_fp4_pairs::ExpandFp4Pairs;
pub use expand_scaled_dots::ExpandScaledDots;
pub use licm::Licm;

/// A transformation of a kernel.
pub trait Pass {
    /// The pass's name, as given to [`PassManager::add`].
    fn name(&self) -> &'static str;

    /// Transforms `func` and says whether anything changed.
    fn run(&self, func: &mut Function) -> bool;
}

/// The names of every pass: the default pipeline's, in its order, then
/// the expansions the lowerings run.
pub const PASS_NAMES: [&str; 6] = [
    "canonicalize",
    "licm",
    "cse",
    "dce",
    "expand-scaled-dots",
    "expand-fp4-pairs",
];

/// The passes of the default pipeline, in order.
const DEFAULT_PIPELINE: [&str; 4] = ["canonicalize", "licm", "cse", "dce"];

/// The pass with the given name.
pub fn pass_by_name(name: &str) -> Option<Box<dyn Pass>> {
    match name {
        "canonicalize" => Some(Box::new(Canonicalize)),
        "licm" => Some(Box::new(Licm)),
        "cse" => Some(Box::new(Cse)),
        "dce" => Some(Box::new(Dce)),
        "expand-scaled-dots" => Some(Box::new(ExpandScaledDots)),
        "expand-fp4-pairs" => Some(Box::new(ExpandFp4Pairs)),
        _ => None,
    }
}

/// `func` with its `dot_scaled`s expanded into the ops that define them,
/// except those of `native` (which a block-scaled instruction runs, and
/// which keep their ids), or `None` when there is none to expand: how a
/// lowering takes a kernel.
pub fn expanded_scaled_dots(func: &Function, native: &[OpId]) -> Option<Function> {
    expand_scaled_dots::any_to_expand(func, native).then(|| {
        let mut expanded = func.clone();
        expand_scaled_dots::expand_except(&mut expanded, native);
        expanded
    })
}

/// `func` as the host lowering takes it: its `dot_scaled`s, `unpack_fp4`s
/// and `pack_fp4`s expanded into the ops that define them; `None` when it
/// has none.
pub fn expanded_for_lowering(func: &Function) -> Option<Function> {
    let scaled = expand_scaled_dots::has_scaled_dots(func);
    let pairs = expand_fp4_pairs::has_fp4_pairs(func);
    if !scaled && !pairs {
        return None;
    }
    let mut expanded = func.clone();
    ExpandScaledDots.run(&mut expanded);
    ExpandFp4Pairs.run(&mut expanded);
    Some(expanded)
}

/// An error of the pass manager.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PassError {
    /// No pass has this name.
    #[error("unknown pass `{name}`; the passes are {}", PASS_NAMES.join(", "))]
    Unknown {
        /// The name asked for.
        name: String,
    },
    /// The kernel failed verification before the pipeline ran.
    #[error("the input kernel is invalid: {0}")]
    InvalidInput(VerifyError),
    /// A pass left the kernel invalid (a compiler bug).
    #[error("pass `{pass}` left the kernel invalid: {error}")]
    BrokeInvariant {
        /// The pass that ran last.
        pass: &'static str,
        /// What the verifier found.
        error: VerifyError,
    },
}

/// Runs passes in order, verifying after each, and can show the IR after
/// each one.
#[derive(Default)]
pub struct PassManager {
    passes: Vec<Box<dyn Pass>>,
}

impl PassManager {
    /// An empty pipeline.
    pub fn new() -> Self {
        Self::default()
    }

    /// The default pipeline: `canonicalize`, `licm`, `cse`, `dce`.
    pub fn default_pipeline() -> Self {
        let mut pm = Self::new();
        for name in DEFAULT_PIPELINE {
            // Every name in DEFAULT_PIPELINE is registered.
            if let Some(pass) = pass_by_name(name) {
                pm.passes.push(pass);
            }
        }
        pm
    }

    /// Appends the pass named `name`.
    pub fn add(&mut self, name: &str) -> Result<&mut Self, PassError> {
        let pass = pass_by_name(name).ok_or_else(|| PassError::Unknown {
            name: name.to_string(),
        })?;
        self.passes.push(pass);
        Ok(self)
    }

    /// The names of the passes, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.passes.iter().map(|p| p.name()).collect()
    }

    /// Runs the pipeline on `func`, calling `after_each(pass name, kernel)`
    /// after every pass (for dumps).
    pub fn run(
        &self,
        func: &mut Function,
        mut after_each: impl FnMut(&'static str, &Function),
    ) -> Result<(), PassError> {
        verify(func).map_err(PassError::InvalidInput)?;
        for pass in &self.passes {
            pass.run(func);
            verify(func).map_err(|error| PassError::BrokeInvariant {
                pass: pass.name(),
                error,
            })?;
            after_each(pass.name(), func);
        }
        Ok(())
    }
}

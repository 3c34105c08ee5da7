//! The attribute's settings that a target may give its own value:
//! `num_warps(gfx942 = 16)` and `num_stages(sm_86 = 2)`, beside the kernel's
//! `num_warps = n` and `num_stages = n`, with the value rules both share. A
//! generic AMD processor is named with `_` for `-`: `num_warps(gfx9_4_generic = 16)`.

use crate::diag::{err, err_at};
use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Ident, LitInt};
use tile_codegen::driver::MAX_BLOCK_THREADS;
use tile_codegen::target::Target;

/// A setting with a per-target form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerTarget {
    /// `num_warps`: a power of two from 1 to 32, for any GPU target.
    Warps,
    /// `num_stages`: 1 to 8, for the targets whose loops pipeline with
    /// asynchronous copies (`cp.async`).
    Stages,
}

impl PerTarget {
    /// The attribute's name of the setting.
    fn name(self) -> &'static str {
        match self {
            PerTarget::Warps => "num_warps",
            PerTarget::Stages => "num_stages",
        }
    }

    /// The value of `name = n` (the kernel's, or one target's), checked.
    pub fn value(self, meta: &ParseNestedMeta) -> syn::Result<u32> {
        let lit: LitInt = meta.value()?.parse()?;
        let n: u32 = lit.base10_parse()?;
        let (valid, rule) = match self {
            PerTarget::Warps => (
                (1..=32).contains(&n) && n.is_power_of_two(),
                "a power of two from 1 to 32",
            ),
            PerTarget::Stages => ((1..=8).contains(&n), "from 1 to 8"),
        };
        if !valid {
            return Err(err(
                &lit,
                format!("`{}` must be {rule}, found {n}", self.name()),
            ));
        }
        Ok(n)
    }

    /// Whether `target` may have its own value: any GPU target its own
    /// warps, and a target whose loops pipeline its own stages (elsewhere
    /// loops run in one stage).
    fn applies_to(self, target: Target) -> bool {
        match self {
            PerTarget::Warps => target.is_gpu(),
            PerTarget::Stages => target.tensor_cores().cp_async(),
        }
    }

    /// What the targets it applies to are, and an example, for errors.
    fn explained(self) -> (&'static str, &'static str) {
        match self {
            PerTarget::Warps => ("the warps of GPU targets", "num_warps(gfx942 = 16)"),
            PerTarget::Stages => (
                "the stages of targets whose loops pipeline with asynchronous copies",
                "num_stages(sm_86 = 2)",
            ),
        }
    }

    /// The names of the targets it applies to, as the attribute writes
    /// them.
    fn target_names(self) -> String {
        Target::accepted_names()
            .into_iter()
            .filter(|name| name.parse().is_ok_and(|t| self.applies_to(t)))
            .map(|name| name.replace('-', "_"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The target a per-target setting names: its name, with `_` for the `-`
/// a Rust identifier cannot hold (`gfx9_4_generic` is `gfx9-4-generic`).
fn attribute_target(name: &str) -> Option<Target> {
    name.parse()
        .or_else(|_| name.replace('_', "-").parse())
        .ok()
}

/// Parses `setting(TARGET = n, ...)` into `values`, refusing a target the
/// setting does not apply to and a target given twice; `named` gets where
/// each target is named.
pub fn parse(
    meta: &ParseNestedMeta,
    setting: PerTarget,
    values: &mut Vec<(Target, u32)>,
    named: &mut Vec<(Target, Span)>,
) -> syn::Result<()> {
    meta.parse_nested_meta(|entry| {
        let name = entry
            .path
            .get_ident()
            .map(Ident::to_string)
            .unwrap_or_default();
        let target = match attribute_target(&name) {
            Some(target) if setting.applies_to(target) => target,
            _ => {
                let (what, example) = setting.explained();
                let kind = match setting {
                    PerTarget::Warps => "the GPU targets",
                    PerTarget::Stages => "those targets",
                };
                return Err(entry.error(format!(
                    "`{}(...)` sets {what}, e.g. `{example}`; `{name}` is not one ({kind}: {})",
                    setting.name(),
                    setting.target_names()
                )));
            }
        };
        if values.iter().any(|(t, _)| *t == target) {
            return Err(entry.error(format!("`{}` of {target} is given twice", setting.name())));
        }
        named.push((target, entry.path.span()));
        let value = setting.value(&entry)?;
        let threads = target.block_threads(value);
        if setting == PerTarget::Warps && threads > MAX_BLOCK_THREADS {
            return Err(entry.error(format!(
                "{value} warps on {target} are {threads} threads a block, more than the {MAX_BLOCK_THREADS} a block holds (its warps are {}-lane wavefronts)",
                threads / value
            )));
        }
        values.push((target, value));
        Ok(())
    })
}

/// An error at the first target of `named` that the kernel's own
/// `targets = "..."` leaves out: its value would never be used (a narrower
/// `TILE_TARGETS` or the default targets are not the kernel's word, and
/// leave such values unused without an error).
pub fn check_built(named: &[(Target, Span)], targets: &[Target]) -> syn::Result<()> {
    match named.iter().find(|(t, _)| !targets.contains(t)) {
        Some((target, span)) => Err(err_at(
            *span,
            format!(
                "{target} is not among the kernel's GPU targets ({}); a value of its own would never be used",
                targets
                    .iter()
                    .filter(|t| t.is_gpu())
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
        None => Ok(()),
    }
}

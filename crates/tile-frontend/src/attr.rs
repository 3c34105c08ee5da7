//! The attribute's arguments: `configs(NAME = value, ...)` once per
//! specialization (with an optional `targets = "..."` of its own),
//! `num_warps = n` and `num_stages = n` (each also per target,
//! `num_warps(gfx942 = n, ...)`, `per_target.rs`), `targets = "sm_80,host"`,
//! `fast_math`, `approx_math`, `tma`, `aligned(x, ...)`, and for the
//! register warnings
//! (`warnings.rs`)
//! `register_budget = n` and `allow(spills)`.

use crate::diag::{err, err_at};
use crate::per_target::{self, PerTarget};
use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::{Ident, Lit, LitInt, LitStr};
use tile_codegen::target::{self, Target};

/// The number of warps when the attribute does not say.
pub const DEFAULT_NUM_WARPS: u32 = 4;

/// One `configs(...)` set as written: the values of const parameters.
#[derive(Clone, Debug)]
pub struct Config {
    /// `(name, value)` pairs in the order written.
    pub values: Vec<(Ident, LitInt)>,
    /// The targets this specialization is limited to (`targets = "..."`
    /// inside the set); `None` for all of the kernel's.
    pub targets: Option<Vec<Target>>,
    /// This specialization's warps on every target (`num_warps = n` inside
    /// the set), in place of the kernel's `num_warps` and
    /// `num_warps(TARGET = n)`; `None` for those.
    pub num_warps: Option<u32>,
    /// The span of the `configs` keyword, for errors about the whole set.
    pub span: Span,
}

/// Targets named by an environment variable, for the kernels whose
/// attribute names none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvTargets {
    /// The variable, for errors: `TILE_TARGETS` or `TILE_DEV_TARGETS`.
    pub variable: &'static str,
    /// Its value, a comma-separated list of targets.
    pub list: String,
}

impl EnvTargets {
    /// The targets `TILE_TARGETS` names.
    pub fn tile_targets(list: impl Into<String>) -> EnvTargets {
        EnvTargets {
            variable: "TILE_TARGETS",
            list: list.into(),
        }
    }
}

/// The parsed attribute arguments.
#[derive(Clone, Debug)]
pub struct KernelAttr {
    /// The specializations to compile, as written.
    pub configs: Vec<Config>,
    /// Warps per program instance, in each target's own warps (64-lane
    /// wavefronts on CDNA).
    pub num_warps: u32,
    /// The targets with warps of their own (`num_warps(gfx942 = 16)`), in
    /// the order written.
    pub target_warps: Vec<(Target, u32)>,
    /// The stages of software-pipelined loops (`num_stages = n`, 1 to 8),
    /// or `None` for each target's default
    /// (`tile_codegen::driver::DEFAULT_STAGES` where it fits).
    pub num_stages: Option<u32>,
    /// The targets with stages of their own (`num_stages(sm_86 = 2)`), in
    /// the order written.
    pub target_stages: Vec<(Target, u32)>,
    /// The targets to compile for: when neither the attribute nor the
    /// environment (`TILE_TARGETS`, `TILE_DEV_TARGETS`) names any, every GPU
    /// architecture the code generator supports and the host
    /// (`tile_codegen::default_targets`).
    pub targets: Vec<Target>,
    /// Whether math functions of f32 and narrower use the fast library
    /// (`tile_codegen::CodegenOptions::fast_math`); `approx_math` implies it.
    pub fast_math: bool,
    /// Whether GPU images take the GPU's own approximations of exp, exp2,
    /// log, log2, rsqrt and division (`approx_math`,
    /// `tile_codegen::CodegenOptions::approx_math`).
    pub approx_math: bool,
    /// The registers per thread a GPU image may use before the build warns
    /// (`register_budget = n`); `None`: no budget.
    pub register_budget: Option<u32>,
    /// Whether a GPU image that spills registers goes without a warning
    /// (`allow(spills)`).
    pub allow_spills: bool,
    /// Whether the images for sm_90 and later copy the operands of
    /// pipelined tensor-core loops with the TMA (`tma`;
    /// `tile_codegen::CodegenOptions::tma`).
    pub tma: bool,
    /// The tensor parameters promised aligned (`aligned(x, out)`, in the
    /// order written; `tile_ir::TensorType::aligned`), checked against the
    /// signature by [`crate::signature::KernelSig::mark_aligned`].
    pub aligned: Vec<Ident>,
}

impl KernelAttr {
    /// Parses the tokens inside `#[tile_kernel(...)]`; `env_targets` are
    /// used when the attribute names no targets.
    pub fn parse(tokens: TokenStream, env_targets: Option<&EnvTargets>) -> syn::Result<KernelAttr> {
        let mut configs = Vec::new();
        let mut num_warps: Option<u32> = None;
        let mut target_warps: Vec<(Target, u32)> = Vec::new();
        let mut num_stages: Option<u32> = None;
        let mut target_stages: Vec<(Target, u32)> = Vec::new();
        // Where each per-target value names its target.
        let mut named: Vec<(Target, Span)> = Vec::new();
        let mut targets: Option<Vec<Target>> = None;
        let mut fast_math = false;
        let mut approx_math = false;
        let mut register_budget: Option<u32> = None;
        let mut allow_spills = false;
        let mut tma = false;
        let mut aligned: Option<Vec<Ident>> = None;
        let parser = syn::meta::parser(|meta| {
            if meta.path.is_ident("configs") {
                configs.push(parse_config(&meta)?);
                Ok(())
            } else if meta.path.is_ident("num_warps") && meta.input.peek(syn::token::Paren) {
                per_target::parse(&meta, PerTarget::Warps, &mut target_warps, &mut named)
            } else if meta.path.is_ident("num_warps") {
                if num_warps.is_some() {
                    return Err(meta.error("`num_warps` is given twice"));
                }
                num_warps = Some(PerTarget::Warps.value(&meta)?);
                Ok(())
            } else if meta.path.is_ident("num_stages") && meta.input.peek(syn::token::Paren) {
                per_target::parse(&meta, PerTarget::Stages, &mut target_stages, &mut named)
            } else if meta.path.is_ident("num_stages") {
                if num_stages.is_some() {
                    return Err(meta.error("`num_stages` is given twice"));
                }
                num_stages = Some(PerTarget::Stages.value(&meta)?);
                Ok(())
            } else if meta.path.is_ident("targets") {
                if targets.is_some() {
                    return Err(meta.error("`targets` is given twice"));
                }
                let lit: LitStr = meta.value()?.parse()?;
                targets = Some(parse_targets(&lit.value(), lit.span())?);
                Ok(())
            } else if meta.path.is_ident("fast_math") {
                set_flag(&meta, &mut fast_math, "fast_math")
            } else if meta.path.is_ident("approx_math") {
                set_flag(&meta, &mut approx_math, "approx_math")
            } else if meta.path.is_ident("tma") {
                set_flag(&meta, &mut tma, "tma")
            } else if meta.path.is_ident("aligned") {
                if aligned.is_some() {
                    return Err(meta.error(
                        "`aligned` is given twice; name every aligned tensor in one `aligned(...)`",
                    ));
                }
                let usage = "`aligned(...)` names the tensor parameters promised aligned, e.g. `aligned(x, out)`";
                if !meta.input.peek(syn::token::Paren) {
                    return Err(meta.error(usage));
                }
                let content;
                syn::parenthesized!(content in meta.input);
                if content.is_empty() {
                    return Err(meta.error(usage));
                }
                let names: Vec<Ident> =
                    syn::punctuated::Punctuated::<Ident, syn::Token![,]>::parse_terminated(
                        &content,
                    )
                    .map_err(|e| syn::Error::new(e.span(), usage))?
                    .into_iter()
                    .collect();
                aligned = Some(names);
                Ok(())
            } else if meta.path.is_ident("register_budget") {
                if register_budget.is_some() {
                    return Err(meta.error("`register_budget` is given twice"));
                }
                let lit: LitInt = meta.value()?.parse()?;
                let n: u32 = lit.base10_parse()?;
                if n == 0 {
                    return Err(err(
                        &lit,
                        "`register_budget` is a number of registers per thread, at least 1",
                    ));
                }
                register_budget = Some(n);
                Ok(())
            } else if meta.path.is_ident("allow") {
                meta.parse_nested_meta(|lint| {
                    if !lint.path.is_ident("spills") {
                        return Err(lint.error(
                            "`allow(...)` takes `spills`: no warning when a GPU image spills registers",
                        ));
                    }
                    allow_spills = true;
                    Ok(())
                })
            } else {
                Err(meta.error(
                    "unknown argument; `#[tile_kernel]` takes `configs(NAME = value, ...)`, `num_warps = n`, `num_warps(TARGET = n, ...)`, `num_stages = n`, `num_stages(TARGET = n, ...)`, `targets = \"...\"`, `fast_math`, `approx_math`, `tma`, `aligned(x, ...)`, `register_budget = n` and `allow(spills)`",
                ))
            }
        });
        parser.parse2(tokens)?;
        if let Some(targets) = &targets {
            per_target::check_built(&named, targets)?;
        }
        let targets = match (targets, env_targets) {
            (Some(t), _) => t,
            (None, Some(env)) => parse_targets(&env.list, Span::call_site())
                .map_err(|e| err_at(Span::call_site(), format!("in {}: {e}", env.variable)))?,
            (None, None) => tile_codegen::default_targets(),
        };
        Ok(KernelAttr {
            configs,
            num_warps: num_warps.unwrap_or(DEFAULT_NUM_WARPS),
            target_warps,
            num_stages,
            target_stages,
            targets,
            fast_math: fast_math || approx_math,
            approx_math,
            register_budget,
            allow_spills,
            tma,
            aligned: aligned.unwrap_or_default(),
        })
    }

    /// The targets of the specialization from `configs(...)` number
    /// `config`: the kernel's targets, less those its set leaves out with a
    /// `targets = "..."` of its own. (A set's target that the kernel is not
    /// built for, say under a narrower `TILE_TARGETS`, is not compiled.)
    pub fn targets_of(&self, config: usize) -> Vec<Target> {
        match self.configs.get(config).and_then(|c| c.targets.as_ref()) {
            Some(only) => self
                .targets
                .iter()
                .filter(|t| only.contains(t))
                .copied()
                .collect(),
            None => self.targets.clone(),
        }
    }

    /// The warps of the specialization from `configs(...)` number
    /// `config`, and the targets with warps of their own: its set's
    /// `num_warps = n` on every target, else the kernel's `num_warps` and
    /// `num_warps(TARGET = n)`.
    pub fn warps_of(&self, config: usize) -> (u32, Vec<(Target, u32)>) {
        match self.configs.get(config).and_then(|c| c.num_warps) {
            Some(n) => (n, Vec::new()),
            None => (self.num_warps, self.target_warps.clone()),
        }
    }
}

fn parse_config(meta: &syn::meta::ParseNestedMeta) -> syn::Result<Config> {
    let span = meta.path.segments[0].ident.span();
    let mut values: Vec<(Ident, LitInt)> = Vec::new();
    let mut targets: Option<Vec<Target>> = None;
    let mut num_warps: Option<u32> = None;
    meta.parse_nested_meta(|inner| {
        let Some(name) = inner.path.get_ident().cloned() else {
            return Err(inner.error("expected `NAME = value` with a const parameter's name"));
        };
        if name == "num_warps" {
            if num_warps.is_some() {
                return Err(err(
                    &name,
                    "`num_warps` is given twice in this `configs(...)`",
                ));
            }
            num_warps = Some(PerTarget::Warps.value(&inner)?);
            return Ok(());
        }
        // A string is this set's targets; a const parameter takes an integer.
        let value: Lit = inner.value()?.parse()?;
        match value {
            Lit::Str(lit) if name == "targets" => {
                if targets.is_some() {
                    return Err(err(
                        &name,
                        "`targets` is given twice in this `configs(...)`",
                    ));
                }
                targets = Some(parse_targets(&lit.value(), lit.span())?);
            }
            Lit::Int(value) => {
                if values.iter().any(|(n, _)| *n == name) {
                    return Err(err(
                        &name,
                        format!("`{name}` is given twice in this `configs(...)`"),
                    ));
                }
                values.push((name, value));
            }
            other => {
                return Err(err(
                    &other,
                    format!("expected an integer for `{name}` (or `targets = \"...\"`)"),
                ))
            }
        }
        Ok(())
    })?;
    if values.is_empty() {
        return Err(err_at(
            span,
            "`configs()` is empty; list `NAME = value` for every const parameter",
        ));
    }
    Ok(Config {
        values,
        targets,
        num_warps,
        span,
    })
}

/// The targets of a list of names, each name once (`host` standing for the
/// host levels, `tile_codegen::target::targets_named`).
fn parse_targets(text: &str, span: Span) -> syn::Result<Vec<Target>> {
    let mut names: Vec<&str> = Vec::new();
    let mut out: Vec<Target> = Vec::new();
    for name in text.split(',').map(str::trim) {
        if names.contains(&name) {
            return Err(err_at(span, format!("target `{name}` is listed twice")));
        }
        names.push(name);
        let targets = target::targets_named(name).map_err(|_| {
            let known = Target::accepted_names().join(", ");
            err_at(
                span,
                format!("unknown target `{name}`; the targets are {known}"),
            )
        })?;
        for t in targets {
            if !out.contains(&t) {
                out.push(t);
            }
        }
    }
    Ok(out)
}

/// Sets the flag `name` (an argument without a value), once.
fn set_flag(meta: &syn::meta::ParseNestedMeta<'_>, flag: &mut bool, name: &str) -> syn::Result<()> {
    if *flag {
        return Err(meta.error(format!("`{name}` is given twice")));
    }
    if !meta.input.is_empty() && !meta.input.peek(syn::Token![,]) {
        return Err(meta.error(format!("`{name}` takes no value")));
    }
    *flag = true;
    Ok(())
}

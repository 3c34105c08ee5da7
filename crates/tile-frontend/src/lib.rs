//! The front end of `#[tile_kernel]`, as a library: parse the attribute and
//! the kernel's signature, translate the body to tile IR once per
//! specialization, and generate the launcher.
//!
//! `tile-macros` is a thin shell over [`expand::tile_kernel`]; tests and
//! tools call [`translate_kernel`] directly. Every function returns
//! `syn::Result` with errors spanned at the user's syntax; nothing panics on
//! any input.

#![warn(missing_docs)]

pub mod attr;
mod diag;
mod embed;
pub mod expand;
mod invocation;
mod options;
pub mod signature;
pub mod spec;
pub mod translate;
mod warnings;

pub use spec::Specialization;

use attr::KernelAttr;
use proc_macro2::TokenStream;
use signature::KernelSig;
use syn::ItemFn;
use tile_ir::Function;

/// Lowers a kernel for every specialization its attribute lists.
///
/// `attr` is the token stream inside `#[tile_kernel(...)]`.
pub fn translate_kernel(
    attr: TokenStream,
    item: &ItemFn,
) -> syn::Result<Vec<(Specialization, Function)>> {
    let attr = KernelAttr::parse(attr, None)?;
    let sig = KernelSig::parse(item)?;
    let specs = spec::resolve(&attr, &sig)?;
    translate_specs(item, &sig, &specs)
}

/// Lowers `item` for each of `specs`.
///
/// An error that every specialization hits is reported once, as is; errors
/// that only some specializations hit are reported for each of them, with
/// "(in specialization ...)" appended.
pub fn translate_specs(
    item: &ItemFn,
    sig: &KernelSig,
    specs: &[Specialization],
) -> syn::Result<Vec<(Specialization, Function)>> {
    let mut out = Vec::new();
    let mut failed: Vec<(&Specialization, syn::Error)> = Vec::new();
    for s in specs {
        match translate::translate(item, sig, s, None) {
            Ok(f) => out.push((s.clone(), f)),
            Err(e) => failed.push((s, e)),
        }
    }
    let Some((_, first)) = failed.first() else {
        return Ok(out);
    };
    let same = failed
        .iter()
        .all(|(_, e)| e.to_string() == first.to_string());
    if failed.len() == specs.len() && same {
        return Err(first.clone());
    }
    let mut combined: Option<syn::Error> = None;
    for (s, unlabeled) in failed {
        // Lowering is deterministic: the labeled run fails at the same place.
        let label = s.label();
        let e = translate::translate(item, sig, s, Some(&label))
            .err()
            .unwrap_or(unlabeled);
        match &mut combined {
            Some(c) => c.combine(e),
            None => combined = Some(e),
        }
    }
    match combined {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

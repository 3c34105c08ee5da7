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
pub mod helpers;
mod invocation;
mod options;
mod per_target;
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
/// The errors of every specialization are reported together: an error that
/// every specialization hits once, as is; one that only some hit, for each
/// of them, with "(in specialization ...)" appended.
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
    let keys: Vec<Vec<(String, String)>> = failed
        .iter()
        .map(|(_, e)| e.clone().into_iter().map(|one| diag::key(&one)).collect())
        .collect();
    let everywhere = |k: &(String, String)| {
        failed.len() == specs.len() && keys.iter().all(|of_spec| of_spec.contains(k))
    };
    let mut errors: Vec<syn::Error> = first
        .clone()
        .into_iter()
        .filter(|one| everywhere(&diag::key(one)))
        .collect();
    for ((s, unlabeled), of_spec) in failed.iter().zip(&keys) {
        if of_spec.iter().all(everywhere) {
            continue;
        }
        // Lowering is deterministic: the labeled run fails with the same
        // errors, in the same order.
        let label = s.label();
        let labeled = translate::translate(item, sig, s, Some(&label))
            .err()
            .unwrap_or_else(|| unlabeled.clone());
        for (one, k) in labeled.into_iter().zip(of_spec) {
            if !everywhere(k) {
                errors.push(one);
            }
        }
    }
    let mut errors = errors.into_iter();
    let mut combined = errors.next().unwrap_or_else(|| first.clone());
    combined.extend(errors);
    Err(combined)
}

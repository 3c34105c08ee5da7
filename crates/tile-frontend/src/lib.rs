//! The front end of `#[tile_kernel]`, as a library: parse the attribute and
//! the kernel's signature, lower the body to tile IR once per
//! specialization, and generate the launcher.
//!
//! `tile-macros` is a thin shell over [`expand::tile_kernel`]; tests and
//! tools call [`lower_kernel`] directly. Every function returns
//! `syn::Result` with errors spanned at the user's syntax; nothing panics on
//! any input.

#![warn(missing_docs)]

pub mod attr;
mod diag;
pub mod dump;
pub mod expand;
pub mod lower;
pub mod meta;
pub mod signature;
pub mod spec;

pub use spec::Specialization;

use attr::KernelAttr;
use proc_macro2::TokenStream;
use signature::KernelSig;
use syn::ItemFn;
use tile_ir::Function;

/// Lowers a kernel for every specialization its attribute lists.
///
/// `attr` is the token stream inside `#[tile_kernel(...)]`.
pub fn lower_kernel(
    attr: TokenStream,
    item: &ItemFn,
) -> syn::Result<Vec<(Specialization, Function)>> {
    let attr = KernelAttr::parse(attr, None)?;
    let sig = KernelSig::parse(item)?;
    let specs = spec::resolve(&attr, &sig)?;
    lower_specs(item, &sig, &specs)
}

/// Lowers `item` for each of `specs`.
pub fn lower_specs(
    item: &ItemFn,
    sig: &KernelSig,
    specs: &[Specialization],
) -> syn::Result<Vec<(Specialization, Function)>> {
    let several = specs.len() > 1;
    specs
        .iter()
        .map(|s| {
            let label = s.label();
            let f = lower::lower(item, sig, s, several.then_some(label.as_str()))?;
            Ok((s.clone(), f))
        })
        .collect()
}

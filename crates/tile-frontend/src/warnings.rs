//! The build's warnings about a kernel's GPU images, with their figures
//! (`tile_codegen::driver::RegisterUsage`): a specialization whose image
//! spills registers to memory, unless the kernel says `allow(spills)`, and
//! one that uses more registers per thread than the kernel's
//! `register_budget = n`.
//!
//! A proc macro cannot emit a warning on stable Rust, so the expansion
//! carries a `#[deprecated]` constant and uses it at the kernel's name:
//! rustc reports the use, with the message, at that span, as the lint
//! `deprecated` (shown by `cargo build`, an error under `-D warnings`). Builds
//! without code (`cargo check`) measure nothing and warn of nothing.

use crate::attr::KernelAttr;
use crate::spec::Specialization;
use proc_macro2::TokenStream;
use quote::{format_ident, quote_spanned};
use tile_codegen::driver::RegisterUsage;

/// The warnings of one specialization (`label`) of the kernel `name`, whose
/// images' registers are `usage`.
pub(crate) fn register_warnings(
    name: &syn::Ident,
    attr: &KernelAttr,
    spec: &Specialization,
    usage: &[RegisterUsage],
) -> TokenStream {
    let label = spec.label();
    let mut out = TokenStream::new();
    let spilling: Vec<String> = usage
        .iter()
        .filter(|u| u.spills())
        .map(ToString::to_string)
        .collect();
    if !spilling.is_empty() && !attr.allow_spills {
        let message = format!(
            "kernel `{name}` ({label}) spills registers to memory: {}; smaller tiles or more warps (`num_warps`) lower the registers a thread needs; `allow(spills)` in `#[tile_kernel(...)]` silences this",
            spilling.join("; ")
        );
        out.extend(warning(name, "spills_registers", &message));
    }
    if let Some(budget) = attr.register_budget {
        let over: Vec<String> = usage
            .iter()
            .filter(|u| u.registers > budget)
            .map(ToString::to_string)
            .collect();
        if !over.is_empty() {
            let message = format!(
                "kernel `{name}` ({label}) uses more than its `register_budget` of {budget} registers per thread: {}",
                over.join("; ")
            );
            out.extend(warning(name, "exceeds_register_budget", &message));
        }
    }
    out
}

/// A `deprecated` warning with `message` at `name`, in an anonymous
/// constant of its own (so that each specialization's has its own scope).
fn warning(name: &syn::Ident, what: &str, message: &str) -> TokenStream {
    let constant = format_ident!("{}_{}", name, what, span = name.span());
    quote_spanned! {name.span()=>
        const _: () = {
            #[deprecated(note = #message)]
            #[allow(non_upper_case_globals)]
            const #constant: () = ();
            #constant
        };
    }
}

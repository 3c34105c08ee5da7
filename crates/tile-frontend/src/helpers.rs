//! `#[tile_fn]` helpers shared between kernels of a crate.
//!
//! A proc macro sees only the item it is attached to, so a kernel cannot
//! read a helper defined elsewhere. Each module-level `#[tile_fn] fn name`
//! therefore expands to a `macro_rules!` that carries the function's tokens,
//! imported into the module's macro namespace under the function's name
//! (with the function's visibility, `pub` as `pub(crate)`):
//!
//! ```text
//! macro_rules! __tile_fn_name {
//!     ([$($done:tt)*] $next:path, $($rest:tt)*) => {
//!         $next! { [$($done)* #[tile_fn] fn name(..) { .. }] $($rest)* }
//!     };
//! }
//! pub(crate) use __tile_fn_name as name;
//! ```
//!
//! A `pub` helper is for other crates too: its macro is `#[macro_export]`ed
//! (under a name made unique by the helper's position in its file, since
//! every exported macro lives at the crate's root) and re-exported as
//! `pub use __tile_fn_name_1f2e3d4c as name;`, so that a kernel in another
//! crate names it `uses(other_crate::module::name)`.
//!
//! A kernel that names helpers in `uses(a, crate::m::b)` expands to a chain
//! of them: `a! { [] crate::m::b, ::tile::__private::tile_kernel_with, {attr} {item} }`;
//! each appends its function and calls the next, and the last
//! ([`tile_kernel_with`]) expands the kernel with the helpers added at the
//! top of its body, where helpers defined in the kernel stand too.

use crate::expand::{tile_kernel, ExpandOptions};
use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use quote::{format_ident, quote, ToTokens};
use syn::punctuated::Punctuated;
use syn::{ItemFn, Meta, Path, Token, Visibility};

/// Expands a module-level `#[tile_fn] fn`: the macro that carries it to the
/// kernels that name it in `uses(..)`.
pub fn tile_fn(item: TokenStream) -> TokenStream {
    let func: ItemFn = match syn::parse2(item) {
        Ok(f) => f,
        Err(e) => {
            return syn::Error::new(e.span(), "`#[tile_fn]` goes on a function").to_compile_error()
        }
    };
    let name = &func.sig.ident;
    let exported = matches!(func.vis, Visibility::Public(_));
    let carrier = if exported {
        exported_name(name)
    } else {
        format_ident!("__tile_fn_{}", name)
    };
    let (visibility, export) = match &func.vis {
        Visibility::Inherited => (quote!(), quote!()),
        Visibility::Public(_) => (quote!(pub), quote!(#[macro_export])),
        _ => (quote!(pub(crate)), quote!()),
    };
    let mut helper = func.clone();
    helper.vis = Visibility::Inherited;
    let helper = helper.to_token_stream();
    let doc =
        format!("The `#[tile_fn]` helper `{name}`, for kernels that name it in `uses({name})`.");
    quote! {
        #[doc(hidden)]
        #[allow(unused_macros)]
        #export
        macro_rules! #carrier {
            ([$($done:tt)*] $next:path, $($rest:tt)*) => {
                $next! { [$($done)* #[tile_fn] #helper] $($rest)* }
            };
        }
        #[doc = #doc]
        #[allow(unused_imports)]
        #visibility use #carrier as #name;
    }
}

/// The name of an exported helper's macro: `__tile_fn_<name>_<hash>`, the
/// hash of the file, line and column of the helper's name (when the span
/// knows them), so that helpers of one name in two modules do not collide
/// at the crate's root.
fn exported_name(name: &syn::Ident) -> syn::Ident {
    let Some((file, line, column)) = crate::translate::location::position(name.span()) else {
        return format_ident!("__tile_fn_{}", name);
    };
    // FNV-1a: stable across builds and toolchains, unlike `DefaultHasher`.
    let mut hash: u32 = 0x811c_9dc5;
    for byte in format!("{file}:{line}:{column}").bytes() {
        hash = (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193);
    }
    format_ident!("__tile_fn_{}_{:08x}", name, hash)
}

/// The helpers a kernel's attribute names in `uses(..)` (or the error of a
/// malformed `uses`), and the attribute without it; `None` when it has no
/// `uses` (or does not parse as a list of arguments, which the kernel's own
/// parsing then reports).
pub fn split_uses(attr: &TokenStream) -> Option<(syn::Result<Vec<Path>>, TokenStream)> {
    let parser = Punctuated::<Meta, Token![,]>::parse_terminated;
    let metas = syn::parse::Parser::parse2(parser, attr.clone()).ok()?;
    let mut uses: syn::Result<Vec<Path>> = Ok(Vec::new());
    let mut rest = Punctuated::<Meta, Token![,]>::new();
    let mut found = false;
    for meta in metas {
        if !meta.path().is_ident("uses") {
            rest.push(meta);
            continue;
        }
        found = true;
        let paths = match &meta {
            Meta::List(list) => {
                list.parse_args_with(Punctuated::<Path, Token![,]>::parse_terminated)
            }
            _ => Err(syn::Error::new_spanned(
                &meta,
                "`uses` names helpers: `uses(gelu, crate::activations::silu)`",
            )),
        };
        uses = match (uses, paths) {
            (Ok(mut all), Ok(paths)) => {
                all.extend(paths);
                Ok(all)
            }
            (Err(e), _) | (_, Err(e)) => Err(e),
        };
    }
    found.then(|| (uses, rest.to_token_stream()))
}

/// The first step of a kernel that names helpers: the chain of their
/// macros, ending in [`tile_kernel_with`] with the attribute (without
/// `uses`) and the kernel.
pub fn chain(uses: &[Path], attr: TokenStream, item: TokenStream) -> TokenStream {
    let Some((first, others)) = uses.split_first() else {
        return tile_kernel(attr, item, &ExpandOptions::from_env());
    };
    let attr = Group::new(Delimiter::Brace, attr);
    let item = Group::new(Delimiter::Brace, item);
    quote! {
        #first! { [] #(#others,)* ::tile::__private::tile_kernel_with, #attr #item }
    }
}

/// The last step: `[helpers..] {attr} {item}` expanded as `#[tile_kernel(attr)]
/// item` with the helpers at the top of the kernel's body.
pub fn tile_kernel_with(input: TokenStream, options: &ExpandOptions) -> TokenStream {
    let mut trees = input.into_iter();
    let parts = (trees.next(), trees.next(), trees.next());
    let (
        Some(TokenTree::Group(helpers)),
        Some(TokenTree::Group(attr)),
        Some(TokenTree::Group(item)),
    ) = parts
    else {
        return syn::Error::new(
            proc_macro2::Span::call_site(),
            "`tile_kernel_with` is the last step of a kernel that names helpers in `uses(..)`; it is not called by hand",
        )
        .to_compile_error();
    };
    let helpers = match syn::parse2::<HelperList>(helpers.stream()) {
        Ok(list) => list.0,
        Err(e) => return e.to_compile_error(),
    };
    let (attr, item) = (attr.stream(), item.stream());
    match inject(helpers, item) {
        Ok(item) => tile_kernel(attr, item, options),
        Err(e) => e.to_compile_error(),
    }
}

/// The kernel `item` with `helpers` as the first items of its body.
fn inject(helpers: Vec<ItemFn>, item: TokenStream) -> syn::Result<TokenStream> {
    let mut kernel: ItemFn = syn::parse2(item)?;
    let stmts = helpers
        .into_iter()
        .map(|h| syn::Stmt::Item(syn::Item::Fn(h)));
    kernel.block.stmts.splice(0..0, stmts);
    Ok(kernel.to_token_stream())
}

/// The helpers a chain has collected: `#[tile_fn] fn ..` one after another.
struct HelperList(Vec<ItemFn>);

impl syn::parse::Parse for HelperList {
    fn parse(input: syn::parse::ParseStream<'_>) -> syn::Result<Self> {
        let mut helpers = Vec::new();
        while !input.is_empty() {
            helpers.push(input.parse()?);
        }
        Ok(HelperList(helpers))
    }
}

//! What `INFO` embeds per specialization (`SpecInfo`: label, values, IR,
//! images and the text of their stages) and the functions that return the
//! stages as text: `ir()`, `thread_program(target)`, `ptx(target)` and
//! `asm(target)`. Every text is embedded once, as a `const` in `INFO`'s
//! block ([`Texts`]), however many targets share it; a PTX image takes its
//! bytes from the same `const` as its text. The thread-level programs and
//! the AMDGPU assembly go through `tile_runtime::__stage_text!`, which
//! keeps them only with `tile`'s `stage-texts` feature (on by default).

use crate::expand::Paths;
use crate::spec::Specialization;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, ToTokens};
use tile_abi::ImageKind;
use tile_codegen::driver;
use tile_ir::Function;

/// The `SpecInfo` of one specialization: its label, values, IR, images
/// and the text of their stages, whose strings go through `texts`.
pub(crate) fn spec_info(
    p: &Paths,
    s: &Specialization,
    f: &Function,
    d: &driver::Compiled,
    num_warps: Option<u32>,
    texts: &mut Texts,
) -> TokenStream {
    let (meta, rt, abi) = (&p.meta, &p.rt, &p.abi);
    let label = s.label();
    let values = s.values.iter().map(|(_, v)| *v);
    let ir = f.to_string();
    let checks = &d.bounds_checks;
    let images = d.images.iter().map(|image| {
        let kind = match image.kind {
            ImageKind::Ptx => quote!(#abi::ImageKind::Ptx),
            ImageKind::Hsaco => quote!(#abi::ImageKind::Hsaco),
            ImageKind::Host => quote!(#abi::ImageKind::Host),
        };
        let target = image.target.to_string();
        // PTX is text: the image's bytes are those of its `asm()`.
        let bytes = match std::str::from_utf8(&image.bytes) {
            Ok(ptx) if image.kind == ImageKind::Ptx => {
                let ptx = texts.ptx(ptx);
                quote!(#ptx.as_bytes())
            }
            _ => proc_macro2::Literal::byte_string(&image.bytes).into_token_stream(),
        };
        let shared = image.shared_memory_bytes;
        let threads = image.block_threads;
        quote!(#rt::Image { kind: #kind, target: #target, bytes: #bytes, shared_memory_bytes: #shared, block_threads: #threads })
    }).collect::<Vec<_>>();
    let target_texts = d.images.iter().zip(&d.texts).map(|(image, text)| {
        let target = text.target.to_string();
        let thread_program = texts.extra(text.thread_program.as_deref());
        let assembly = match (&text.amdgpu_assembly, std::str::from_utf8(&image.bytes)) {
            (Some(assembly), _) => texts.extra(Some(assembly)),
            (None, Ok(ptx)) if image.kind == ImageKind::Ptx => {
                let ptx = texts.ptx(ptx);
                quote!(::core::option::Option::Some(#ptx))
            }
            (None, _) => texts.extra(None),
        };
        quote!(#meta::TargetText { target: #target, thread_program: #thread_program, assembly: #assembly })
    });
    let host_checks = d.host_checks.iter().map(|check| {
        let (op, values): (&str, u8) = (&check.op, check.values);
        quote!(#abi::HostCheck { op: ::std::borrow::Cow::Borrowed(#op), values: #values })
    });
    let num_warps = match num_warps {
        Some(n) => quote!(::core::option::Option::Some(#n)),
        None => quote!(::core::option::Option::None),
    };
    quote!(#meta::SpecInfo {
        label: #label,
        values: &[#(#values),*],
        num_warps: #num_warps,
        ir: #ir,
        images: &[#(#images),*],
        texts: &[#(#target_texts),*],
        bounds_checks: &[#(#checks),*],
        host_checks: &[#(#host_checks),*],
    })
}

/// The texts `INFO` embeds, each once as a `const` however many targets
/// share it: the PTX of the `sm_*` images (`&str`, also their bytes), and
/// the thread-level programs and AMDGPU assembly (`Option<&str>`, through
/// `__stage_text!`, which leaves them out without `tile`'s `stage-texts`).
#[derive(Default)]
pub(crate) struct Texts {
    ptx: Vec<String>,
    extra: Vec<String>,
}

/// The name of text `index` of a pool.
fn text_name(pool: &str, index: usize) -> syn::Ident {
    format_ident!("__TILE_{}_{}", pool, index, span = Span::mixed_site())
}

/// The index of `text` in `pool`, added if new.
fn intern(pool: &mut Vec<String>, text: &str) -> usize {
    match pool.iter().position(|t| t == text) {
        Some(index) => index,
        None => {
            pool.push(text.to_string());
            pool.len() - 1
        }
    }
}

impl Texts {
    /// The `&str` constant holding the PTX `text`.
    fn ptx(&mut self, text: &str) -> syn::Ident {
        text_name("PTX", intern(&mut self.ptx, text))
    }

    /// An `Option<&str>` of the thread-level program or AMDGPU assembly
    /// `text` (`None` without one).
    fn extra(&mut self, text: Option<&str>) -> TokenStream {
        match text {
            Some(text) => text_name("TEXT", intern(&mut self.extra, text)).into_token_stream(),
            None => quote!(::core::option::Option::None),
        }
    }

    /// The constants.
    pub(crate) fn items(&self, p: &Paths) -> TokenStream {
        let rt = &p.rt;
        let ptx = self.ptx.iter().enumerate().map(|(i, text)| {
            let name = text_name("PTX", i);
            quote!(const #name: &str = #text;)
        });
        let extra = self.extra.iter().enumerate().map(|(i, text)| {
            let name = text_name("TEXT", i);
            quote!(const #name: ::core::option::Option<&str> = #rt::__stage_text!(#text);)
        });
        quote!(#(#ptx)* #(#extra)*)
    }
}

/// `ir()`, `thread_program(target)`, `ptx(target)` and `asm(target)`: the
/// embedded stages of the specialization as text, for reading and for
/// snapshot tests.
pub(crate) fn stage_fns(p: &Paths, bound: &TokenStream) -> TokenStream {
    let meta = &p.meta;
    let stage = |name: &str, stage: TokenStream, doc: &str| {
        let name = format_ident!("{}", name);
        quote! {
            #[doc = #doc]
            pub fn #name(target: &str) -> ::core::result::Result<&'static str, #meta::NoStage> #bound {
                Self::INFO.stage(Self::spec(), #stage, target)
            }
        }
    };
    let thread = stage(
        "thread_program",
        quote!(#meta::Stage::ThreadProgram),
        "The thread-level program this specialization's image for the GPU `target` (`\"sm_80\"`, `\"gfx942\"`) was compiled from, as text; an error names the targets that have one.",
    );
    let ptx = stage(
        "ptx",
        quote!(#meta::Stage::Ptx),
        "The PTX of this specialization for the NVIDIA `target` (`\"sm_80\"`); an error names the targets that have one.",
    );
    let asm = stage(
        "asm",
        quote!(#meta::Stage::Assembly),
        "The assembly of this specialization for the GPU `target`: PTX for `sm_*`, AMDGPU assembly for `gfx*` (host code is embedded as a shared object only); an error names the targets that have one.",
    );
    quote! {
        /// The tile IR of this specialization after the pass pipeline, as
        /// text: what every target compiles, and what `interpret` runs.
        pub fn ir() -> &'static str #bound {
            Self::spec().ir
        }

        #thread
        #ptx
        #asm
    }
}

//! The code `#[tile_kernel]` expands to.
//!
//! For `fn vector_add<const BLOCK: usize>(x: &Tensor<f32>, ...)` it emits a
//! unit struct `vector_add<const BLOCK: usize>` (the function itself is
//! consumed: its body is tile code, not Rust) with
//! - `INFO`: a `tile_runtime::meta::KernelInfo` with the parameters, options and
//!   every compiled specialization's optimized IR text;
//! - `spec()`: the compiled specialization for the const arguments, checked
//!   at compile time (an uncompiled one is a compile error listing the
//!   compiled ones) and `try_spec()`, its run-time counterpart;
//! - `launch(&device, grid, (args...))`, typed by the signature, which
//!   calls `tile_runtime::launch`, and `interpret(grid, (args...))`, which
//!   runs the reference interpreter directly on host tensors;
//! - `ir()`, `thread_program(target)`, `ptx(target)` and `asm(target)`: the
//!   specialization's stages as text (every text once, as a `const` in
//!   `INFO`'s block, however many targets share it).
//!
//! After them come the register warnings of the GPU images (`warnings.rs`).
//!
//! Every path to the user-facing crate goes through `Paths`. On any error
//! the same items are emitted with no specialization next to the
//! `compile_error!`, so the rest of the user's crate keeps compiling.

use crate::attr::KernelAttr;
use crate::embed::{spec_info, stage_fns, Texts};
pub use crate::options::{CacheChoice, ExpandOptions};
use crate::signature::{KernelSig, ParamSig};
use crate::spec::{self, Specialization};
use crate::warnings;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::ItemFn;
use tile_abi::ParamKind;
use tile_codegen::{driver, CodegenOptions, Target};
use tile_ir::Function;

/// The paths generated code uses, all through the facade crate `tile`.
pub(crate) struct Paths {
    pub(crate) abi: TokenStream,
    pub(crate) meta: TokenStream,
    pub(crate) ir: TokenStream,
    pub(crate) rt: TokenStream,
    pub(crate) half: TokenStream,
    pub(crate) private: TokenStream,
}

impl Paths {
    pub(crate) fn new() -> Paths {
        Paths {
            abi: quote!(::tile::__private::abi),
            meta: quote!(::tile::__private::meta),
            ir: quote!(::tile::__private::ir),
            rt: quote!(::tile::__private::runtime),
            half: quote!(::tile::__private::half),
            private: quote!(::tile::__private),
        }
    }
}

/// Expands `#[tile_kernel(attr)] item`.
pub fn tile_kernel(attr: TokenStream, item: TokenStream, options: &ExpandOptions) -> TokenStream {
    if let Some((uses, rest)) = crate::helpers::split_uses(&attr) {
        return match uses {
            Ok(uses) => crate::helpers::chain(&uses, rest, item),
            Err(e) => {
                let mut out = e.to_compile_error();
                out.extend(tile_kernel(rest, item, options));
                out
            }
        };
    }
    let func: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            let e = syn::Error::new(e.span(), "`#[tile_kernel]` goes on a function: `fn name<const BLOCK: usize>(x: &Tensor<f32>, ...) { ... }`");
            let mut out = e.to_compile_error();
            out.extend(item);
            return out;
        }
    };
    let sig = match KernelSig::parse(&func) {
        Ok(s) => s,
        Err(e) => {
            let mut out = e.to_compile_error();
            out.extend(fallback_struct(&func));
            return out;
        }
    };
    let attr = KernelAttr::parse(attr, options.env_targets.as_ref());
    let compiled = attr
        .as_ref()
        .map_err(Clone::clone)
        .and_then(|a| compile(&func, &sig, a, options));
    let (attr, (compiled, devices), error) = match (attr, compiled) {
        (Ok(a), Ok(c)) => (Some(a), c, None),
        (a, Err(e)) => (a.ok(), Default::default(), Some(e)),
        (Err(e), _) => (None, Default::default(), Some(e)),
    };
    let mut out = error
        .as_ref()
        .map(syn::Error::to_compile_error)
        .unwrap_or_default();
    out.extend(env_dependencies());
    out.extend(generate(
        &sig,
        attr.as_ref(),
        &compiled,
        &devices,
        error.is_some(),
    ));
    if let Some(attr) = &attr {
        for ((spec, _), device) in compiled.iter().zip(&devices) {
            out.extend(warnings::register_warnings(
                &sig.name,
                attr,
                spec,
                &device.registers,
            ));
        }
    }
    out
}

/// An item that makes cargo rebuild the crate when a variable that changes
/// what the expansion produces (`TILE_TARGETS`, `TILE_DEV_TARGETS`,
/// `TILE_DUMP`) changes: rustc records each variable `option_env!` reads in
/// the crate's dep-info, and cargo compares their values before it reuses a
/// build. The cache's variables change where results are kept, not the
/// results.
fn env_dependencies() -> TokenStream {
    quote! {
        const _: [::core::option::Option<&str>; 3] = [
            ::core::option_env!("TILE_TARGETS"),
            ::core::option_env!("TILE_DEV_TARGETS"),
            ::core::option_env!("TILE_DUMP"),
        ];
    }
}

/// Lowers, optimizes, compiles device code for and dumps every
/// specialization; with [`ExpandOptions::check_only`], lowers, optimizes
/// and checks them, with no device code.
fn compile(
    func: &ItemFn,
    sig: &KernelSig,
    attr: &KernelAttr,
    options: &ExpandOptions,
) -> syn::Result<Compiled> {
    let cache = match &options.cache {
        CacheChoice::Off => None,
        CacheChoice::On(cache) => Some(cache.clone()),
        CacheChoice::Invalid(e) => return Err(syn::Error::new(sig.name.span(), e)),
    };
    let specs = spec::resolve(attr, sig)?;
    let mut sig = sig.clone();
    sig.mark_aligned(&attr.aligned)?;
    let mut out = crate::translate_specs(func, &sig, &specs)?;
    let mut devices = Vec::new();
    // `resolve` gives one specialization per `configs(...)`, in order.
    for (config, (s, f)) in out.iter_mut().enumerate() {
        let (num_warps, target_warps) = attr.warps_of(config);
        let compile = driver::Options {
            targets: attr.targets_of(config),
            num_warps,
            target_warps,
            codegen: CodegenOptions {
                fast_math: attr.fast_math,
                approx_math: attr.approx_math,
                tma: attr.tma,
                ..CodegenOptions::default()
            },
            dump_dir: options.dump_dir.clone(),
            cache: cache.clone(),
            max_threads: options.max_threads,
            num_stages: attr.num_stages,
            target_stages: attr.target_stages.clone(),
        };
        let device = if options.check_only {
            driver::check_only(f, &s.label(), &compile).map(|()| driver::Compiled::default())
        } else {
            driver::compile(f, &s.label(), &compile)
        }
        .map_err(|e| syn::Error::new(sig.name.span(), e.to_string()))?;
        for message in &device.cache_notes {
            crate::options::note(message);
        }
        devices.push(device);
    }
    Ok((out, devices))
}

/// The specializations with their optimized IR, and their device code.
type Compiled = (Vec<(Specialization, Function)>, Vec<driver::Compiled>);

/// A struct with the kernel's name (and const parameters when they parse)
/// for a signature the front end rejected.
fn fallback_struct(func: &ItemFn) -> TokenStream {
    let (name, vis) = (&func.sig.ident, &func.vis);
    let consts: Vec<&syn::ConstParam> = func.sig.generics.const_params().collect();
    let doc = format!("The tile kernel `{name}`, which failed to compile (see the error).");
    if consts.len() == func.sig.generics.params.len() {
        quote! { #[doc = #doc] #[allow(non_camel_case_types)] #vis struct #name<#(#consts),*>; }
    } else {
        quote! { #[doc = #doc] #[allow(non_camel_case_types)] #vis struct #name; }
    }
}

fn dtype_tokens(p: &Paths, d: tile_ir::DType) -> TokenStream {
    let variant = format_ident!("{}", format!("{d:?}"));
    let ir = &p.ir;
    quote!(#ir::DType::#variant)
}

fn generate(
    sig: &KernelSig,
    attr: Option<&KernelAttr>,
    compiled: &[(Specialization, Function)],
    devices: &[driver::Compiled],
    failed: bool,
) -> TokenStream {
    let p = Paths::new();
    let Paths { meta, .. } = &p;
    let (name, vis) = (&sig.name, &sig.vis);
    let name_str = name.to_string();
    let const_names: Vec<String> = sig.consts.iter().map(|c| c.name.to_string()).collect();
    let const_idents: Vec<&syn::Ident> = sig.consts.iter().map(|c| &c.name).collect();
    let const_types: Vec<&syn::Ident> = sig.consts.iter().map(|c| &c.ty).collect();
    let params = sig.params.iter().map(|q| {
        let pname = q.name.to_string();
        let d = dtype_tokens(&p, q.dtype);
        let kind = match q.kind {
            ParamKind::Tensor { rank, mutable } => {
                quote!(#meta::ParamKind::Tensor { rank: #rank, mutable: #mutable })
            }
            ParamKind::Tensors { rank, mutable } => {
                quote!(#meta::ParamKind::Tensors { rank: #rank, mutable: #mutable })
            }
            ParamKind::Scalar => quote!(#meta::ParamKind::Scalar),
        };
        // Only a valid attribute compiles anything; without one, nothing
        // is promised.
        let aligned = attr.is_some_and(|a| a.aligned.contains(&q.name));
        quote!(#meta::ParamInfo { name: #pname, dtype: #d, kind: #kind, aligned: #aligned })
    });
    let mut texts = Texts::default();
    let specs: Vec<TokenStream> = compiled
        .iter()
        .zip(devices)
        .enumerate()
        .map(|(config, ((s, f), d))| {
            let warps = attr.and_then(|a| a.configs.get(config)?.num_warps);
            spec_info(&p, s, f, d, warps, &mut texts)
        })
        .collect();
    let text_consts = texts.items(&p);
    let num_warps = attr.map_or(crate::attr::DEFAULT_NUM_WARPS, |a| a.num_warps);
    let per_target = |values: &[(Target, u32)]| -> Vec<TokenStream> {
        values
            .iter()
            .map(|(t, n)| {
                let t = t.to_string();
                quote!((#t, #n))
            })
            .collect()
    };
    let target_warps = per_target(attr.map_or(&[][..], |a| &a.target_warps));
    let target_stages = per_target(attr.map_or(&[][..], |a| &a.target_stages));
    let fast_math = attr.is_some_and(|a| a.fast_math);
    let approx_math = attr.is_some_and(|a| a.approx_math);
    let num_stages = match attr.and_then(|a| a.num_stages) {
        Some(n) => quote!(::core::option::Option::Some(#n)),
        None => quote!(::core::option::Option::None),
    };
    let targets: Vec<String> = attr.map_or_else(Vec::new, |a| {
        a.targets.iter().map(ToString::to_string).collect()
    });
    let compiled_list = if compiled.is_empty() {
        "none".to_string()
    } else {
        compiled
            .iter()
            .map(|(s, _)| s.label())
            .collect::<Vec<_>>()
            .join("; ")
    };
    let (compiled_trait, bound) = if failed {
        (TokenStream::new(), TokenStream::new())
    } else {
        compiled_bound(sig, compiled, &compiled_list)
    };
    // After a reported error, do not add a second one at every use. The
    // panic cannot fire after `bound` held; it only guards `INDEX` itself.
    let check = if failed {
        quote!(0)
    } else {
        quote! {
            match Self::INFO.index_of(&[#(#const_idents as i128),*]) {
                ::core::option::Option::Some(i) => i,
                ::core::option::Option::None => ::core::panic!("this specialization was not compiled"),
            }
        }
    };
    let spec_body = if failed {
        quote!(::core::panic!("this kernel failed to compile"))
    } else {
        quote!(&Self::INFO.specializations[Self::INDEX])
    };
    let mut launcher = TokenStream::new();
    if !failed {
        launcher.extend(stage_fns(&p, &bound));
        launcher.extend(launcher_fn(&p, sig, &bound));
        launcher.extend(interpreter(&p, sig, &bound));
    }
    let doc = format!(
        "The tile kernel `{name_str}`: its metadata is `INFO`; run it with `launch` (or `interpret`)."
    );
    // The struct is spanned at the kernel's name, where rustc's notes about
    // it (an uncompiled specialization) point.
    let item = quote_spanned! {name.span()=>
        #vis struct #name<#(const #const_idents: #const_types),*>;
    };
    quote! {
        #[doc = #doc]
        #[allow(non_camel_case_types)]
        #item

        #compiled_trait

        impl<#(const #const_idents: #const_types),*> #name<#(#const_idents),*> {
            /// The kernel's parameters, options and compiled specializations.
            pub const INFO: #meta::KernelInfo = {
                #text_consts
                #meta::KernelInfo {
                    name: #name_str,
                    const_params: &[#(#const_names),*],
                    params: &[#(#params),*],
                    num_warps: #num_warps,
                    target_warps: &[#(#target_warps),*],
                    num_stages: #num_stages,
                    target_stages: &[#(#target_stages),*],
                    fast_math: #fast_math,
                    approx_math: #approx_math,
                    targets: &[#(#targets),*],
                    specializations: &[#(#specs),*],
                }
            };

            /// The index in `INFO.specializations` of these const arguments;
            /// using it for an uncompiled specialization is a compile error.
            const INDEX: usize = #check;

            /// The compiled specialization for these const arguments (a
            /// compile error if it was not compiled).
            pub fn spec() -> &'static #meta::SpecInfo #bound {
                #spec_body
            }

            /// The compiled specialization for these const arguments, or an
            /// error listing the compiled ones.
            pub fn try_spec() -> ::core::result::Result<&'static #meta::SpecInfo, #meta::NotCompiled> {
                Self::INFO.find(&[#(#const_idents as i128),*])
            }

            #launcher
        }
    }
}

/// A hidden trait implemented by the compiled specializations, and the
/// `where` clause that requires it: using an uncompiled one is an error
/// at the use whose first lines say which specialization is missing and the
/// `configs(...)` that compiles it.
///
/// The trait takes the kernel's const parameters as its own, so its
/// `on_unimplemented` message can name the values asked for; its impls are
/// `do_not_recommend`, so rustc does not list them after the message (the
/// note lists the compiled specializations).
fn compiled_bound(
    sig: &KernelSig,
    compiled: &[(Specialization, Function)],
    compiled_list: &str,
) -> (TokenStream, TokenStream) {
    let (name, vis) = (&sig.name, &sig.vis);
    let tr = format_ident!("__tile_compiled_{}", name);
    let const_idents: Vec<&syn::Ident> = sig.consts.iter().map(|c| &c.name).collect();
    let const_types: Vec<&syn::Ident> = sig.consts.iter().map(|c| &c.ty).collect();
    let asked = const_idents
        .iter()
        .map(|c| format!("{c}={{{c}}}"))
        .collect::<Vec<_>>()
        .join(",");
    let configs = const_idents
        .iter()
        .map(|c| format!("{c} = {{{c}}}"))
        .collect::<Vec<_>>()
        .join(", ");
    let message = format!("kernel `{name}` was not compiled for {asked}");
    let label =
        format!("add `configs({configs})` to the `#[tile_kernel]` of `{name}` to compile it");
    let note = format!("`{name}` is compiled for: {compiled_list}");
    let impls = compiled.iter().map(|(s, _)| {
        let args: Vec<TokenStream> = s
            .values
            .iter()
            .map(|(_, v)| {
                let lit = proc_macro2::Literal::i128_unsuffixed(*v);
                quote!({ #lit })
            })
            .collect();
        quote! {
            #[diagnostic::do_not_recommend]
            impl #tr<#(#args),*> for #name<#(#args),*> {}
        }
    });
    let defs = quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
        #vis trait #tr<#(const #const_idents: #const_types),*> {}
        #(#impls)*
    };
    (
        defs,
        quote_spanned!(name.span()=> where Self: #tr<#(#const_idents),*>),
    )
}

fn arg_type(p: &Paths, q: &ParamSig) -> TokenStream {
    let elem = match q.elem.to_string().as_str() {
        "f16" | "bf16" => {
            let (half, e) = (&p.half, &q.elem);
            quote!(#half::#e)
        }
        "f8e4m3" | "f8e5m2" | "f4e2m1" | "f6e2m3" | "f6e3m2" | "f8e8m0" => {
            let (private, e) = (&p.private, &q.elem);
            quote!(#private::#e)
        }
        _ => {
            let e = &q.elem;
            quote!(#e)
        }
    };
    let rt = &p.rt;
    match q.kind {
        ParamKind::Tensor { mutable: true, .. } => quote!(&'a mut #rt::Tensor<#elem>),
        ParamKind::Tensor { mutable: false, .. } => quote!(&'a #rt::Tensor<#elem>),
        ParamKind::Tensors { mutable: true, .. } => quote!(&'a mut [#rt::Tensor<#elem>]),
        ParamKind::Tensors { mutable: false, .. } => quote!(&'a [#rt::Tensor<#elem>]),
        ParamKind::Scalar => elem,
    }
}

/// `interpret(grid, (args...))`: runs the kernel through the reference
/// interpreter on host tensors, writing the `&mut` ones back.
fn interpreter(p: &Paths, sig: &KernelSig, bound: &TokenStream) -> TokenStream {
    let (ir, meta, rt) = (&p.ir, &p.meta, &p.rt);
    let count = sig.params.len();
    let mut types = Vec::new();
    let mut names = Vec::new();
    let mut conv = Vec::new();
    let mut back = Vec::new();
    for (i, q) in sig.params.iter().enumerate() {
        let n = format_ident!("arg_{}", q.name, span = Span::mixed_site());
        match q.kind {
            ParamKind::Tensor { mutable, .. } => {
                types.push(if mutable {
                    quote!(&mut #ir::interp::HostTensor)
                } else {
                    quote!(&#ir::interp::HostTensor)
                });
                conv.push(quote!(#ir::interp::Arg::Tensor(::core::clone::Clone::clone(&*#n))));
                if mutable {
                    back.push(quote!(#meta::write_back(::core::mem::replace(&mut run_args[#i], #ir::interp::Arg::Scalar(#ir::Scalar::Bool(false))), #n);));
                }
            }
            ParamKind::Tensors { mutable, .. } => {
                types.push(if mutable {
                    quote!(&mut [#ir::interp::HostTensor])
                } else {
                    quote!(&[#ir::interp::HostTensor])
                });
                conv.push(
                    quote!(#ir::interp::Arg::Tensors(<[#ir::interp::HostTensor]>::to_vec(&*#n))),
                );
                if mutable {
                    back.push(quote!(#meta::write_back_all(::core::mem::replace(&mut run_args[#i], #ir::interp::Arg::Scalar(#ir::Scalar::Bool(false))), #n);));
                }
            }
            ParamKind::Scalar => {
                let elem = arg_type(p, q);
                let variant = format_ident!("{}", format!("{:?}", q.dtype));
                types.push(elem);
                conv.push(quote!(#ir::interp::Arg::Scalar(#ir::Scalar::#variant(#n))));
            }
        }
        names.push(n);
    }
    quote! {
        /// Runs the kernel through the reference interpreter over `grid`
        /// (one to three axes, see `tile::Grid`) on host tensors; the
        /// `&mut` tensors receive the results. Dtypes and ranks are checked
        /// against the parameters.
        pub fn interpret<const __GRID_AXES: usize>(
            grid: [u32; __GRID_AXES],
            args: (#(#types,)*),
        ) -> ::core::result::Result<(), #meta::InterpretError>
        #bound, [u32; __GRID_AXES]: #rt::Grid {
            let (#(#names,)*) = args;
            let mut run_args: [#ir::interp::Arg; #count] = [#(#conv),*];
            #meta::interpret(Self::spec(), &grid, &mut run_args)?;
            #(#back)*
            ::core::result::Result::Ok(())
        }
    }
}

fn launcher_fn(p: &Paths, sig: &KernelSig, bound: &TokenStream) -> TokenStream {
    let rt = &p.rt;
    let count = sig.params.len();
    let types: Vec<TokenStream> = sig.params.iter().map(|q| arg_type(p, q)).collect();
    let names: Vec<syn::Ident> = sig
        .params
        .iter()
        .map(|q| format_ident!("arg_{}", q.name, span = Span::mixed_site()))
        .collect();
    let conv = sig.params.iter().zip(&names).map(|(q, n)| match q.kind {
        ParamKind::Scalar => quote!(#rt::LaunchArg::scalar(#n)),
        ParamKind::Tensor { .. } | ParamKind::Tensors { .. } => quote!(#rt::LaunchArg::from(#n)),
    });
    // The grid's rank is each launcher's own const parameter, named so that
    // it cannot collide with the kernel's const parameters (`G` is a common
    // name for a group size); `interpret` does the same.
    // What both launchers do first: the kernel, the grid as three axes and
    // the arguments converted.
    let prologue = quote! {
        let kernel = Self::kernel_spec();
        let grid3 = #rt::Grid::axes(grid);
        let (#(#names,)*) = args;
        let mut launch_args: [#rt::LaunchArg<'_>; #count] = [#(#conv),*];
    };
    quote! {
        /// This specialization as the runtime launches it (for
        /// `tile::launch`, or `Device::kernel_code` to see what runs it).
        pub fn kernel_spec() -> #rt::KernelSpec #bound {
            let spec = Self::spec();
            // SAFETY: `images` are this expansion's own compilation of
            // exactly `ir`, with its bounds and host check lists.
            unsafe {
                #rt::KernelSpec::new(
                    Self::INFO.name,
                    spec.label,
                    spec.ir,
                    Self::INFO.spec_warps(spec),
                    spec.images,
                    spec.bounds_checks,
                    spec.host_checks,
                )
            }
        }

        /// Launches the kernel over `grid` (one to three axes, see
        /// `tile::Grid`) on `device` and waits for it. Argument count,
        /// element types and mutability are checked by the argument tuple's
        /// type; tensor ranks at launch.
        pub fn launch<'a, const __GRID_AXES: usize>(
            device: &#rt::Device,
            grid: [u32; __GRID_AXES],
            args: (#(#types,)*),
        ) -> ::core::result::Result<(), #rt::Error>
        #bound, [u32; __GRID_AXES]: #rt::Grid {
            #prologue
            #rt::launch(device, &kernel, grid3, &mut launch_args)
        }

        /// Queues the kernel over `grid` on `stream` (see `tile::Stream`;
        /// on a GPU it runs while the host goes on, and the stream's
        /// `synchronize` reports what failed on the device), with the checks
        /// of `launch`.
        pub fn launch_on<'a, const __GRID_AXES: usize>(
            stream: &#rt::Stream,
            grid: [u32; __GRID_AXES],
            args: (#(#types,)*),
        ) -> ::core::result::Result<(), #rt::Error>
        #bound, [u32; __GRID_AXES]: #rt::Grid {
            #prologue
            #rt::launch_on(stream, &kernel, grid3, &mut launch_args)
        }
    }
}

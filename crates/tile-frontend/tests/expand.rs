//! The generated code's shape: the struct, its metadata and launchers, and
//! what is still emitted next to a `compile_error!`.

use quote::quote;
use tile_codegen::cache::Cache;
use tile_frontend::attr::EnvTargets;
use tile_frontend::expand::{tile_kernel, CacheChoice, ExpandOptions};

/// Expands for the host target only (no GPU code: fast).
fn expand(attr: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> syn::File {
    let options = ExpandOptions {
        env_targets: Some(EnvTargets::tile_targets("host")),
        ..ExpandOptions::default()
    };
    let out = tile_kernel(attr, item, &options);
    syn::parse2(out).expect("the expansion is valid Rust syntax")
}

#[test]
fn gpu_targets_embed_ptx_and_code_objects_with_their_bounds_checks() {
    let out = tile_kernel(
        quote!(configs(B = 64), targets = "sm_80,gfx90a,host"),
        quote! {
            fn copy<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
                let pid = program_id(0);
                partition_view(out, [B]).store(partition_view(x, [B]).load(pid), pid);
            }
        },
        &ExpandOptions::default(),
    )
    .to_string();
    assert!(!out.contains("compile_error"), "{out}");
    assert!(
        out.contains("ImageKind :: Ptx , target : \"sm_80\""),
        "{out}"
    );
    assert!(
        out.contains("ImageKind :: Hsaco , target : \"gfx90a\""),
        "{out}"
    );
    // The unmasked load and store are checked: their ops are listed.
    assert!(
        out.contains(
            "bounds_checks : & [\"`%3 = load %2, %0` (a view of `x`)\" , \
             \"`store %3, %1, %0` (a view of `out`)\"]"
        ),
        "{out}"
    );
}

#[test]
fn a_tile_too_large_for_gpu_registers_is_a_compile_error_naming_the_way_out() {
    let out = tile_kernel(
        quote!(configs(B = 512), targets = "sm_80"),
        quote! {
            fn k<const B: usize>(out: &mut Tensor<f32, 2>) {
                partition_view(out, [B, B]).store(full([B, B], 1.0), 0, 0);
            }
        },
        &ExpandOptions::default(),
    )
    .to_string();
    assert!(out.contains("compile_error"), "{out}");
    assert!(
        out.contains("kernel `k` (B=512) is too large for a GPU: a tile of 262144 elements gives each of the 128 threads of a block 2048 elements"),
        "{out}"
    );
}

#[test]
fn num_warps_counts_each_targets_own_warps_and_a_target_may_set_its_own() {
    let item = quote! {
        fn copy(x: &Tensor<f32>, out: &mut Tensor<f32>) {
            let pid = program_id(0);
            partition_view(out, [256]).store(partition_view(x, [256]).load(pid), pid);
        }
    };
    // A CDNA warp is a 64-lane wavefront: 4 of them are 256 threads, twice
    // sm_80's 128.
    let out = tile_kernel(
        quote!(targets = "sm_80,gfx942"),
        item.clone(),
        &ExpandOptions::default(),
    )
    .to_string();
    assert!(!out.contains("compile_error"), "{out}");
    assert!(out.contains("target : \"sm_80\" , bytes"), "{out}");
    assert_eq!(out.matches("block_threads : 128u32").count(), 1, "{out}");
    assert_eq!(out.matches("block_threads : 256u32").count(), 1, "{out}");
    assert!(out.contains("target_warps : & []"), "{out}");
    // 32 wavefronts would be 2048 threads; gfx942 sets 16 of its own.
    let out = tile_kernel(
        quote!(num_warps = 32, targets = "sm_80,gfx942"),
        item.clone(),
        &ExpandOptions::default(),
    )
    .to_string();
    assert!(
        out.contains("kernel `copy` (default) asks for 32 warps, which on gfx942 are 2048 threads a block (its warps are 64-lane wavefronts), more than the 1024 a block holds; use fewer warps there: `num_warps(gfx942 = n)` sets its own"),
        "{out}"
    );
    let out = tile_kernel(
        quote!(
            num_warps = 32,
            num_warps(gfx942 = 16),
            targets = "sm_80,gfx942"
        ),
        item,
        &ExpandOptions::default(),
    )
    .to_string();
    assert!(!out.contains("compile_error"), "{out}");
    assert_eq!(out.matches("block_threads : 1024u32").count(), 2, "{out}");
    assert!(out.contains("num_warps : 32u32"), "{out}");
    assert!(
        out.contains("target_warps : & [(\"gfx942\" , 16u32)]"),
        "{out}"
    );
}

/// A generic AMD processor takes warps of its own under its name with `_`
/// for `-`, and a refused count names it so.
#[test]
fn a_generic_processor_sets_its_own_warps_by_its_identifier() {
    let item = quote! {
        fn copy(x: &Tensor<f32>, out: &mut Tensor<f32>) {
            let pid = program_id(0);
            partition_view(out, [1024]).store(partition_view(x, [1024]).load(pid), pid);
        }
    };
    let out = tile_kernel(
        quote!(num_warps = 32, targets = "gfx9-4-generic"),
        item.clone(),
        &ExpandOptions::default(),
    )
    .to_string();
    assert!(
        out.contains("use fewer warps there: `num_warps(gfx9_4_generic = n)` sets its own"),
        "{out}"
    );
    let out = tile_kernel(
        quote!(
            num_warps = 32,
            num_warps(gfx9_4_generic = 16),
            targets = "gfx9-4-generic"
        ),
        item,
        &ExpandOptions::default(),
    )
    .to_string();
    assert!(!out.contains("compile_error"), "{out}");
    assert!(
        out.contains("target_warps : & [(\"gfx9-4-generic\" , 16u32)]"),
        "{out}"
    );
}

/// `configs(..., num_warps = n)` gives one specialization its own warps on
/// every target, in place of the kernel's and its targets' own: its images
/// have that many threads a block, and `INFO` records them with it.
#[test]
fn a_config_may_set_its_own_warps() {
    let item = quote! {
        fn copy<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
            let pid = program_id(0);
            partition_view(out, [B]).store(partition_view(x, [B]).load(pid), pid);
        }
    };
    let out = tile_kernel(
        quote!(
            configs(B = 256),
            configs(B = 1024, num_warps = 8),
            num_warps(gfx942 = 2),
            targets = "sm_80,gfx942"
        ),
        item.clone(),
        &ExpandOptions::default(),
    )
    .to_string();
    assert!(!out.contains("compile_error"), "{out}");
    // B=256: sm_80's 4 warps and gfx942's 2 wavefronts; B=1024: 8 of each.
    assert_eq!(out.matches("block_threads : 128u32").count(), 2, "{out}");
    assert_eq!(out.matches("block_threads : 256u32").count(), 1, "{out}");
    assert_eq!(out.matches("block_threads : 512u32").count(), 1, "{out}");
    assert_eq!(
        out.matches("num_warps : :: core :: option :: Option :: None")
            .count(),
        1,
        "{out}"
    );
    assert_eq!(
        out.matches("num_warps : :: core :: option :: Option :: Some (8u32)")
            .count(),
        1,
        "{out}"
    );
    let out = tile_kernel(
        quote!(configs(B = 256, num_warps = 6), targets = "sm_80"),
        item.clone(),
        &ExpandOptions::default(),
    )
    .to_string();
    assert!(
        out.contains("`num_warps` must be a power of two from 1 to 32, found 6"),
        "{out}"
    );
    let out = tile_kernel(
        quote!(
            configs(B = 256, num_warps = 4, num_warps = 8),
            targets = "sm_80"
        ),
        item,
        &ExpandOptions::default(),
    )
    .to_string();
    assert!(
        out.contains("`num_warps` is given twice in this `configs(...)`"),
        "{out}"
    );
}

/// `num_stages(sm_86 = 2)` gives a target its own stages; `INFO` records
/// them beside the kernel's.
#[test]
fn a_target_may_set_its_own_stages() {
    let out = tile_kernel(
        quote!(
            num_stages = 4,
            num_stages(sm_86 = 2),
            targets = "sm_80,sm_86"
        ),
        quote! {
            fn copy(x: &Tensor<f32>, out: &mut Tensor<f32>) {
                let pid = program_id(0);
                partition_view(out, [256]).store(partition_view(x, [256]).load(pid), pid);
            }
        },
        &ExpandOptions::default(),
    )
    .to_string();
    assert!(!out.contains("compile_error"), "{out}");
    assert!(
        out.contains("num_stages : :: core :: option :: Option :: Some (4u32)"),
        "{out}"
    );
    assert!(
        out.contains("target_stages : & [(\"sm_86\" , 2u32)]"),
        "{out}"
    );
}

fn methods(file: &syn::File) -> Vec<String> {
    let mut names = Vec::new();
    for item in &file.items {
        if let syn::Item::Impl(i) = item {
            for it in &i.items {
                match it {
                    syn::ImplItem::Fn(f) => names.push(f.sig.ident.to_string()),
                    syn::ImplItem::Const(c) => names.push(c.ident.to_string()),
                    _ => {}
                }
            }
        }
    }
    names
}

fn has_compile_error(file: &syn::File) -> bool {
    file.items.iter().any(|i| matches!(i, syn::Item::Macro(m) if m.mac.path.segments.last().is_some_and(|s| s.ident == "compile_error")))
}

fn kernel() -> proc_macro2::TokenStream {
    quote! {
        pub fn axpy<const B: usize>(x: &Tensor<f16>, y: &mut Tensor<f16>, a: f16) {
            let pid = program_id(0);
            let v = partition_view(y, [B]);
            v.store_masked(partition_view(x, [B]).load_masked(pid) * a + v.load_masked(pid), pid);
        }
    }
}

#[test]
fn the_launcher_takes_typed_arguments() {
    let file = expand(quote!(configs(B = 128)), kernel());
    assert!(!has_compile_error(&file));
    assert_eq!(
        methods(&file),
        [
            "INFO",
            "INDEX",
            "spec",
            "try_spec",
            "ir",
            "thread_program",
            "ptx",
            "asm",
            "kernel_spec",
            "launch",
            "launch_on",
            "interpret"
        ]
    );
    let text = quote!(#file).to_string();
    assert!(
        text.contains("args : (& 'a :: tile :: __private :: runtime :: Tensor < :: tile :: __private :: half :: f16 > , & 'a mut :: tile :: __private :: runtime :: Tensor < :: tile :: __private :: half :: f16 > , :: tile :: __private :: half :: f16 ,)"),
        "{text}"
    );
    assert!(text.contains("runtime :: LaunchArg :: scalar"), "{text}");
}

#[test]
fn an_error_still_emits_the_struct_and_its_metadata() {
    // `B = 0` breaks the shape rule: the error comes with the items, so
    // uses of `axpy::<..>::INFO` elsewhere in the crate still resolve.
    let file = expand(quote!(configs(B = 0)), kernel());
    assert!(has_compile_error(&file));
    assert!(file
        .items
        .iter()
        .any(|i| matches!(i, syn::Item::Struct(s) if s.ident == "axpy")));
    assert_eq!(methods(&file), ["INFO", "INDEX", "spec", "try_spec"]);
}

#[test]
fn a_bad_signature_still_emits_the_struct() {
    let file = expand(
        quote!(),
        quote!(
            fn k<const B: usize>(x: Vec<f32>) {}
        ),
    );
    assert!(has_compile_error(&file));
    assert!(file.items.iter().any(
        |i| matches!(i, syn::Item::Struct(s) if s.ident == "k" && s.generics.params.len() == 1)
    ));
}

#[test]
fn tile_targets_applies_when_the_attribute_names_none() {
    let with_env = |targets: &str, attr: proc_macro2::TokenStream| {
        let options = ExpandOptions {
            env_targets: Some(EnvTargets::tile_targets(targets)),
            ..ExpandOptions::default()
        };
        tile_kernel(attr, kernel(), &options).to_string()
    };
    let out = with_env("host,sm_90", quote!(configs(B = 128)));
    let host_levels: Vec<String> = tile_abi::HostIsa::for_this_architecture()
        .iter()
        .map(|isa| format!("{:?} , ", isa.name()))
        .collect();
    let want = format!(r#"targets : & [{}"sm_90"]"#, host_levels.concat());
    assert!(out.contains(&want), "{out}");
    let out = with_env("host", quote!(configs(B = 128), targets = "gfx942"));
    assert!(out.contains(r#"targets : & ["gfx942"]"#), "{out}");
    let out = with_env("sm_70", quote!(configs(B = 128)));
    assert!(
        out.contains("in TILE_TARGETS: unknown target `sm_70`"),
        "{out}"
    );
}

/// A kernel whose `B = 512` tile is too large for GPU registers.
fn square_fill() -> proc_macro2::TokenStream {
    quote! {
        fn k<const B: usize>(out: &mut Tensor<f32, 2>) {
            partition_view(out, [B, B]).store(full([B, B], 1.0), 0, 0);
        }
    }
}

#[test]
fn a_specialization_can_be_limited_to_some_targets() {
    let expand_with = |env: Option<&str>, attr: proc_macro2::TokenStream| {
        let options = ExpandOptions {
            env_targets: env.map(EnvTargets::tile_targets),
            ..ExpandOptions::default()
        };
        tile_kernel(attr, square_fill(), &options).to_string()
    };
    let count = |out: &str, what: &str| out.matches(what).count();
    let levels = tile_abi::HostIsa::for_this_architecture().len();
    // B = 512 only for the host: no register check and no PTX for it.
    let out = expand_with(
        None,
        quote!(
            configs(B = 64),
            configs(B = 512, targets = "host"),
            targets = "sm_80,host"
        ),
    );
    assert!(!out.contains("compile_error"), "{out}");
    assert_eq!(count(&out, "ImageKind :: Ptx"), 1, "{out}");
    assert_eq!(count(&out, "ImageKind :: Host"), 2 * levels, "{out}");
    // The kernel's own targets stay those of the attribute.
    let host_levels: Vec<String> = tile_abi::HostIsa::for_this_architecture()
        .iter()
        .map(|isa| format!(" , {:?}", isa.name()))
        .collect();
    let want = format!(r#"targets : & ["sm_80"{}]"#, host_levels.concat());
    assert!(out.contains(&want), "{out}");
    // A set's target that the kernel is not built for is not compiled.
    let out = expand_with(
        Some("sm_80"),
        quote!(configs(B = 64), configs(B = 512, targets = "host")),
    );
    assert!(!out.contains("compile_error"), "{out}");
    assert_eq!(count(&out, "ImageKind :: Ptx"), 1, "{out}");
    assert_eq!(count(&out, "ImageKind :: Host"), 0, "{out}");
    // Without the limit, B = 512 is checked for the GPU and refused.
    let out = expand_with(None, quote!(configs(B = 512), targets = "sm_80,host"));
    assert!(out.contains("is too large for a GPU"), "{out}");
    // Errors in a set's targets.
    for (attr, message) in [
        (
            quote!(configs(B = 64, targets = "sm_99")),
            "unknown target `sm_99`",
        ),
        (
            quote!(configs(B = 64, targets = "host", targets = "sm_80")),
            "`targets` is given twice in this `configs(...)`",
        ),
        (
            quote!(configs(B = "64")),
            "expected an integer for `B` (or `targets = \\\"...\\\"`)",
        ),
    ] {
        let out = expand_with(None, attr);
        assert!(out.contains(message), "{message}: {out}");
    }
}

/// A kernel whose transpose goes through more shared memory than a block
/// has is a compile error naming the amount and the target's limit.
#[test]
fn shared_memory_beyond_the_target_is_a_compile_error() {
    let options = ExpandOptions {
        env_targets: Some(EnvTargets::tile_targets("sm_80,gfx942")),
        ..ExpandOptions::default()
    };
    let kernel = quote! {
        fn k<const B: usize>(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
            let t = partition_view(x, [B, B]).load(0, 0);
            partition_view(out, [B, B]).store(t.permute([1, 0]), 0, 0);
        }
    };
    let out = tile_kernel(quote!(configs(B = 64)), kernel.clone(), &options).to_string();
    assert!(!out.contains("compile_error"), "{out}");
    let out = tile_kernel(quote!(configs(B = 256)), kernel, &options).to_string();
    assert!(
        out.contains("kernel `k` (B=256) needs")
            && out.contains("bytes of shared memory per block, more than the 166912 of sm_80"),
        "{out}"
    );
}

/// With the kernel cache, a second expansion takes every image from it and
/// generates the very code the first did, and that the expansion without a
/// cache generates.
#[test]
fn the_kernel_cache_gives_the_same_expansion() {
    let dir = std::env::temp_dir().join(format!("tile-expand-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cache = Cache::open(&dir, 1 << 30).expect("a writable cache");
    let with = |cache: CacheChoice| {
        let options = ExpandOptions {
            env_targets: Some(EnvTargets::tile_targets("sm_80,host")),
            cache,
            ..ExpandOptions::default()
        };
        tile_kernel(
            quote!(configs(B = 128), configs(B = 256)),
            kernel(),
            &options,
        )
        .to_string()
    };
    let first = with(CacheChoice::On(cache.clone()));
    assert!(!first.contains("compile_error"), "{first}");
    let entries = || -> usize {
        std::fs::read_dir(dir.join("v1/entries"))
            .unwrap()
            .map(|shard| std::fs::read_dir(shard.unwrap().path()).unwrap().count())
            .sum()
    };
    // Two specializations for sm_80 and each host level.
    let levels = tile_abi::HostIsa::for_this_architecture().len();
    assert_eq!(entries(), 2 * (1 + levels));
    let second = with(CacheChoice::On(cache));
    assert_eq!(second, first);
    assert_eq!(entries(), 2 * (1 + levels));
    assert_eq!(with(CacheChoice::Off), first);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_cache_setting_is_a_compile_error_at_the_kernel() {
    let options = ExpandOptions {
        env_targets: Some(EnvTargets::tile_targets("host")),
        cache: CacheChoice::Invalid("TILE_CACHE is `on` or `off`, found `yes`".into()),
        ..ExpandOptions::default()
    };
    let out = tile_kernel(quote!(configs(B = 128)), kernel(), &options).to_string();
    assert!(out.contains("compile_error"), "{out}");
    assert!(
        out.contains("TILE_CACHE is `on` or `off`, found `yes`"),
        "{out}"
    );
    // The struct is still emitted, so that uses of it do not add errors.
    assert!(out.contains("struct axpy"), "{out}");
}

#[test]
fn tile_dev_targets_errors_name_their_variable() {
    let options = ExpandOptions {
        env_targets: Some(EnvTargets {
            variable: "TILE_DEV_TARGETS",
            list: "host,sm_70".into(),
        }),
        ..ExpandOptions::default()
    };
    let out = tile_kernel(quote!(configs(B = 128)), kernel(), &options).to_string();
    assert!(
        out.contains("in TILE_DEV_TARGETS: unknown target `sm_70`"),
        "{out}"
    );
}

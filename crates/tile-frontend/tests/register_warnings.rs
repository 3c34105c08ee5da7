//! The build's register warnings: a GPU image that spills (NVIDIA's figures
//! from `ptxas -v`, AMD's from the code object) or exceeds the kernel's
//! `register_budget` gets a `#[deprecated]` constant used at the kernel's
//! name, whose note carries the figures; `allow(spills)` silences spills;
//! the kernel cache keeps the figures, so a cached build warns again.

use proc_macro2::TokenStream;
use quote::quote;
use tile_codegen::cache::Cache;
use tile_codegen::Tool;
use tile_frontend::attr::EnvTargets;
use tile_frontend::expand::{tile_kernel, CacheChoice, ExpandOptions};

fn expand(attr: TokenStream, item: TokenStream, cache: CacheChoice) -> String {
    if let Err(e) = Tool::Ptxas.find() {
        panic!(
            "{e}\n(the register warnings of NVIDIA targets need ptxas: run scripts/setup.sh first)"
        );
    }
    let options = ExpandOptions {
        env_targets: Some(EnvTargets::tile_targets("host")),
        cache,
        ..ExpandOptions::default()
    };
    let out = tile_kernel(attr, item, &options).to_string();
    assert!(!out.contains("compile_error"), "{out}");
    out
}

/// The notes of the expansion's `#[deprecated]` constants.
fn warnings(expansion: &str) -> Vec<String> {
    expansion
        .split("# [deprecated (note = \"")
        .skip(1)
        .map(|rest| rest[..rest.find("\")]").unwrap()].to_string())
        .collect()
}

/// A 64×64×64 f32 `dot` in one warp: 128 accumulators a thread and the
/// operands beside them, more than a thread's registers.
fn one_warp_dot() -> TokenStream {
    quote! {
        fn big_dot<const B: usize>(a: &Tensor<f32, 2>, b: &Tensor<f32, 2>, c: &mut Tensor<f32, 2>) {
            let ta = partition_view(a, [B, B]).load(0, 0);
            let tb = partition_view(b, [B, B]).load(0, 0);
            partition_view(c, [B, B]).store(dot(ta, tb, zeros::<f32>([B, B])), 0, 0);
        }
    }
}

/// On sm_80 only: an AMD target's spills come from its code object's
/// metadata (read in tile-codegen's `driver::registers` tests; the AMD
/// back end takes some 20 s on this kernel), its registers are measured in
/// the cached case below.
#[test]
fn an_image_that_spills_warns_at_the_kernel_with_its_figures() {
    let attr = quote!(configs(B = 64), num_warps = 1, targets = "sm_80");
    let out = expand(attr, one_warp_dot(), CacheChoice::Off);
    let notes = warnings(&out);
    assert_eq!(notes.len(), 1, "{out}");
    let note = &notes[0];
    assert!(
        note.starts_with(
            "kernel `big_dot` (B=64) spills registers to memory: sm_80: 255 registers per thread, "
        ),
        "{note}"
    );
    assert!(note.contains("bytes of spill stores and"), "{note}");
    assert!(
        note.ends_with("`allow(spills)` in `#[tile_kernel(...)]` silences this"),
        "{note}"
    );
    // The constant is used, which is what makes rustc warn.
    assert!(
        out.contains("const big_dot_spills_registers : () = () ; big_dot_spills_registers }"),
        "{out}"
    );
    // `allow(spills)` silences it.
    let attr = quote!(
        configs(B = 64),
        num_warps = 1,
        targets = "sm_80",
        allow(spills)
    );
    assert_eq!(
        warnings(&expand(attr, one_warp_dot(), CacheChoice::Off)),
        Vec::<String>::new()
    );
    // Enough warps for the tile: no spill, no warning.
    let attr = quote!(configs(B = 64), num_warps = 8, targets = "sm_80");
    assert_eq!(
        warnings(&expand(attr, one_warp_dot(), CacheChoice::Off)),
        Vec::<String>::new()
    );
}

fn copy() -> TokenStream {
    quote! {
        fn copy<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
            let pid = program_id(0);
            partition_view(out, [B]).store(partition_view(x, [B]).load(pid), pid);
        }
    }
}

#[test]
fn an_image_over_the_register_budget_warns_per_specialization() {
    let attr = quote!(
        configs(B = 128),
        configs(B = 256),
        targets = "sm_80",
        register_budget = 4
    );
    let notes = warnings(&expand(attr, copy(), CacheChoice::Off));
    assert_eq!(notes.len(), 2, "{notes:?}");
    for (note, label) in notes.iter().zip(["B=128", "B=256"]) {
        let want = format!("kernel `copy` ({label}) uses more than its `register_budget` of 4 registers per thread: sm_80: ");
        assert!(note.starts_with(&want), "{note}");
    }
    let attr = quote!(configs(B = 128), targets = "sm_80", register_budget = 255);
    assert_eq!(
        warnings(&expand(attr, copy(), CacheChoice::Off)),
        Vec::<String>::new()
    );
    // Only GPU images are measured.
    let attr = quote!(configs(B = 128), targets = "host", register_budget = 1);
    assert_eq!(
        warnings(&expand(attr, copy(), CacheChoice::Off)),
        Vec::<String>::new()
    );
}

#[test]
fn a_cached_build_warns_as_the_first_did() {
    let dir = std::env::temp_dir().join(format!("tile-register-warnings-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cache = Cache::open(&dir, 1 << 30).expect("a writable cache");
    let attr = quote!(
        configs(B = 128),
        targets = "sm_80,gfx1100",
        register_budget = 4
    );
    let first = expand(attr.clone(), copy(), CacheChoice::On(cache.clone()));
    assert_eq!(warnings(&first).len(), 1, "{first}");
    let note = &warnings(&first)[0];
    assert!(
        note.contains(": sm_80: ") && note.contains("; gfx1100: "),
        "{note}"
    );
    let second = expand(attr, copy(), CacheChoice::On(cache));
    assert_eq!(second, first);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_attribute_arguments_are_checked() {
    let options = ExpandOptions {
        env_targets: Some(EnvTargets::tile_targets("host")),
        ..ExpandOptions::default()
    };
    for (attr, message) in [
        (
            quote!(configs(B = 128), register_budget = 0),
            "`register_budget` is a number of registers per thread, at least 1",
        ),
        (
            quote!(configs(B = 128), register_budget = 64, register_budget = 32),
            "`register_budget` is given twice",
        ),
        (
            quote!(configs(B = 128), allow(registers)),
            "`allow(...)` takes `spills`: no warning when a GPU image spills registers",
        ),
    ] {
        let out = tile_kernel(attr, copy(), &options).to_string();
        assert!(out.contains(message), "{message}: {out}");
    }
}

//! The expansion in a build that produces no code (`cargo check`, clippy,
//! rustdoc, rust-analyzer: `ExpandOptions::check_only`): the build's own
//! expansion with the images left out, and the same errors, but for those of
//! LLVM's stages.

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use quote::quote;
use tile_codegen::cache::Cache;
use tile_frontend::attr::EnvTargets;
use tile_frontend::expand::{tile_kernel, CacheChoice, ExpandOptions};

/// The expansion of `attr` and `item` for `targets`, for a check or a build.
fn expand(attr: TokenStream, item: TokenStream, targets: &str, check_only: bool) -> TokenStream {
    let options = ExpandOptions {
        env_targets: Some(EnvTargets::tile_targets(targets)),
        check_only,
        ..ExpandOptions::default()
    };
    tile_kernel(attr, item, &options)
}

/// `tokens` with the lists of what a build compiles emptied: the images
/// and what comes with them (`images: &[..]`, `texts: &[..]`,
/// `bounds_checks: &[..]`, `host_checks: &[..]`), and without the
/// constants holding the stages' texts (`const __TILE_..: .. = ..;`).
fn without_images(tokens: TokenStream) -> TokenStream {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::with_capacity(trees.len());
    let mut skipping = false;
    for (i, tree) in trees.iter().enumerate() {
        let text_const = matches!(
            (tree, trees.get(i + 1)),
            (TokenTree::Ident(k), Some(TokenTree::Ident(name)))
                if k == "const" && name.to_string().starts_with("__TILE_")
        );
        if text_const || skipping {
            skipping = !matches!(tree, TokenTree::Punct(p) if p.as_char() == ';');
            continue;
        }
        let emptied = match (tree, i.checked_sub(3).map(|at| &trees[at])) {
            (TokenTree::Group(g), Some(TokenTree::Ident(field)))
                if g.delimiter() == Delimiter::Bracket
                    && ["images", "texts", "bounds_checks", "host_checks"]
                        .contains(&field.to_string().as_str()) =>
            {
                let mut empty = Group::new(Delimiter::Bracket, TokenStream::new());
                empty.set_span(g.span());
                Some(TokenTree::Group(empty))
            }
            _ => None,
        };
        out.push(emptied.unwrap_or_else(|| match tree {
            TokenTree::Group(g) => {
                let mut inner = Group::new(g.delimiter(), without_images(g.stream()));
                inner.set_span(g.span());
                TokenTree::Group(inner)
            }
            other => other.clone(),
        }));
    }
    out.into_iter().collect()
}

fn axpy() -> TokenStream {
    quote! {
        pub fn axpy<const B: usize>(x: &Tensor<f16>, y: &mut Tensor<f16>, a: f16) {
            let pid = program_id(0);
            let v = partition_view(y, [B]);
            v.store(partition_view(x, [B]).load(pid) * a + v.load(pid), pid);
        }
    }
}

#[test]
fn a_check_expands_to_the_build_without_its_images() {
    let attr = quote!(configs(B = 128), configs(B = 256));
    let build = expand(attr.clone(), axpy(), "sm_80,host", false).to_string();
    // The build has images and bounds checks to leave out.
    assert!(build.contains("ImageKind :: Ptx"), "{build}");
    assert!(build.contains("ImageKind :: Host"), "{build}");
    assert!(build.contains("bounds_checks : & [\"`%"), "{build}");
    let check = expand(attr, axpy(), "sm_80,host", true);
    let check_text = check.to_string();
    assert!(!check_text.contains("ImageKind ::"), "{check_text}");
    let build = without_images(build.parse().unwrap()).to_string();
    assert_eq!(check_text, build);
    // The IR each specialization embeds is the optimized one, in both.
    assert!(check_text.contains("ir : \""), "{check_text}");
}

#[test]
fn a_check_reports_the_front_ends_errors_as_the_build_does() {
    let cases = [
        // A shape rule broken in the one specialization.
        (quote!(configs(B = 0)), axpy()),
        // A dtype mismatch in the body, and in one of two specializations.
        (
            quote!(configs(B = 64), configs(B = 32)),
            quote! {
                fn k<const B: usize>(x: &Tensor<f16>, out: &mut Tensor<f32>) {
                    let pid = program_id(0);
                    let t = partition_view(x, [B]).load(pid);
                    let u = if B == 32 { t * 2.0f32 } else { t.cast::<f32>() };
                    partition_view(out, [B]).store(u, pid);
                }
            },
        ),
        // The attribute and the signature.
        (quote!(configs(B = 64), num_warps = 3), axpy()),
        (quote!(), quote! { fn k(x: Vec<f32>) {} }),
    ];
    for (attr, item) in cases {
        let build = expand(attr.clone(), item.clone(), "sm_80,host", false).to_string();
        let check = expand(attr, item, "sm_80,host", true).to_string();
        assert!(check.contains("compile_error"), "{check}");
        assert_eq!(check, build);
    }
}

#[test]
fn a_check_reports_the_gpu_checks_that_need_no_llvm() {
    // A tile too large for a thread's registers, and a transpose through
    // more shared memory than sm_80 has (the thread-level program's).
    let too_large = quote! {
        fn k<const B: usize>(out: &mut Tensor<f32, 2>) {
            partition_view(out, [B, B]).store(full([B, B], 1.0), 0, 0);
        }
    };
    let transpose = quote! {
        fn k<const B: usize>(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
            let t = partition_view(x, [B, B]).load(0, 0);
            partition_view(out, [B, B]).store(t.permute([1, 0]), 0, 0);
        }
    };
    for (b, item, message) in [
        (512, too_large, "kernel `k` (B=512) is too large for a GPU"),
        (
            256,
            transpose,
            "bytes of shared memory per block, more than the 166912 of sm_80",
        ),
    ] {
        let b = proc_macro2::Literal::usize_unsuffixed(b);
        let attr = quote!(configs(B = #b));
        let check = expand(attr.clone(), item.clone(), "sm_80", true).to_string();
        assert!(check.contains(message), "{check}");
        assert!(check.contains("compile_error"), "{check}");
        let build = expand(attr, item, "sm_80", false).to_string();
        assert_eq!(check, build);
    }
}

/// A check compiles nothing: with the kernel cache on it writes no entry
/// (a build writes one per target), and with `TILE_DUMP` no file.
#[test]
fn a_check_stores_nothing_in_the_cache_and_dumps_nothing() {
    let dir = std::env::temp_dir().join(format!("tile-check-only-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (cache_dir, dump_dir) = (dir.join("cache"), dir.join("dump"));
    let entries = || -> usize {
        match std::fs::read_dir(cache_dir.join("v1/entries")) {
            Ok(shards) => shards
                .map(|shard| std::fs::read_dir(shard.unwrap().path()).unwrap().count())
                .sum(),
            Err(_) => 0,
        }
    };
    let run = |check_only: bool| {
        let options = ExpandOptions {
            env_targets: Some(EnvTargets::tile_targets("sm_80")),
            cache: CacheChoice::On(Cache::open(&cache_dir, 1 << 30).expect("a writable cache")),
            dump_dir: check_only.then(|| dump_dir.clone()),
            check_only,
            ..ExpandOptions::default()
        };
        let out = tile_kernel(quote!(configs(B = 128)), axpy(), &options).to_string();
        assert!(!out.contains("compile_error"), "{out}");
    };
    run(true);
    assert_eq!(entries(), 0);
    assert!(!dump_dir.exists());
    run(false);
    assert_eq!(entries(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

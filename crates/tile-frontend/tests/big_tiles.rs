//! Kernels on the largest tiles the IR allows expand quickly: nothing is
//! evaluated element by element at build time beyond what the passes fold.

use quote::quote;
use std::time::Instant;
use tile_frontend::attr::EnvTargets;
use tile_frontend::expand::{tile_kernel, ExpandOptions};

#[test]
fn a_million_element_kernel_expands_in_reasonable_time() {
    let start = Instant::now();
    let out = tile_kernel(
        quote!(configs(B = 1024)),
        quote! {
            fn k<const B: usize>(out: &mut Tensor<f32, 2>) {
                let a = full([B, B], 1.0) + 2.0;
                let b = (a * a).exp().sum_keepdim(1);
                partition_view(out, [B, B]).store(a / b, 0, 0);
            }
        },
        // A million-element tile is for the host: on a GPU it is a compile
        // error (see tests/expand.rs).
        &ExpandOptions {
            env_targets: Some(EnvTargets::tile_targets("host")),
            ..ExpandOptions::default()
        },
    )
    .to_string();
    assert!(!out.contains("compile_error"), "{out}");
    assert!(start.elapsed().as_secs() < 20, "took {:?}", start.elapsed());
}

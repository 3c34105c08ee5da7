//! The example kernels lowered through the library, snapshotted.

mod examples;

use examples::EXAMPLES;

fn lower(attr: &str, src: &str) -> Vec<(tile_frontend::Specialization, tile_ir::Function)> {
    let item: syn::ItemFn = syn::parse_str(src).expect("example parses");
    let attr: proc_macro2::TokenStream = attr.parse().expect("attribute tokens");
    match tile_frontend::lower_kernel(attr, &item) {
        Ok(v) => v,
        Err(e) => panic!("lowering failed: {e}"),
    }
}

#[test]
fn examples_lower() {
    for (name, attr, src) in EXAMPLES {
        let out = lower(attr, src);
        assert_eq!(out.len(), 1, "{name}");
        println!("{name}: {:#?}", out[0].1.body.ops.len());
    }
}

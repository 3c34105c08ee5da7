//! The `#[tile_kernel]` and `#[tile_fn]` attributes: a thin shell over
//! [`tile_frontend`], which parses, checks and lowers the kernel to tile IR
//! at build time and generates its launcher. See `docs/guide.md`.

#![warn(missing_docs)]

use proc_macro::TokenStream;

/// Compiles a function written in the tile language to tile IR for every
/// specialization listed in `configs(...)`, and replaces it with a struct of
/// the same name holding the metadata, the IR and the launcher (the crate
/// `tile`'s documentation runs this example).
///
/// ```ignore
/// use tile::tile_kernel;
///
/// #[tile_kernel(configs(BLOCK = 1024), num_warps = 4)]
/// fn vector_add<const BLOCK: usize>(x: &Tensor<f32>, y: &Tensor<f32>, out: &mut Tensor<f32>) {
///     let pid = program_id(0);
///     let (px, py) = (partition_view(x, [BLOCK]), partition_view(y, [BLOCK]));
///     partition_view(out, [BLOCK]).store_masked(px.load_masked(pid) + py.load_masked(pid), pid);
/// }
///
/// # fn main() -> Result<(), tile::Error> {
/// let dev = tile::Device::cpu();
/// let x = dev.tensor_from_slice(&[1.0f32; 1500], &[1500])?;
/// let mut out: tile::Tensor<f32> = dev.zeros(&[1500])?;
/// vector_add::<1024>::launch(&dev, [2], (&x, &x, &mut out))?;
/// assert_eq!(out.to_vec()?, vec![2.0; 1500]);
/// assert_eq!(vector_add::<1024>::INFO.num_warps, 4);
/// # Ok(())
/// # }
/// ```
#[proc_macro_attribute]
pub fn tile_kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let options = tile_frontend::expand::ExpandOptions::from_env();
    tile_frontend::expand::tile_kernel(attr.into(), item.into(), &options).into()
}

/// Marks a helper function that kernels inline at every call: inside a
/// kernel's body, for that kernel; at module level, for the kernels of the
/// crate that name it in `#[tile_kernel(uses(name, crate::path::other))]`.
#[proc_macro_attribute]
pub fn tile_fn(_attr: TokenStream, item: TokenStream) -> TokenStream {
    tile_frontend::helpers::tile_fn(item.into()).into()
}

/// The last step of a kernel that names helpers in `uses(..)`: the kernel
/// expanded with the helpers the chain of their macros collected. Generated
/// code calls it; it is not written by hand.
#[doc(hidden)]
#[proc_macro]
pub fn __tile_kernel_with(input: TokenStream) -> TokenStream {
    let options = tile_frontend::expand::ExpandOptions::from_env();
    tile_frontend::helpers::tile_kernel_with(input.into(), &options).into()
}

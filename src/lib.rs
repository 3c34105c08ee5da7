//! `tile`: tile programming for GPUs in Rust.
pub use tile_ir as ir;
pub use tile_macros::{tile_fn, tile_kernel};
pub use tile_runtime as runtime;

/// Paths used by the code `#[tile_kernel]` generates; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use half;
    pub use tile_frontend::meta;
    pub use tile_ir as ir;
    pub use tile_runtime as runtime;
}

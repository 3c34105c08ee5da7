//! `tile`: tile programming for GPUs in Rust.
pub use tile_ir as ir;
pub use tile_runtime as runtime;

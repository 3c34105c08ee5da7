//! The `#[tile_kernel]` front end (work in progress).

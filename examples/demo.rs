//! The demo: every example kernel on the best device, checked against plain
//! Rust on random inputs whose shapes leave partial edge tiles, with a table
//! of kernel, device, shape, check and time.
//!
//! The kernels (in `examples/kernels/`) are written with `#[tile_kernel]`:
//! `cargo build` compiles them, and their launchers run them on the device.
//! Each also runs alone: `cargo run --release --example attention`.

#[path = "kernels/atomics.rs"]
mod atomics;
#[path = "kernels/attention.rs"]
mod attention;
#[path = "kernels/checked.rs"]
mod checked;
mod common;
#[path = "kernels/layernorm.rs"]
mod layernorm;
#[path = "kernels/layernorm_backward.rs"]
mod layernorm_backward;
#[path = "kernels/matmul.rs"]
mod matmul;
#[path = "kernels/persistent.rs"]
mod persistent;
#[path = "kernels/softmax.rs"]
mod softmax;
#[path = "kernels/transpose.rs"]
mod transpose;
#[path = "kernels/vector_add.rs"]
mod vector_add;

fn main() -> Result<(), tile::Error> {
    common::run_examples(&[
        vector_add::run,
        softmax::run,
        layernorm::run,
        layernorm_backward::run,
        matmul::run,
        persistent::run,
        transpose::run,
        attention::run,
        atomics::run,
        checked::run,
    ])
}

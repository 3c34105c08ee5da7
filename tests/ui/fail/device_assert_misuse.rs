use tile::tile_kernel;

// Rust's `assert!` does not run on the device: the error points to
// `device_assert!`.
#[tile_kernel]
fn rust_assert(x: &Tensor<f32>) {
    let t = partition_view(x, [16]).load(program_id(0));
    assert!(t.sum(0) > 0.0);
}

#[tile_kernel]
fn message_not_literal(x: &Tensor<f32>) {
    let t = partition_view(x, [16]).load(program_id(0));
    device_assert!(t > 0.0, 42);
}

#[tile_kernel]
fn too_few_arguments(x: &Tensor<f32>) {
    let t = partition_view(x, [16]).load(program_id(0));
    device_assert!(t > 0.0, "{} and {}", program_id(0));
}

#[tile_kernel]
fn a_tile_value(x: &Tensor<f32>) {
    let t = partition_view(x, [16]).load(program_id(0));
    device_assert!(t > 0.0, "t = {}", t);
}

#[tile_kernel]
fn a_format_spec(x: &Tensor<f32>) {
    let t = partition_view(x, [16]).load(program_id(0));
    device_assert!(t > 0.0, "sum = {:>8}", t.sum(0));
}

#[tile_kernel]
fn four_values(x: &Tensor<f32>) {
    let p = program_id(0);
    device_assert!(p < 9, "{} {} {} {}", p, p, p, p);
}

#[tile_kernel]
fn float_condition(x: &Tensor<f32>) {
    let t = partition_view(x, [16]).load(program_id(0));
    device_assert!(t, "t");
}

#[tile_kernel(configs(B = 12))]
fn always_false<const B: usize>(x: &Tensor<f32>) {
    device_assert!(B % 16 == 0, "B must be a multiple of 16");
}

fn main() {}

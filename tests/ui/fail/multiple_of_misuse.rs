use tile::tile_kernel;

// The divisor is a positive compile-time integer.
#[tile_kernel]
fn divisor_zero(x: &mut Tensor<f32, 2>, start: i32) {
    let from = multiple_of(start, 0);
    let t = partition_view(x.offset([0, from]), [1, 16]).load_masked(program_id(0), 0);
    partition_view(x, [1, 16]).store(t, program_id(0), 0);
}

#[tile_kernel]
fn divisor_at_run_time(x: &mut Tensor<f32, 2>, start: i32, n: i32) {
    let from = multiple_of(start, n);
    let t = partition_view(x.offset([0, from]), [1, 16]).load_masked(program_id(0), 0);
    partition_view(x, [1, 16]).store(t, program_id(0), 0);
}

// The hint is about integer scalars, not tiles or floats.
#[tile_kernel]
fn a_tile(x: &Tensor<f32, 2>) {
    let columns = multiple_of(iota::<i32>([16]), 8);
    device_assert!(columns < 16);
}

#[tile_kernel]
fn a_float(x: &Tensor<f32, 2>, scale: f32) {
    let s = multiple_of(scale, 2);
    device_assert!(s > 0.0);
}

// A constant that is not a multiple is known wrong at compile time.
#[tile_kernel]
fn a_constant(x: &mut Tensor<f32, 2>) {
    let from = multiple_of(12, 8);
    let t = partition_view(x.offset([0, from]), [1, 16]).load_masked(program_id(0), 0);
    partition_view(x, [1, 16]).store(t, program_id(0), 0);
}

fn main() {}

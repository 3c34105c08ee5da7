use tile::tile_kernel;

// The bitonic network needs a power-of-two last extent.
#[tile_kernel]
fn not_power_of_two(x: &Tensor<f32, 2>) {
    let s = partition_view(x, [4, 12]).load(0, 0).sort();
}

#[tile_kernel]
fn arguments(x: &Tensor<f32>) {
    let s = partition_view(x, [16]).load(0).sort_descending(0);
}

#[tile_kernel]
fn bools(x: &Tensor<i32>) {
    let s = (partition_view(x, [16]).load(0) < 3).sort();
}

#[tile_kernel]
fn scalar() {
    let s = program_id(0).sort();
}

fn main() {}

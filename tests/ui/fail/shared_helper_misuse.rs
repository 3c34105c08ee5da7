use tile::{tile_fn, tile_kernel};

#[tile_fn]
fn plus_one(t: Tile) -> Tile {
    t + 1.0
}

// A helper outside the kernel is inlined only where the kernel names it.
#[tile_kernel]
fn not_named(x: &Tensor<f32>, y: &mut Tensor<f32>) {
    let t = partition_view(x, [16]).load(program_id(0));
    partition_view(y, [16]).store(plus_one(t), program_id(0));
}

#[tile_kernel(uses = plus_one)]
fn uses_not_a_list(x: &Tensor<f32>, y: &mut Tensor<f32>) {
    let t = partition_view(x, [16]).load(program_id(0));
    partition_view(y, [16]).store(t, program_id(0));
}

#[tile_kernel(uses(plus_one))]
fn wrong_arity(x: &Tensor<f32>, y: &mut Tensor<f32>) {
    let t = partition_view(x, [16]).load(program_id(0));
    partition_view(y, [16]).store(plus_one(t, t), program_id(0));
}

// An error inside a shared helper points into the helper.
#[tile_fn]
fn broken(t: Tile) -> Tile {
    t.no_such_method()
}

#[tile_kernel(uses(broken))]
fn calls_broken(x: &Tensor<f32>, y: &mut Tensor<f32>) {
    let t = partition_view(x, [16]).load(program_id(0));
    partition_view(y, [16]).store(broken(t), program_id(0));
}

fn main() {}

use tile::tile_kernel;

#[tile_kernel]
fn too_few_arguments(x: &Tensor<f32>, y: &mut Tensor<f32>) {
    let t = gather(x);
    partition_view(y, [1]).store(t, 0);
}

#[tile_kernel]
fn not_a_tensor(x: &Tensor<f32>, y: &mut Tensor<f32>) {
    let t = partition_view(x, [16]).load(program_id(0));
    let g = gather(t, [iota::<i32>([16])]);
    partition_view(y, [16]).store(g, 0);
}

#[tile_kernel]
fn wrong_rank(x: &Tensor<f32, 2>, y: &mut Tensor<f32>) {
    let g = gather(x, [iota::<i32>([16])]);
    partition_view(y, [16]).store(g, 0);
}

#[tile_kernel]
fn float_index(x: &Tensor<f32>, y: &mut Tensor<f32>) {
    let g = gather(x, [iota::<f32>([16])]);
    partition_view(y, [16]).store(g, 0);
}

#[tile_kernel]
fn other_of_another_dtype(x: &Tensor<f32>, y: &mut Tensor<f32>) {
    let i = iota::<i32>([16]);
    let g = gather(x, [i], i < 8, 0i32);
    partition_view(y, [16]).store(g, 0);
}

#[tile_kernel]
fn shapes_that_do_not_broadcast(x: &Tensor<f32>, y: &mut Tensor<f32>) {
    let g = gather(x, [iota::<i32>([16])], iota::<i32>([8]) < 4);
    partition_view(y, [16]).store(g, 0);
}

fn main() {}

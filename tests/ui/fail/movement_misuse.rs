use tile::tile_kernel;

#[tile_kernel]
fn squeeze_a_long_axis(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
    let t = partition_view(x, [4, 8]).load(0, 0);
    partition_view(out, [4, 8]).store(t.squeeze(1).unsqueeze(1), 0, 0);
}

#[tile_kernel]
fn split_sizes(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
    let t = partition_view(x, [4, 8]).load(0, 0);
    let (a, b) = t.split([3, 4], 1);
    partition_view(out, [4, 8]).store(cat([a, b], 1), 0, 0);
}

#[tile_kernel]
fn unflatten_sizes(x: &Tensor<f32>, out: &mut Tensor<f32, 2>) {
    let t = partition_view(x, [12]).load(0);
    partition_view(out, [3, 5]).store(t.unflatten(0, [3, 5]), 0, 0);
}

#[tile_kernel]
fn stack_shapes(x: &Tensor<f32>, out: &mut Tensor<f32, 2>) {
    let t = partition_view(x, [8]).load(0);
    partition_view(out, [2, 8]).store(stack([t, t.slice([0..4])], 0), 0, 0);
}

fn main() {}

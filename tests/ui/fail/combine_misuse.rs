use tile::tile_kernel;

#[tile_kernel]
fn three_parameters(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let t = partition_view(x, [16]).load(0);
    let s = t.scan(0, |a, b, c| a + b);
    partition_view(out, [16]).store(s, 0);
}

#[tile_kernel]
fn not_a_function(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let t = partition_view(x, [16]).load(0);
    let s = t.scan(0, 3);
    partition_view(out, [16]).store(s, 0);
}

#[tile_kernel]
fn branches(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let t = partition_view(x, [16]).load(0);
    let m = t.reduce(0, |a, b| if a > b { a } else { b });
    partition_view(out, [1]).store(full([1], m), 0);
}

#[tile_kernel]
fn one_value_for_two_tiles(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let t = partition_view(x, [16]).load(0);
    let i = iota::<i32>([16]);
    let (m, _) = reduce((t, i), 0, |(a, _), (b, _)| a + b);
    partition_view(out, [1]).store(full([1], m), 0);
}

#[tile_kernel]
fn wrong_dtype(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let t = partition_view(x, [16]).load(0);
    let m = t.reduce(0, |a, b| (a + b).cast::<f16>());
    partition_view(out, [1]).store(full([1], m), 0);
}

#[tile_kernel]
fn shapes_differ(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let t = partition_view(x, [16]).load(0);
    let i = iota::<i32>([8]);
    let (m, _) = reduce((t, i), 0, |a, b| b);
    partition_view(out, [1]).store(full([1], m), 0);
}

fn main() {}

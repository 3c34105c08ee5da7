use tile::tile_kernel;

// A scatter writes a `&mut Tensor`.
#[tile_kernel]
fn read_only(out: &Tensor<f32>, x: &Tensor<i32>) {
    let i = partition_view(x, [16]).load(program_id(0));
    scatter(out, [i], 1.0);
}

#[tile_kernel]
fn index_count(out: &mut Tensor<f32, 2>, x: &Tensor<i32>) {
    let rows = partition_view(x, [16]).load(program_id(0));
    scatter(out, [rows], 1.0);
}

#[tile_kernel]
fn value_dtype(out: &mut Tensor<f32>, x: &Tensor<i32>) {
    let i = partition_view(x, [16]).load(program_id(0));
    scatter(out, [i], i);
}

#[tile_kernel]
fn float_index(out: &mut Tensor<f32>, x: &Tensor<f32>) {
    let i = partition_view(x, [16]).load(program_id(0));
    scatter(out, [i], 1.0);
}

#[tile_kernel]
fn mask_of_ints(out: &mut Tensor<f32>, x: &Tensor<i32>) {
    let i = partition_view(x, [16]).load(program_id(0));
    scatter(out, [i], 1.0, i);
}

#[tile_kernel]
fn shapes_apart(out: &mut Tensor<f32>) {
    scatter(out, [iota::<i32>([16])], zeros::<f32>([8]));
}

#[tile_kernel]
fn no_value(out: &mut Tensor<f32>) {
    scatter(out, [iota::<i32>([16])]);
}

#[tile_kernel]
fn into_a_view(out: &mut Tensor<f32>) {
    let v = partition_view(out, [16]);
    scatter(v, [iota::<i32>([16])], 1.0);
}

fn main() {}

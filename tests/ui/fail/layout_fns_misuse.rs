use tile::tile_kernel;

#[tile_kernel]
fn not_a_layout(x: &Tensor<f32>) {
    let v = layout_view(x, raked_product(3, row_major((2, 2))));
}

#[tile_kernel]
fn invalid_in_the_algebra(x: &Tensor<f32>) {
    let l = complement(make_layout((4, 4), (1, 2)), 16);
}

#[tile_kernel]
fn unknown_method(x: &Tensor<f32>) {
    let n = row_major((4, 4)).length();
}

#[tile_kernel]
fn index_outside(x: &Tensor<f32>) {
    let n = row_major((4, 4)).at(16);
}

#[tile_kernel]
fn layout_as_a_value(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let l = row_major((4,));
    partition_view(out, [4]).store(l, 0);
}

fn main() {}

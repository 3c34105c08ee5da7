use tile::tile_kernel;

#[tile_kernel]
fn vectorize_an_edge_tile(x: &Tensor<f32, 2>) {
    let t = layout_view(x, (10, 8), (8, 1)).tile([4, 8], 2, 0).vectorize([1, 4]).load();
}

#[tile_kernel]
fn reshape_an_edge_tile(x: &Tensor<f32, 2>) {
    let t = layout_view(x, (10, 8), (8, 1)).tile([4, 8], 2, 0).reshape([32]).load();
}

#[tile_kernel]
fn copy_between_shapes(x: &Tensor<f32, 2>, y: &mut Tensor<f32, 2>) {
    layout_view(y, (8, 4), (4, 1))
        .copy_from(layout_view(x, (10, 8), (8, 1)).tile([4, 8], 2, 0));
}

fn main() {}

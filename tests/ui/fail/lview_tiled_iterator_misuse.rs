use tile::tile_kernel;

#[tile_kernel]
fn outside_a_loop(x: &Tensor<f32, 2>) {
    let it = layout_view(x, (8, 8), (8, 1)).tiled_iterator([4, 4], 1, 0, 0);
}

#[tile_kernel]
fn on_a_partition_view(x: &Tensor<f32, 2>) {
    for t in partition_view(x, [4, 4]).tiled_iterator([4, 4], 1, 0, 0) {}
}

#[tile_kernel]
fn one_extent_for_two_modes(x: &Tensor<f32, 2>) {
    for t in layout_view(x, (8, 8), (8, 1)).tiled_iterator([4], 1, 0, 0) {}
}

#[tile_kernel]
fn missing_coordinates(x: &Tensor<f32, 2>) {
    for t in layout_view(x, (8, 8), (8, 1)).tiled_iterator([4, 4], 1, 0) {}
}

#[tile_kernel]
fn zip_with_a_range(x: &Tensor<f32, 2>) {
    for (t, i) in layout_view(x, (8, 8), (8, 1)).tiled_iterator([4, 4], 1, 0, 0).zip(0..2) {}
}

fn main() {}

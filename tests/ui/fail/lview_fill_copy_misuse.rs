use tile::tile_kernel;

#[tile_kernel]
fn fill_read_only(x: &Tensor<f32>) {
    layout_view(x, (4,), (1,)).fill(1.0);
}

#[tile_kernel]
fn fill_with_a_tile(y: &mut Tensor<f32>) {
    layout_view(y, (4,), (1,)).fill(zeros::<f32>([4]));
}

#[tile_kernel]
fn copy_of_another_size(x: &Tensor<f32>, y: &mut Tensor<f32>) {
    layout_view(y, (4,), (1,)).copy_from(layout_view(x, (2, 3), (3, 1)));
}

#[tile_kernel]
fn copy_of_another_dtype(x: &Tensor<i32>, y: &mut Tensor<f32>) {
    layout_view(y, (4,), (1,)).copy_from(layout_view(x, (4,), (1,)));
}

#[tile_kernel]
fn copy_from_a_tensor(x: &Tensor<f32>, y: &mut Tensor<f32>) {
    layout_view(y, (4,), (1,)).copy_from(x);
}

fn main() {}

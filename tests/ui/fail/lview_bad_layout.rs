use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let t = layout_view(x, ((2, 2), 4), ((1, 4), 8)).tile([3, 4], 0, 0).load();
}

fn main() {}

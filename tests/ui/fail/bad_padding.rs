use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let t = partition_view(x, [16]).load_masked_with(Padding::Inf, 0);
}

fn main() {}

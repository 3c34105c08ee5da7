use tile::tile_kernel;

#[tile_kernel]
async fn k(x: &Tensor<f32>) {}

fn main() {}

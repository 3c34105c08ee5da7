use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>) -> f32 {
    1.0
}

fn main() {}

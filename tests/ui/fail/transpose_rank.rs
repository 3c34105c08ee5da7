use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let t = zeros::<f32>([16]).transpose();
}

fn main() {}

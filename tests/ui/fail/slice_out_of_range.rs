use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let t = zeros::<f32>([16, 8]).slice([0..16, 4..12]);
}

fn main() {}

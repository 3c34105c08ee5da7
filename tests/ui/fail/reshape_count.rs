use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let a = zeros::<f32>([16, 8]).reshape([16, 16]);
}

fn main() {}

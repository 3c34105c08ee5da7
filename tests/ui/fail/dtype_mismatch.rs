use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let a = zeros::<f32>([16]);
    let b = zeros::<f16>([16]);
    let c = a * b;
}

fn main() {}

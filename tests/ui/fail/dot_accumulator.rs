use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let a = zeros::<f16>([16, 16]);
    let acc = zeros::<f16>([16, 16]);
    let c = dot(a, a, acc);
}

fn main() {}

use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let a = zeros::<f32>([32, 16]);
    let b = zeros::<f32>([32, 16]);
    let acc = zeros::<f32>([32, 16]);
    let c = dot(a, b, acc);
}

fn main() {}

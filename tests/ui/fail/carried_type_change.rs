use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let mut acc = zeros::<f32>([16]);
    for i in 0..4 {
        acc = acc.cast::<f16>();
    }
}

fn main() {}

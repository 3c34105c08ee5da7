use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let a = zeros::<u8>([4]) + 300;
}

fn main() {}

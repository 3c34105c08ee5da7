use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    for i in 0..4 {
        break;
    }
}

fn main() {}

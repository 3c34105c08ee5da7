use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    loop {
        let a = 1;
    }
}

fn main() {}

use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    for v in zeros::<f32>([16]) {
        let w = v;
    }
}

fn main() {}

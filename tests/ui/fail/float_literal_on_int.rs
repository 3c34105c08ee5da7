use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let i = iota::<i32>([16]) + 1.5;
}

fn main() {}

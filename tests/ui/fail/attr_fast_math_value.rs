use tile::tile_kernel;

#[tile_kernel(fast_math = true)]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
}

fn main() {}

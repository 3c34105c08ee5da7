use tile::tile_kernel;

#[tile_kernel(configs(B = "64"))]
fn k<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
}

fn main() {}

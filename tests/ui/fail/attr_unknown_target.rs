use tile::tile_kernel;

#[tile_kernel(targets = "sm_80,sm_70")]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
}

fn main() {}

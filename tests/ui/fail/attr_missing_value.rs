use tile::tile_kernel;

#[tile_kernel(configs(BM = 64))]
fn k<const BM: usize, const BN: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
}

fn main() {}

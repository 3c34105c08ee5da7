use tile::tile_kernel;

#[tile_kernel]
fn k<const BLOCK: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
}

fn main() {}

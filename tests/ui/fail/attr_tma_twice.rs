use tile::tile_kernel;

#[tile_kernel(tma, num_warps = 4, tma)]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
}

fn main() {}

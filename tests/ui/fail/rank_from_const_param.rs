use tile::tile_kernel;

#[tile_kernel(configs(R = 2))]
fn k<const R: usize>(x: &Tensor<f32, R>) {
    let pid = program_id(0);
}

fn main() {}

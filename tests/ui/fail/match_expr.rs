use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    let a = match pid {
        _ => 1,
    };
}

fn main() {}

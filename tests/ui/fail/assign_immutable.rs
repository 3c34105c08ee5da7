use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let a = program_id(0);
    a = a + 1;
}

fn main() {}

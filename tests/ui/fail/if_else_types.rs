use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    let a = if pid == 0 { zeros::<f32>([16]) } else { zeros::<f32>([32]) };
}

fn main() {}

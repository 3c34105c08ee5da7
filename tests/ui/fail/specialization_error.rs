use tile::tile_kernel;

#[tile_kernel(configs(BLOCK = 128), configs(BLOCK = 64))]
fn k<const BLOCK: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let t = zeros::<f32>([BLOCK - 64]);
}

fn main() {}

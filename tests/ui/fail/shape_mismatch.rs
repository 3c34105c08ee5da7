use tile::tile_kernel;

#[tile_kernel(configs(BM = 128, BN = 64))]
fn k<const BM: usize, const BN: usize>(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
    let a = zeros::<f32>([BM, BN]);
    let b = zeros::<f32>([BM]);
    let c = a + b;
    partition_view(out, [BM, BN]).store(c, 0, 0);
}

fn main() {}

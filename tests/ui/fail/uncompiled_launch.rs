use tile::{tile_kernel, Device, Tensor};

#[tile_kernel(configs(BM = 64, BN = 32))]
fn fill<const BM: usize, const BN: usize>(out: &mut Tensor<f32, 2>) {
    partition_view(out, [BM, BN]).store(1.0, program_id(0), program_id(1));
}

fn main() -> Result<(), tile::Error> {
    let dev = Device::cpu();
    let mut out: Tensor<f32> = dev.zeros(&[64, 64])?;
    fill::<32, 64>::launch(&dev, [1, 2], (&mut out,))
}

use tile::{tile_kernel, Device, Tensor};

// A grid of four axes is a type error at the call, which `cargo check`
// reports too (no const evaluation needed).
#[tile_kernel]
fn fill(out: &mut Tensor<f32>) {
    partition_view(out, [16]).store_masked(ones::<f32>([16]), program_id(0));
}

fn main() -> Result<(), tile::Error> {
    let dev = Device::cpu();
    let mut out: Tensor<f32> = dev.zeros(&[64])?;
    fill::launch(&dev, [4, 1, 1, 1], (&mut out,))
}

use tile::ir::interp::HostTensor;
use tile::tile_kernel;

#[tile_kernel]
fn scale(x: &Tensor<f32>, out: &mut Tensor<f32>, factor: f32) {
    let t = partition_view(x, [16]).load_masked(0);
    partition_view(out, [16]).store_masked(t * factor, 0);
}

fn main() {
    let x = HostTensor::zeros(tile::ir::DType::F32, &[16]);
    let mut out = HostTensor::zeros(tile::ir::DType::F32, &[16]);
    // The output must be passed as `&mut`, and the factor is an f32.
    let _ = scale::interpret([1], (&x, &out, 2.0f64));
    let _ = &mut out;
}

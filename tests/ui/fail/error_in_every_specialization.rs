use tile::tile_kernel;

// The same error in both specializations is reported once, without a label.
#[tile_kernel(configs(B = 64), configs(B = 128))]
fn k<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let t = partition_view(x, [B]).load(0);
    partition_view(out, [B]).store(t.cast::<f16>(), 0);
}

fn main() {}

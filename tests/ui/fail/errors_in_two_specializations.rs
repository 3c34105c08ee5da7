use tile::tile_kernel;

// Different specializations break different rules: each is reported.
#[tile_kernel(configs(B = 64), configs(B = 96), configs(B = 128))]
fn k<const B: usize>(out: &mut Tensor<f32, 2>) {
    let t = zeros::<f32>([B, 128 - B]);
    let u = t.reshape([64, 64]);
    partition_view(out, [64, 64]).store(u, 0, 0);
}

fn main() {}

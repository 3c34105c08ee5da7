use tile::tile_kernel;

// An element format without its scales.
#[tile_kernel(configs(B = 32))]
fn missing_scales<const B: usize>(
    a: &Tensor<f4e2m1, 2>,
    b: &Tensor<bf16, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let x = partition_view(a, [B, B]).load(0, 0);
    let y = partition_view(b, [B, B]).load(0, 0);
    let acc = dot_scaled(x, None, y, None, zeros::<f32>([B, B]));
    partition_view(c, [B, B]).store(acc, 0, 0);
}

// Scales given to a bf16 operand.
#[tile_kernel(configs(B = 32))]
fn scales_for_bf16<const B: usize>(
    a: &Tensor<bf16, 2>,
    s: &Tensor<f8e8m0, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let x = partition_view(a, [B, B]).load(0, 0);
    let sx = partition_view(s, [B, 1]).load(0, 0);
    let acc = dot_scaled(x, sx, x, None, zeros::<f32>([B, B]));
    partition_view(c, [B, B]).store(acc, 0, 0);
}

// Scales of the wrong shape: one per 16 elements where E8M0 covers 32.
#[tile_kernel(configs(B = 32))]
fn scales_of_the_wrong_shape<const B: usize>(
    a: &Tensor<f8e4m3, 2>,
    s: &Tensor<f8e8m0, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let x = partition_view(a, [B, B]).load(0, 0);
    let sx = partition_view(s, [B, 2]).load(0, 0);
    let acc = dot_scaled(x, sx, x, sx, zeros::<f32>([B, B]));
    partition_view(c, [B, B]).store(acc, 0, 0);
}

fn main() {}

use tile::tile_kernel;

#[tile_kernel(configs(N = 16))]
fn k<const N: usize>(x: &Tensor<f32>) {
    let v = layout_view(x, (N / 4, 4), (4, 1)).transpose();
    v.store(zeros::<f32>([4, N / 4]));
}

fn main() {}

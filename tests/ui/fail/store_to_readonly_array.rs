use tile::tile_kernel;

#[tile_kernel]
fn k(xs: &[Tensor<f32>], i: &[Tensor<i32>], out: &mut [Tensor<f32>]) {
    let t = zeros::<f32>([16]);
    partition_view(out[0], [16]).store(t, 0);
    partition_view(xs[1], [16]).store(t, 0);
    let j = iota::<i32>([16]);
    atomic_add(i[0], [j], j, j >= 0);
    let n = xs.size();
}

fn main() {}

use tile::tile_kernel;

#[tile_kernel(configs(R = 4, C = 16))]
fn row_sums<const R: usize, const C: usize>(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
    let t = partition_view(x, [R, C]).load(program_id(0), 0);
    partition_view(out, [R, 1]).store(t.sum(1), program_id(0), 0);
}

fn main() {}

use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
    let pid = program_id(0);
    let t = partition_view(x, [16, 16]).load(pid);
}

fn main() {}

use tile::tile_kernel;

#[tile_kernel(configs(B = 4))]
fn k<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    let v = partition_view(x, [B]).load(pid) * std::f32::consts::GOLDEN;
    partition_view(out, [B]).store(v, pid);
}

fn main() {}

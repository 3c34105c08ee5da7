use tile::tile_kernel;

#[tile_kernel(configs(BLOCK = 1024), configs(BLOCK = 256))]
fn copy<const BLOCK: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    partition_view(out, [BLOCK]).store_masked(partition_view(x, [BLOCK]).load_masked(pid), pid);
}

fn main() {
    let _ = copy::<512>::spec();
}

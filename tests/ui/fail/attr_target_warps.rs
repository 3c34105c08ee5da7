use tile::tile_kernel;

// 32 wavefronts of 64 lanes are 2048 threads, more than a block holds.
#[tile_kernel(num_warps = 32, targets = "sm_80,gfx942")]
fn too_many_threads(out: &mut Tensor<f32>) {
    let pid = program_id(0);
}

#[tile_kernel(num_warps(host = 2))]
fn host_has_no_warps(out: &mut Tensor<f32>) {
    let pid = program_id(0);
}

#[tile_kernel(num_warps(gfx942 = 16, gfx942 = 8))]
fn given_twice(out: &mut Tensor<f32>) {
    let pid = program_id(0);
}

#[tile_kernel(num_warps(sm_90a = 48))]
fn not_a_power_of_two(out: &mut Tensor<f32>) {
    let pid = program_id(0);
}

// 32 wavefronts of 64 lanes, named for gfx942 itself.
#[tile_kernel(num_warps(gfx942 = 32))]
fn too_many_wavefronts(out: &mut Tensor<f32>) {
    let pid = program_id(0);
}

fn main() {}

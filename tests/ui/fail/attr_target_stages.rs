use tile::tile_kernel;

// gfx942 has no asynchronous copies: its loops run in one stage.
#[tile_kernel(num_stages(gfx942 = 2))]
fn amd_loops_do_not_pipeline(out: &mut Tensor<f32>) {
    let pid = program_id(0);
}

#[tile_kernel(num_stages(sm_80 = 3, sm_80 = 2))]
fn given_twice(out: &mut Tensor<f32>) {
    let pid = program_id(0);
}

#[tile_kernel(num_stages(sm_90a = 9))]
fn too_many(out: &mut Tensor<f32>) {
    let pid = program_id(0);
}

// sm_86 is not built: its stages would never be used.
#[tile_kernel(num_stages(sm_86 = 2), targets = "sm_80,host")]
fn not_built(out: &mut Tensor<f32>) {
    let pid = program_id(0);
}

fn main() {}

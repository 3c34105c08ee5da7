// The register warnings are the lint `deprecated` at the kernel's name:
// denied here, so that this case pins the message and its span.
#![deny(deprecated)]
use tile::tile_kernel;

#[tile_kernel(targets = "sm_80", register_budget = 1)]
fn copy(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    partition_view(out, [128]).store(partition_view(x, [128]).load(pid), pid);
}

fn main() {}

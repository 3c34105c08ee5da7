use tile::tile_kernel;

#[tile_kernel(aligned(x, y))]
fn unknown(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
}

#[tile_kernel(aligned(x, n))]
fn scalar(x: &Tensor<f32>, n: i32) {
    let pid = program_id(0);
}

#[tile_kernel(aligned(x, out, x))]
fn twice(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
}

#[tile_kernel(aligned())]
fn empty(x: &Tensor<f32>) {
    let pid = program_id(0);
}

#[tile_kernel(aligned(x), num_warps = 4, aligned(out))]
fn given_twice(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
}

#[tile_kernel(aligned(x = 16))]
fn with_value(x: &Tensor<f32>) {
    let pid = program_id(0);
}

#[tile_kernel(aligned)]
fn bare(x: &Tensor<f32>) {
    let pid = program_id(0);
}

fn main() {}

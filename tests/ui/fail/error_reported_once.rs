use tile::tile_kernel;

// One mistake, reported once: the names its statement would have defined
// are used later (in expressions, a loop, a branch, the store), and those
// uses are not errors of their own.
#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>, n: i32) {
    let t = partition_view(x, [16]).load(program_id(0));
    let (bad, scale) = (t * 2.0f16, 2.0);
    let mut acc = bad + t;
    for i in 0..n {
        acc = acc + bad * scale;
    }
    if n > 0 {
        acc = acc * scale;
    }
    partition_view(out, [16]).store(acc, program_id(0));
}

fn main() {}

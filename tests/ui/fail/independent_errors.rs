use tile::tile_kernel;

// Three independent mistakes: one build reports each at its span.
#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let t = partition_view(x, [16]).load(program_id(0));
    let scaled = t * 2.0f16;
    let mut acc = zeros::<f32>([16]);
    for i in 0..4 {
        acc = acc + t.softplus();
    }
    let q = program_id(3);
    partition_view(out, [16]).store(t, 0);
}

fn main() {}

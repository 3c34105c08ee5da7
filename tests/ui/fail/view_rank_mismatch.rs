use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
    let v = partition_view(x, [128]);
}

fn main() {}

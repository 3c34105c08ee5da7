use tile::tile_kernel;

// A guard clause ends a program at the top level of the kernel's body,
// not inside a loop.
#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let v = partition_view(out, [16]);
    for i in 0..4 {
        if i == 2 {
            return;
        }
        v.store(zeros::<f32>([16]), i);
    }
}

fn main() {}

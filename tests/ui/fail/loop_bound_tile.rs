use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let n = iota::<i32>([4]);
    for i in 0..n {
        let a = i;
    }
}

fn main() {}

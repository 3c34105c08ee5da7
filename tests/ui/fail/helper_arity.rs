use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    #[tile_fn]
    fn add(a: i32, b: i32) -> i32 {
        a + b
    }
    let c = add(program_id(0));
}

fn main() {}

use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    fn helper(a: i32) -> i32 {
        a + 1
    }
    let b = helper(program_id(0));
}

fn main() {}

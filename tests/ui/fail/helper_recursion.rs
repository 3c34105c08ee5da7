use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    #[tile_fn]
    fn twice(a: i32) -> i32 {
        twice(a) * 2
    }
    let b = twice(program_id(0));
}

fn main() {}

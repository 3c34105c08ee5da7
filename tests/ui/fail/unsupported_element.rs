use tile::tile_kernel;

#[tile_kernel]
fn k(x: &Tensor<char>) {
    let pid = program_id(0);
}

fn main() {}

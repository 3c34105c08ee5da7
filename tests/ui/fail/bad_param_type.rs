use tile::tile_kernel;

#[tile_kernel]
fn k(x: Vec<f32>) {
    let pid = program_id(0);
}

fn main() {}

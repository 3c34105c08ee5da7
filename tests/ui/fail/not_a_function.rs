use tile::tile_kernel;

#[tile_kernel]
struct Kernel;

fn main() {}

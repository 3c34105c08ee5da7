use tile::tile_fn;

#[tile_fn]
fn helper(a: i32) -> i32 {
    a + 1
}

fn main() {}

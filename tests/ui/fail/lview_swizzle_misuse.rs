use tile::tile_kernel;

#[tile_kernel]
fn shift_below_bits(x: &Tensor<f32>) {
    let t = layout_view(x, (8, 8), (8, 1)).swizzle(3, 0, 2).load();
}

#[tile_kernel]
fn two_swizzles(x: &Tensor<f32>) {
    let t = layout_view(x, (8, 8), (8, 1)).swizzle(1, 0, 1).swizzle(1, 0, 2).load();
}

#[tile_kernel]
fn runtime_bits(x: &Tensor<f32>, n: i32) {
    let t = layout_view(x, (8, 8), (8, 1)).swizzle(n, 0, 3).load();
}

fn main() {}

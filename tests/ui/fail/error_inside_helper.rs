use tile::tile_kernel;

#[tile_kernel(configs(B = 64))]
fn k<const B: usize>(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
    #[tile_fn]
    fn normalize(t: Tile) -> Tile {
        // The error is in the helper, at the expression that breaks the rule,
        // and reported once however many times the helper is called.
        t / t.sum(2)
    }
    let t = partition_view(x, [B, B]).load(0, 0);
    let first = normalize(t);
    let second = normalize(t);
    partition_view(out, [B, B]).store(first + second, 0, 0);
}

fn main() {}

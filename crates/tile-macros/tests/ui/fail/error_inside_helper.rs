use tile::tile_kernel;

#[tile_kernel(configs(B = 64))]
fn k<const B: usize>(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
    #[tile_fn]
    fn normalize(t: Tile) -> Tile {
        // The error is in the helper, at the expression that breaks the rule.
        t / t.sum(2)
    }
    let t = partition_view(x, [B, B]).load(0, 0);
    partition_view(out, [B, B]).store(normalize(t), 0, 0);
}

fn main() {}

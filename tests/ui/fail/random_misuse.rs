use tile::tile_kernel;

// `rand(seed, offsets)` takes two arguments.
#[tile_kernel]
fn arity(out: &mut Tensor<f32>) {
    let u = rand(program_id(0));
}

// The offsets are integers.
#[tile_kernel]
fn float_offsets(out: &mut Tensor<f32>) {
    let u = rand(7, zeros::<f32>([16]));
}

#[tile_kernel]
fn bool_offsets(out: &mut Tensor<f32>) {
    let u = randn(7, iota::<i32>([16]) < 3);
}

// The seed is one integer for the whole program.
#[tile_kernel]
fn tile_seed(out: &mut Tensor<u32>) {
    let i = randint(iota::<i32>([16]), iota::<i32>([16]));
}

#[tile_kernel]
fn float_seed(out: &mut Tensor<u32>, seed: f32) {
    let i = randint(seed, iota::<i32>([16]));
}

#[tile_kernel]
fn wide_seed(out: &mut Tensor<f32>) {
    let u = rand(1 << 64, iota::<i32>([16]));
}

fn main() {}

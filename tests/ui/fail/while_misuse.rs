use tile::tile_kernel;

#[tile_kernel]
fn assigns_in_condition(out: &mut Tensor<i32>) {
    let mut i = 0;
    while { i += 1; i < 10 } {}
    partition_view(out, [1]).store(full([1], i), 0);
}

#[tile_kernel]
fn integer_condition(out: &mut Tensor<i32>) {
    let mut i = 8;
    while i {
        i = i / 2;
    }
    partition_view(out, [1]).store(full([1], i), 0);
}

#[tile_kernel]
fn while_let(x: &Tensor<f32>) {
    while let Some(v) = x.dim(0) {}
}

#[tile_kernel]
fn labelled(out: &mut Tensor<i32>) {
    let mut i = 0;
    'outer: while i < 4 {
        i += 1;
    }
    partition_view(out, [1]).store(full([1], i), 0);
}

#[tile_kernel]
fn breaks(out: &mut Tensor<i32>) {
    let mut i = 0;
    while i < 4 {
        i += 1;
        break;
    }
    partition_view(out, [1]).store(full([1], i), 0);
}

#[tile_kernel]
fn carried_type_change(out: &mut Tensor<f32>) {
    let mut t = zeros::<f32>([4]);
    let mut n = 0;
    while n < 3 {
        t = t.cast::<f16>();
        n += 1;
    }
    partition_view(out, [4]).store(t, 0);
}

fn main() {}

use tile::tile_kernel;

// An atomic needs a `&mut Tensor`.
#[tile_kernel]
fn read_only(hist: &Tensor<i32>, x: &Tensor<i32>) {
    let bins = partition_view(x, [16]).load(program_id(0));
    atomic_add(hist, [bins], 1);
}

#[tile_kernel]
fn seq_cst(hist: &mut Tensor<i32>, x: &Tensor<i32>) {
    let bins = partition_view(x, [16]).load(program_id(0));
    atomic_add(hist, [bins], 1, Ordering::SeqCst);
}

#[tile_kernel]
fn system_scope(hist: &mut Tensor<i32>, x: &Tensor<i32>) {
    let bins = partition_view(x, [16]).load(program_id(0));
    atomic_max(hist, [bins], 1, Scope::Sys);
}

#[tile_kernel]
fn index_count(out: &mut Tensor<f32, 2>, x: &Tensor<i32>) {
    let rows = partition_view(x, [16]).load(program_id(0));
    atomic_add(out, [rows], 1.0);
}

#[tile_kernel]
fn value_dtype(out: &mut Tensor<f32>, x: &Tensor<i32>) {
    let i = partition_view(x, [16]).load(program_id(0));
    atomic_add(out, [i], i);
}

#[tile_kernel]
fn bits_of_floats(out: &mut Tensor<f32>, x: &Tensor<i32>) {
    let i = partition_view(x, [16]).load(program_id(0));
    atomic_or(out, [i], 1.0);
}

#[tile_kernel]
fn cas_on_a_view(out: &mut Tensor<i32>) {
    partition_view(out, [16]).atomic_cas(zeros::<i32>([16]), program_id(0));
}

#[tile_kernel]
fn no_such_update(out: &mut Tensor<i32>) {
    atomic_nand(out, [iota::<i32>([16])], 1);
}

#[tile_kernel]
fn load_with_release(out: &mut Tensor<i32>) {
    let v = partition_view(out, [16]).atomic_load(program_id(0), Ordering::Release);
    partition_view(out, [16]).store(v, program_id(0));
}

#[tile_kernel]
fn atomic_store_of_u8(out: &mut Tensor<u8>) {
    partition_view(out, [16]).atomic_store(zeros::<u8>([16]), program_id(0));
}

// A relaxed fence orders nothing.
#[tile_kernel]
fn relaxed_fence(out: &mut Tensor<i32>) {
    fence(Ordering::Relaxed, Scope::Gpu);
}

// A fence takes an order and a scope, nothing else.
#[tile_kernel]
fn fence_of_a_value(out: &mut Tensor<i32>) {
    fence(Ordering::AcqRel, 3);
}

#[tile_kernel]
fn debug_barrier_with_arguments(out: &mut Tensor<i32>) {
    debug_barrier(Scope::Cta);
}

#[tile_kernel]
fn gdc_wait_with_arguments(out: &mut Tensor<i32>) {
    gdc_wait(0);
}

#[tile_kernel]
fn gdc_launch_dependents_with_arguments(out: &mut Tensor<i32>) {
    gdc_launch_dependents(true);
}

fn main() {}

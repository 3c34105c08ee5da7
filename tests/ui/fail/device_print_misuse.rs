use tile::tile_kernel;

// Rust's `println!` does not run on the device: the error points to
// `device_print!`.
#[tile_kernel]
fn rust_println(x: &Tensor<f32>) {
    let t = partition_view(x, [16]).load(program_id(0));
    println!("{}", t.sum(0));
}

#[tile_kernel]
fn message_not_literal(x: &Tensor<f32>) {
    device_print!(program_id(0));
}

#[tile_kernel]
fn no_message(x: &Tensor<f32>) {
    device_print!();
}

#[tile_kernel]
fn too_many_arguments(x: &Tensor<f32>) {
    device_print!("{}", program_id(0), program_id(0));
}

#[tile_kernel]
fn six_values(x: &Tensor<f32>) {
    let p = program_id(0);
    device_print!("{} {} {} {} {} {}", p, p, p, p, p, p);
}

#[tile_kernel]
fn tiles_that_do_not_broadcast(x: &Tensor<f32>) {
    let t = partition_view(x, [16]).load(program_id(0));
    let u = partition_view(x, [8]).load(program_id(0));
    device_print!("{} and {}", t, u);
}

#[tile_kernel]
fn a_tensor(x: &Tensor<f32>) {
    device_print!("x = {}", x);
}

#[tile_kernel]
fn a_format_spec(x: &Tensor<f32>) {
    device_print!("pid = {:>4}", program_id(0));
}

fn main() {}

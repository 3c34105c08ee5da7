//! Windows of tensors in kernels: `t.offset([..])` and `t.window([..],
//! [..])` cut by `partition_view` into tiles that start at the window's
//! offset; their masks, `num_tiles` and atomics are the window's; and
//! misuse is an error at its span's text.

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::Scalar;

/// Lowers `src`, runs it through the pass pipeline, the text form and the
/// interpreter over `grid`, and returns the arguments.
fn run(src: &str, grid: [u32; 3], mut args: Vec<Arg>) -> Vec<Arg> {
    let item: syn::ItemFn = syn::parse_str(src).expect("kernel parses");
    let lowered = tile_frontend::translate_kernel(proc_macro2::TokenStream::new(), &item)
        .unwrap_or_else(|e| panic!("lowering failed: {e}"));
    let (_, mut f) = lowered.into_iter().next().expect("one specialization");
    tile_codegen::driver::optimize(&mut f).expect("passes");
    let f = tile_ir::text::parse_function(&f.to_string()).expect("IR parses back");
    interp::run(&f, grid, &mut args).unwrap_or_else(|e| panic!("interpreter: {e}\n{f}"));
    args
}

fn error(body: &str) -> String {
    let src = format!("fn k(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>, r: i32) {{ {body} }}");
    let item: syn::ItemFn = syn::parse_str(&src).expect("kernel parses");
    match tile_frontend::translate_kernel(proc_macro2::TokenStream::new(), &item) {
        Ok(_) => panic!("`{body}` lowered"),
        Err(e) => e.to_string(),
    }
}

fn f32s(shape: &[usize], v: Vec<f32>) -> Arg {
    Arg::Tensor(HostTensor::from_vec(shape, v).expect("tensor"))
}

fn out(a: &Arg) -> Vec<f32> {
    match a {
        Arg::Tensor(t) => t.to_vec::<f32>().expect("f32"),
        _ => panic!("not a tensor"),
    }
}

#[test]
fn offset_windows_read_and_write_from_their_offset() {
    // Each program copies its rows, doubled, from the packed sequence that
    // starts at row `start` and has `len` rows; rows past it are left.
    let src = r#"
fn k(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>, start: i32, len: i32) {
    let pid = program_id(0);
    let vx = partition_view(x.window([start, 0], [len, 4]), [2, 4]);
    let vo = partition_view(out.offset([start, 0]), [2, 4]);
    if pid < vx.num_tiles(0) {
        let t = vx.load_masked(pid, 0);
        vo.store_masked(t * 2.0, pid, 0);
    }
}
"#;
    let x: Vec<f32> = (0..28).map(|v| v as f32).collect();
    let args = run(
        src,
        [4, 1, 1],
        vec![
            f32s(&[7, 4], x),
            f32s(&[7, 4], vec![-1.0; 28]),
            Arg::Scalar(Scalar::I32(2)),
            Arg::Scalar(Scalar::I32(3)),
        ],
    );
    let got = out(&args[1]);
    // Rows 2, 3 and 4 doubled; programs 2 and 3 are past the window's two
    // partitions; row 5 is in the last partition but outside the window,
    // read as 0 and written (the `out` view is not bounded): 0.
    let mut want = vec![-1.0f32; 28];
    for r in 2..5 {
        for c in 0..4 {
            want[r * 4 + c] = 2.0 * (r * 4 + c) as f32;
        }
    }
    for c in 0..4 {
        want[5 * 4 + c] = 0.0;
    }
    assert_eq!(got, want);
}

#[test]
fn atomics_through_a_window_land_at_its_offset() {
    let src = r#"
fn k(out: &mut Tensor<f32, 2>, r: i32) {
    let v = partition_view(out.window([r, 1], [2, 2]), [2, 4]);
    v.atomic_add_masked(ones::<f32>([2, 4]), 0, 0);
}
"#;
    let args = run(
        src,
        [3, 1, 1],
        vec![f32s(&[4, 4], vec![0.0; 16]), Arg::Scalar(Scalar::I32(1))],
    );
    let mut want = vec![0.0f32; 16];
    for (r, c) in [(1, 1), (1, 2), (2, 1), (2, 2)] {
        want[r * 4 + c] = 3.0;
    }
    assert_eq!(out(&args[0]), want);
}

#[test]
fn window_misuse_is_an_error() {
    assert_eq!(
        error("let v = partition_view(x.offset([-1, 0]), [2, 4]);"),
        "the offsets of a window are at least 0, found -1"
    );
    assert_eq!(
        error("let v = partition_view(x.offset([r]), [2, 4]);"),
        "the offsets of a window of a tensor of rank 2 are 2 integers, found 1"
    );
    assert_eq!(
        error("let v = partition_view(x.offset([r, 0.5]), [2, 4]);"),
        "the offsets of a window are integer scalars, found f32"
    );
    assert_eq!(
        error("let v = partition_view(x.window([r, 0], [2]), [2, 4]);"),
        "the extents of a window of a tensor of rank 2 are 2 integers, found 1"
    );
    assert_eq!(
        error("let v = partition_view(x.offset([r, 0]), [2, 4, 1]);"),
        "a partition shape of rank 3 for a window of rank 2"
    );
    assert_eq!(
        error("let w = x.offset([r, 0]); let d = w.dim(0);"),
        "no method `dim` on a tensor's offset of rank 2 (cut it into tiles with `partition_view(t.offset(..), [shape])`)"
    );
    assert_eq!(
        error("partition_view(out.window([r, 0], [1, 4]), [2, 4]).atomic_add(zeros::<f32>([2, 4]), 0, 0);"),
        "an unmasked atomic access through a `window` could reach elements outside the window but inside the tensor, which nothing would report: use the `_masked` form"
    );
}

//! Layout views in `#[tile_kernel]`: `layout_view(t, shape, stride)` and the
//! view methods, lowered, optimized, printed, parsed back and run by the
//! reference interpreter against element-by-element expectations; and their
//! errors.

use tile_ir::interp::{self, Arg, HostTensor};

/// Lowers `src` (no const parameters) and runs it over `grid`.
fn run(src: &str, grid: [u32; 3], mut args: Vec<Arg>) -> Vec<Arg> {
    let item: syn::ItemFn = syn::parse_str(src).expect("kernel parses");
    let lowered = match tile_frontend::translate_kernel(quote::quote!(), &item) {
        Ok(v) => v,
        Err(e) => panic!("lowering failed: {e}"),
    };
    let (_, mut f) = lowered.into_iter().next().expect("one specialization");
    tile_codegen::driver::optimize(&mut f).expect("passes");
    let f = tile_ir::text::parse_function(&f.to_string()).expect("IR parses back");
    if let Err(e) = interp::run(&f, grid, &mut args) {
        panic!("interpreter: {e}\n{f}");
    }
    args
}

/// The error message of lowering `src`.
fn error(src: &str) -> String {
    let item: syn::ItemFn = syn::parse_str(src).expect("kernel parses");
    match tile_frontend::translate_kernel(quote::quote!(), &item) {
        Ok(_) => panic!("lowering succeeded"),
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

fn iota(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}

#[test]
fn tiled_transpose_through_views_alone() {
    // x is 6x8; each program stores its 3x4 tile of x into the same tile of
    // the transposed view of out (8x6).
    let src = "fn k(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
        let (m, n) = (program_id(0), program_id(1));
        let t = layout_view(x, (6, 8), (8, 1)).tile([3, 4], m, n).load();
        layout_view(out, (8, 6), (6, 1)).transpose().tile([3, 4], m, n).store(t);
    }";
    let args = run(
        src,
        [2, 2, 1],
        vec![f32s(&[6, 8], iota(48)), f32s(&[8, 6], vec![0.0; 48])],
    );
    let got = out(&args[1]);
    for i in 0..6 {
        for j in 0..8 {
            assert_eq!(got[j * 6 + i], (i * 8 + j) as f32, "out[{j}][{i}]");
        }
    }
}

#[test]
fn split_slice_and_vectorize_select_the_documented_elements() {
    // Row 1 of 4 parts of a 4x6 matrix; then columns 2..5 of it; then pairs.
    let src = "fn k(x: &Tensor<f32, 2>, a: &mut Tensor<f32, 2>, b: &mut Tensor<f32, 2>, c: &mut Tensor<f32, 3>) {
        let v = layout_view(x, (4, 6), (6, 1));
        let row = v.split(0, 4, 1);
        layout_view(a, (1, 6), (6, 1)).store(row.load());
        layout_view(b, (1, 3), (3, 1)).store(row.slice([.., 2..5]).load());
        layout_view(c, (2, 3, 2), (6, 2, 1)).store(v.slice([0..2, ..]).vectorize([1, 2]).load().reshape([2, 3, 2]));
    }";
    let args = run(
        src,
        [1, 1, 1],
        vec![
            f32s(&[4, 6], iota(24)),
            f32s(&[1, 6], vec![0.0; 6]),
            f32s(&[1, 3], vec![0.0; 3]),
            f32s(&[2, 3, 2], vec![0.0; 12]),
        ],
    );
    assert_eq!(out(&args[1]), vec![6.0, 7.0, 8.0, 9.0, 10.0, 11.0]);
    assert_eq!(out(&args[2]), vec![8.0, 9.0, 10.0]);
    // vectorize([1, 2]) of rows 0..2: outer (2, 3), vectors (1, 2).
    assert_eq!(out(&args[3]), iota(12));
}

#[test]
fn distribute_gives_each_thread_its_cyclic_elements() {
    // A 4x4 row-major view over 2x2 threads (thread layout (2,2):(2,1)):
    // thread 1 owns rows 0, 2 and columns 1, 3.
    let src = "fn k(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
        let mine = layout_view(x, (4, 4), (4, 1)).distribute((2, 2), (2, 1), 1);
        layout_view(out, (2, 2), (2, 1)).store(mine.load());
    }";
    let args = run(
        src,
        [1, 1, 1],
        vec![f32s(&[4, 4], iota(16)), f32s(&[2, 2], vec![0.0; 4])],
    );
    assert_eq!(out(&args[1]), vec![1.0, 3.0, 9.0, 11.0]);
}

#[test]
fn hierarchical_layouts_compose_coalesce_and_masked_loads() {
    // (4,(2,2)):(1,(4,8)) loads a 4x4 tile whose column j is at
    // 4*(j mod 2) + 8*(j / 2); composing the column-major (4,4):(1,4) with
    // 16:1 then coalescing gives the flat identity 16:1; a view past the end of a 10-element tensor pads.
    let src = "fn k(x: &Tensor<f32>, a: &mut Tensor<f32, 2>, b: &mut Tensor<f32>, c: &mut Tensor<f32>) {
        let v = layout_view(x, (4, (2, 2)), (1, (4, 8)));
        layout_view(a, (4, 4), (4, 1)).store(v.load());
        layout_view(b, 16, 1).store(layout_view(x, (4, 4), (1, 4)).compose(16, 1).coalesce().load());
        layout_view(c, 12, 1).store(layout_view(x, 12, 1).load_masked_with(Padding::Value(-1.0)));
    }";
    let x = f32s(&[16], iota(16));
    let args = run(
        src,
        [1, 1, 1],
        vec![
            x,
            f32s(&[4, 4], vec![0.0; 16]),
            f32s(&[16], vec![0.0; 16]),
            f32s(&[12], vec![0.0; 12]),
        ],
    );
    let a = out(&args[1]);
    for i in 0..4 {
        for j in 0..4 {
            assert_eq!(a[i * 4 + j], (i + 4 * (j % 2) + 8 * (j / 2)) as f32);
        }
    }
    assert_eq!(out(&args[2]), iota(16));
    assert_eq!(out(&args[3]), iota(12));
    let padded = run(
        "fn k(x: &Tensor<f32>, c: &mut Tensor<f32>) {
            layout_view(c, 12, 1).store(layout_view(x, 12, 1).load_masked_with(Padding::Value(-1.0)));
        }",
        [1, 1, 1],
        vec![f32s(&[10], iota(10)), f32s(&[12], vec![0.0; 12])],
    );
    let mut want = iota(10);
    want.extend([-1.0, -1.0]);
    assert_eq!(out(&padded[1]), want);
}

#[test]
fn layout_view_errors_name_the_problem() {
    let cases = [
        (
            "fn k(x: &Tensor<f32>) { layout_view(x, (4, 4), (1, 4)).store(zeros::<f32>([4, 4])); }",
            "cannot store through a view of `x`, a read-only `&Tensor`",
        ),
        (
            "fn k(x: &Tensor<f32>) { let v = layout_view(x, (4, 4), (1, 4)).shuffle(); }",
            "no method `shuffle` on a layout view; layout views have tile, split",
        ),
        (
            "fn k(x: &Tensor<f32>) { let v = layout_view(x, (4, 4), (1, 4, 2)); }",
            "invalid layout",
        ),
        (
            "fn k(x: &Tensor<f32>) { let v = layout_view(x, (4, 4, 2), (1, 4, 16)).transpose(); }",
            "`transpose()` swaps the two modes of a rank-2 view; this view has 3 modes",
        ),
        (
            "fn k(x: &Tensor<f32>) { let v = layout_view(x, (4, 4), (4, 1)).tile([4, 4], 0.5f32, 0); }",
            "a layout-view index must be an integer scalar, found f32",
        ),
        (
            "fn k(x: &Tensor<f32>) { let v = layout_view(x, (4, 4), (4, 1)).slice([0..=2, ..]); }",
            "write an exclusive range `start..end`",
        ),
        (
            "fn k(x: &Tensor<f32>) { let v = layout_view(1, 4, 1); }",
            "`layout_view` takes a tensor parameter, found the integer 1",
        ),
        (
            "fn k(x: &Tensor<f32>) { let v = layout_view(x, ((2, 2), 4), ((1, 4), 8)).tile([3, 4], 0, 0); }",
            "`lview_tile`: mode 0 of ((2,2),4):((1,4),8) is (2,2):(1,4), which the extent 3 does not divide: an edge tile needs a mode of one stride",
        ),
    ];
    for (src, want) in cases {
        let msg = error(src);
        assert!(
            msg.contains(want),
            "for {src}\nexpected `{want}` in:\n{msg}"
        );
    }
}

//! Partition views of windows (`partition_view %t [S] offset(..)
//! extent(..)`): loads and stores land at the window's offset, masks and
//! the index space are the window's, and a negative offset or extent is a
//! fault at the view, with its message.

mod interp_support;

use interp_support::tensor_ty;
use tile_ir::builder::Builder;
use tile_ir::interp::{run, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{DType, Function, Padding, Scalar, Type};

/// `out[0] = load_masked(window of x at (o0, o1) [of extents (n0, n1)])[i,
/// j]`, the window's parameters scalars; then the same tile stored back
/// through a window of `y` at the same place, unmasked or masked.
fn window_copy(extents: bool, masked_store: bool) -> Function {
    let mut b = Builder::new("window_copy");
    let x = b.param("x", tensor_ty(DType::I32, 2));
    let y = b.param("y", tensor_ty(DType::I32, 2));
    let scalar = Type::Scalar(DType::I32);
    let (o0, o1) = (b.param("o0", scalar.clone()), b.param("o1", scalar.clone()));
    let (n0, n1) = (b.param("n0", scalar.clone()), b.param("n1", scalar.clone()));
    let (i, j) = (b.param("i", scalar.clone()), b.param("j", scalar));
    let limits = [n0, n1];
    let limits = extents.then_some(&limits[..]);
    let vx = b
        .partition_view_window(x, &[2, 3], &[o0, o1], limits)
        .unwrap();
    let t = b
        .load_masked(vx, &[i, j], Padding::Value(Scalar::I32(-1)))
        .unwrap();
    let vy = b
        .partition_view_window(y, &[2, 3], &[o0, o1], limits)
        .unwrap();
    if masked_store {
        b.store_masked(t, vy, &[i, j]).unwrap();
    } else {
        b.store(t, vy, &[i, j]).unwrap();
    }
    b.finish().unwrap()
}

fn iota(rows: usize, cols: usize) -> HostTensor {
    HostTensor::from_vec(&[rows, cols], (0..(rows * cols) as i32).collect()).unwrap()
}

/// Runs `func` on `x` (5×7 iota) and `y` (5×7 of 100s) with the scalars
/// `(o0, o1, n0, n1, i, j)`; returns `y` or the error's text.
fn run_window(func: &Function, scalars: [i32; 6]) -> Result<Vec<i32>, String> {
    let mut args = vec![
        Arg::Tensor(iota(5, 7)),
        Arg::Tensor(HostTensor::from_vec(&[5, 7], vec![100; 35]).unwrap()),
    ];
    args.extend(scalars.map(|s| Arg::Scalar(Scalar::I32(s))));
    run(func, [1, 1, 1], &mut args).map_err(|e| e.to_string())?;
    match &args[1] {
        Arg::Tensor(t) => Ok(t.to_vec::<i32>().unwrap()),
        _ => unreachable!(),
    }
}

/// `y` after writing `values` at the rows and columns given.
fn with(cells: &[(usize, usize, i32)]) -> Vec<i32> {
    let mut y = vec![100; 35];
    for &(r, c, v) in cells {
        y[r * 7 + c] = v;
    }
    y
}

#[test]
fn a_window_starts_at_its_offset() {
    // Partition (1, 1) of the window at (1, 2): rows 3..5, columns 5..8 of
    // x, column 7 outside the tensor (padding on load, skipped on store).
    let y = run_window(&window_copy(false, true), [1, 2, 0, 0, 1, 1]).unwrap();
    assert_eq!(y, with(&[(3, 5, 26), (3, 6, 27), (4, 5, 33), (4, 6, 34)]));
}

#[test]
fn a_window_with_extents_masks_at_its_own_edge() {
    // The window at (0, 1) of extents (3, 4): its partition (1, 1) holds
    // window row 2 (rows 3 and 4 of the window are outside it) and window
    // column 3 only, tensor element (2, 4).
    let y = run_window(&window_copy(true, true), [0, 1, 3, 4, 1, 1]).unwrap();
    assert_eq!(y, with(&[(2, 4, 18)]));
    // Extents past the tensor's end are cut by it.
    let y = run_window(&window_copy(true, true), [3, 4, 9, 9, 0, 0]).unwrap();
    assert_eq!(
        y,
        with(&[
            (3, 4, 25),
            (3, 5, 26),
            (3, 6, 27),
            (4, 4, 32),
            (4, 5, 33),
            (4, 6, 34)
        ])
    );
}

#[test]
fn an_unmasked_store_must_stay_inside_the_window() {
    // Inside the tensor but past the window's extent of 2 columns.
    let e = run_window(&window_copy(true, false), [0, 0, 2, 2, 0, 0]).unwrap_err();
    assert!(
        e.contains("partition [0, 0] (tile [2, 3]) is partially outside the tensor of extents [2, 2]: element [0, 2] is out of bounds"),
        "{e}"
    );
    assert_eq!(
        run_window(&window_copy(true, false), [1, 1, 2, 3, 0, 0]).unwrap(),
        with(&[
            (1, 1, 8),
            (1, 2, 9),
            (1, 3, 10),
            (2, 1, 15),
            (2, 2, 16),
            (2, 3, 17)
        ])
    );
}

#[test]
fn the_index_space_is_the_windows() {
    // Two rows of the window at row 4 hold one tensor row: partition row 1
    // is outside the index space even though the tensor has rows there.
    let e = run_window(&window_copy(false, true), [4, 0, 0, 0, 1, 0]).unwrap_err();
    assert!(
        e.contains("partition index [1, 0] is outside the index space of the view (tile [2, 3] over extents [1, 7]"),
        "{e}"
    );
    // An offset past the end leaves an empty window.
    let e = run_window(&window_copy(false, true), [9, 0, 0, 0, 0, 0]).unwrap_err();
    assert!(e.contains("over extents [0, 7]"), "{e}");
}

#[test]
fn negative_offsets_and_extents_are_faults_at_the_view() {
    let e = run_window(&window_copy(false, true), [-1, 0, 0, 0, 0, 0]).unwrap_err();
    assert!(
        e.contains("partition_view") && e.contains("a partition view's window at offsets [-1, 0]: offsets and extents must be at least 0"),
        "{e}"
    );
    let e = run_window(&window_copy(true, true), [0, 0, 2, -3, 0, 0]).unwrap_err();
    assert!(
        e.contains("a partition view's window at offsets [0, 0] with extents [2, -3]: offsets and extents must be at least 0"),
        "{e}"
    );
}

#[test]
fn windows_print_and_parse_back() {
    for extents in [false, true] {
        let f = window_copy(extents, true);
        let text = f.to_string();
        assert!(text.contains("offset(%o0, %o1)"), "{text}");
        assert_eq!(text.contains("extent(%n0, %n1)"), extents, "{text}");
        assert_eq!(parse_function(&text).unwrap().to_string(), text);
    }
}

#[test]
fn the_verifier_names_a_malformed_window() {
    let verify = |body: &str| {
        let src = format!("kernel @k(%t: tensor<f32, 2>, %a: i32, %f: f32) {{\n{body}\n}}");
        let func = parse_function(&src).unwrap();
        tile_ir::verify::verify(&func).unwrap_err().to_string()
    };
    assert_eq!(
        verify("%v = partition_view %t [4, 4] offset(%a) : view<f32, [4, 4]>"),
        "verifier: in kernel `k`, op `%0 = partition_view %t, %a`: expected the tensor, then 2 offsets and optionally 2 extents: 1, 3 or 5 operands, found 2"
    );
    assert_eq!(
        verify("%v = partition_view %t [4, 4] offset(%a, %f) : view<f32, [4, 4]>"),
        "verifier: in kernel `k`, op `%0 = partition_view %t, %a, %f`: the offset of axis 1 must be an integer scalar, found f32"
    );
}

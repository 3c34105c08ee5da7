//! CuTe's layout algebra called in kernels: layouts built with
//! `make_layout`, `row_major` and the algebra's functions view a tensor
//! through `layout_view(t, layout)`, `compose(layout)` and
//! `distribute(layout, tid)`, and their `size`, `cosize` and `at(i)` are
//! compile-time integers. Each view's load is checked against the same
//! layout computed by `tile_ir::layout`, on the CPU device and in the
//! interpreter.

use tile::ir::interp::HostTensor;
use tile::ir::layout::{self, Layout, Tiler};
use tile::{tile_kernel, Device, Tensor};

/// Loads `x` (64 elements) through four layouts of the algebra and stores
/// them row-major; `facts` gets
/// the raked product's size, cosize, rank and value at 5.
#[tile_kernel]
fn views(
    x: &Tensor<f32>,
    raked: &mut Tensor<f32, 2>,
    divided: &mut Tensor<f32, 2>,
    composed: &mut Tensor<f32, 2>,
    owned: &mut Tensor<f32, 2>,
    facts: &mut Tensor<i32>,
) {
    let block = make_layout((2, 2), (2, 1));
    let tiles = row_major((2, 8));
    let r = raked_product(block, tiles);
    let t = layout_view(x, r).load();
    layout_view(raked, (4, 16), (16, 1)).store(t);
    let d = zipped_divide(row_major((8, 8)), (2, 4));
    layout_view(divided, (8, 8), (8, 1)).store(layout_view(x, d).load());
    let c = layout_view(x, (64,), (1,)).compose(composition(
        right_inverse(row_major((64,))),
        col_major((4, 16)),
    ));
    layout_view(composed, (4, 16), (16, 1)).store(c.load());
    let threads = make_layout((2, 2), (2, 1));
    let mine = layout_view(x, (8, 8), (8, 1)).distribute(threads, 3);
    layout_view(owned, (4, 4), (4, 1)).store(mine.load());
    let known = iota::<i32>([4]);
    let values = select(
        known == 0,
        r.size() as i32,
        select(
            known == 1,
            r.cosize() as i32,
            select(known == 2, r.rank() as i32, r.at(5) as i32),
        ),
    );
    layout_view(facts, (4,), (1,)).store(values);
}

/// The elements of `x` seen through `l` as a `[rows, cols]` tile,
/// row-major: element `(i, j)` is `x[l(i + j · rows)]` (CuTe's
/// colexicographic index).
fn through(x: &[f32], l: &Layout, rows: usize, cols: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(rows * cols);
    for i in 0..rows {
        for j in 0..cols {
            out.push(x[l.call((i + j * rows) as i64) as usize]);
        }
    }
    out
}

#[test]
fn kernels_view_tensors_through_the_layouts_the_library_computes() {
    let dev = Device::cpu();
    let x: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let parse = |text: &str| text.parse::<Layout>().unwrap();
    let r = layout::raked_product(&parse("(2,2):(2,1)"), &parse("(2,8):(8,1)")).unwrap();
    let d =
        layout::zipped_divide(&parse("(8,8):(8,1)"), &"(2,4)".parse::<Tiler>().unwrap()).unwrap();
    let c = layout::composition(
        &layout::right_inverse(&parse("(64):(1)")).unwrap(),
        &parse("(4,16):(1,4)"),
    )
    .unwrap();
    let want_raked = through(&x, &r, 4, 16);
    let want_divided = through(&x, &d, 8, 8);
    let want_composed = through(&x, &c, 4, 16);
    // Thread 3 of 2 × 2 threads (coordinate (1, 1)) owns rows 1, 3, 5, 7
    // and columns 1, 3, 5, 7.
    let want_owned: Vec<f32> = (0..16)
        .map(|k| x[(1 + 2 * (k / 4)) * 8 + 1 + 2 * (k % 4)])
        .collect();
    let want_facts = vec![
        r.size() as i32,
        r.cosize() as i32,
        r.rank() as i32,
        r.call(5) as i32,
    ];

    let xt = dev.tensor_from_slice(&x, &[64]).unwrap();
    let mut outs: Vec<Tensor<f32>> = vec![
        dev.zeros(&[4, 16]).unwrap(),
        dev.zeros(&[8, 8]).unwrap(),
        dev.zeros(&[4, 16]).unwrap(),
        dev.zeros(&[4, 4]).unwrap(),
    ];
    let mut facts: Tensor<i32> = dev.zeros(&[4]).unwrap();
    let [raked, divided, composed, owned] = &mut outs[..] else {
        unreachable!()
    };
    views::launch(
        &dev,
        [1],
        (&xt, raked, divided, composed, owned, &mut facts),
    )
    .unwrap();
    assert_eq!(raked.to_vec().unwrap(), want_raked);
    assert_eq!(divided.to_vec().unwrap(), want_divided);
    assert_eq!(composed.to_vec().unwrap(), want_composed);
    assert_eq!(owned.to_vec().unwrap(), want_owned);
    assert_eq!(facts.to_vec().unwrap(), want_facts);

    let xh = HostTensor::from_vec(&[64], x).unwrap();
    let f32z = |shape: &[usize]| HostTensor::zeros(tile::ir::DType::F32, shape);
    let (mut a, mut b, mut c, mut d) =
        (f32z(&[4, 16]), f32z(&[8, 8]), f32z(&[4, 16]), f32z(&[4, 4]));
    let mut f = HostTensor::zeros(tile::ir::DType::I32, &[4]);
    views::interpret([1], (&xh, &mut a, &mut b, &mut c, &mut d, &mut f)).unwrap();
    assert_eq!(a.to_vec::<f32>().unwrap(), want_raked);
    assert_eq!(b.to_vec::<f32>().unwrap(), want_divided);
    assert_eq!(c.to_vec::<f32>().unwrap(), want_composed);
    assert_eq!(d.to_vec::<f32>().unwrap(), want_owned);
    assert_eq!(f.to_vec::<i32>().unwrap(), want_facts);
}

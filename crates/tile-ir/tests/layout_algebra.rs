//! Worked examples of the layout algebra, checked exactly: CuTe's
//! documentation examples (the layout tutorials of NVIDIA CUTLASS,
//! <https://github.com/NVIDIA/cutlass/blob/main/media/docs/cpp/cute/01_layout.md>
//! and <https://github.com/NVIDIA/cutlass/blob/main/media/docs/cpp/cute/02_layout_algebra.md>,
//! and the comments of `include/cute`), Mojo's `upcast` example
//! (<https://docs.modular.com/mojo/kernels/layout/layout/upcast>) and the
//! choices of docs/layouts.md ("Choices"). Where two forms are the same
//! function (size-1 modes), the check is size plus index map, as that
//! section prescribes.

use tile_ir::layout::*;

fn l(s: &str) -> Layout {
    s.parse().unwrap()
}

fn tiler(s: &str) -> Tiler {
    s.parse().unwrap()
}

fn map(layout: &Layout) -> Vec<i64> {
    (0..layout.size()).map(|i| layout.call(i)).collect()
}

fn same_function(a: &Layout, b: &Layout) {
    assert_eq!((a.size(), map(a)), (b.size(), map(b)), "{a} vs {b}");
}

/// Rows of the 2-D picture: entry (r, c) is `L(r + rows·c)`.
fn grid(layout: &Layout) -> Vec<Vec<i64>> {
    let rows = layout.shape().modes()[0].size();
    let cols = layout.shape().modes()[1].size();
    (0..rows)
        .map(|r| (0..cols).map(|c| layout.call(r + rows * c)).collect())
        .collect()
}

// ---- coalesce ------------------------------------------------------------

#[test]
fn coalesce_cute_doc() {
    let a = l("(2,(1,6)):(1,(6,2))");
    assert_eq!(coalesce(&a).to_string(), "12:1");
    assert_eq!(
        coalesce_by(&a, &"(1,1)".parse().unwrap())
            .unwrap()
            .to_string(),
        "(2,6):(1,2)"
    );
    assert_eq!(coalesce(&l("(2,4):(1,2)")).to_string(), "8:1");
}

#[test]
fn coalesce_four_cases() {
    // s0:d0 ++ 1:d1 => s0:d0, and 1:d0 ++ s1:d1 => s1:d1.
    assert_eq!(coalesce(&l("(4,1):(3,7)")).to_string(), "4:3");
    assert_eq!(coalesce(&l("(1,4):(7,3)")).to_string(), "4:3");
    // s0:d0 ++ s1:s0*d0 => s0*s1:d0.
    assert_eq!(coalesce(&l("(3,5):(2,6)")).to_string(), "15:2");
    // Otherwise both stay.
    assert_eq!(coalesce(&l("(3,5):(2,7)")).to_string(), "(3,5):(2,7)");
    // All size 1: the canonical 1:0.
    assert_eq!(coalesce(&l("(1,(1,1)):(4,(5,6))")).to_string(), "1:0");
    // Row-major does not coalesce; hierarchy does flatten.
    assert_eq!(
        coalesce(&l("(4,(2,3)):(6,(3,1))")).to_string(),
        "(4,2,3):(6,3,1)"
    );
    assert_eq!(
        coalesce(&l("((2,3),(4,5)):((1,2),(6,24))")).to_string(),
        "120:1"
    );
    // By profile: modes past the profile stay as they are.
    let x = l("((2,3),(4,5),(1,7)):((1,2),(6,24),(0,1))");
    assert_eq!(
        coalesce_by(&x, &"(0,0)".parse().unwrap())
            .unwrap()
            .to_string(),
        "(6,20,(1,7)):(1,6,(0,1))"
    );
}

// ---- composition ----------------------------------------------------------

#[test]
fn composition_worked_example() {
    // The worked example of CuTe's 02_layout_algebra tutorial.
    let r = composition(&l("(6,2):(8,2)"), &l("(4,3):(3,1)")).unwrap();
    assert_eq!(r.to_string(), "((2,2),3):((24,2),8)");
    assert_eq!(map(&r), [0, 24, 2, 26, 8, 32, 10, 34, 16, 40, 18, 42]);
    assert!(l("(4,3):(3,1)").shape().compatible(r.shape()));
}

#[test]
fn composition_reshape_examples() {
    // Example 2: 20:2 o (5,4):(4,1).
    assert_eq!(
        composition(&l("20:2"), &l("(5,4):(4,1)"))
            .unwrap()
            .to_string(),
        "(5,4):(8,2)"
    );
    assert_eq!(
        composition(&l("20:2"), &l("5:4")).unwrap().to_string(),
        "5:8"
    );
    // Example 3: (10,2):(16,4) o (5,4):(1,5), CuTe's static form.
    let r = composition(&l("(10,2):(16,4)"), &l("(5,4):(1,5)")).unwrap();
    assert_eq!(r.to_string(), "(5,(2,2)):(16,(80,4))");
    // CuTe's dynamic form is the same function.
    same_function(&r, &l("((5,1),(2,2)):((16,4),(80,4))"));
    assert_eq!(
        composition(&l("(10,2):(16,4)"), &l("4:5"))
            .unwrap()
            .to_string(),
        "(2,2):(80,4)"
    );
}

#[test]
fn composition_divide_and_mod_out_the_shape() {
    // (3,6,2,8):(w,x,y,z) o 16:9 = (1,2,2,4):(9w,3x,y,z), here with
    // strides that cannot coalesce.
    let (w, x, y, z) = (1, 1000, 100_000, 10_000_000);
    let a = Layout::new(IntTuple::flat(&[3, 6, 2, 8]), IntTuple::flat(&[w, x, y, z])).unwrap();
    let r = composition(&a, &l("16:9")).unwrap();
    let doc = Layout::new(
        IntTuple::flat(&[1, 2, 2, 4]),
        IntTuple::flat(&[9 * w, 3 * x, y, z]),
    )
    .unwrap();
    same_function(&r, &doc);
    assert_eq!(r.to_string(), "(2,2,4):(3000,100000,10000000)");
    // Shape division of the doc: (6,2) / 2, 3, 6, 12 via stride d = 2, 3, 6, 12.
    let a = l("(6,2):(1,6)");
    for (d, shape) in [(2, "(3,2)"), (3, "(2,2)"), (6, "2"), (12, "1")] {
        let b = Layout::strided(a.size() / d, d).unwrap();
        let r = composition(&a, &b).unwrap();
        assert_eq!(
            r.size(),
            shape.parse::<IntTuple>().unwrap().size(),
            "d = {d}"
        );
        assert_eq!(map(&r), (0..b.size()).map(|i| i * d).collect::<Vec<_>>());
    }
}

#[test]
fn composition_by_mode_cute_doc() {
    let a = l("(12,(4,8)):(59,(13,1))");
    let r = composition_tiler(&a, &tiler("<3:4, 8:2>")).unwrap();
    assert_eq!(r.to_string(), "(3,(2,4)):(236,(26,1))");
    let same = Layout::concat(&[
        composition(&a.mode(0).unwrap(), &l("3:4")).unwrap(),
        composition(&a.mode(1).unwrap(), &l("8:2")).unwrap(),
    ]);
    assert_eq!(r, same);
    let r = composition_tiler(&a, &tiler("(3,8)")).unwrap();
    assert_eq!(r.to_string(), "(3,(4,2)):(59,(13,1))");
    assert_eq!(composition_tiler(&a, &tiler("<3:1, 8:1>")).unwrap(), r);
    // A layout tiler is a 1-D composition.
    assert_eq!(
        composition_tiler(&a, &tiler("4:2")).unwrap(),
        composition(&a, &l("4:2")).unwrap()
    );
}

#[test]
fn composition_with_stride_zero_and_tails() {
    assert_eq!(
        composition(&l("(4,8):(1,4)"), &l("(4,3):(0,1)"))
            .unwrap()
            .to_string(),
        "(4,3):(0,1)"
    );
    // B reaching past A's size uses A's last mode.
    let r = composition(&l("(4,2):(1,100)"), &l("4:4")).unwrap();
    assert_eq!(map(&r), [0, 100, 200, 300]);
}

// ---- complement -------------------------------------------------------------

#[test]
fn complement_cute_doc() {
    let cases = [
        ("4:1", "6:4"),
        ("6:4", "4:1"),
        ("(4,6):(1,4)", "1:0"),
        ("4:2", "(2,3):(1,8)"),
        ("(2,4):(1,6)", "3:2"),
        ("(2,2):(1,6)", "(3,2):(2,12)"),
    ];
    for (a, expected) in cases {
        assert_eq!(
            complement(&l(a), 24).unwrap().to_string(),
            expected,
            "complement({a}, 24)"
        );
    }
}

#[test]
fn complement_cute_doc_cosizes() {
    // "(4,(2,3)):(2,(1,8)) has cosize 24", "((2,4),3):((1,6),2) has cosize 24
    // and unique indices", "((2,2),(3,2)):((1,6),(2,12))" likewise.
    for (a, pair) in [
        ("4:2", "(4,(2,3)):(2,(1,8))"),
        ("(2,4):(1,6)", "((2,4),3):((1,6),2)"),
        ("(2,2):(1,6)", "((2,2),(3,2)):((1,6),(2,12))"),
    ] {
        let joined = Layout::concat(&[l(a), complement(&l(a), 24).unwrap()]);
        assert_eq!(joined.to_string(), pair);
        assert_eq!(joined.cosize(), 24);
        let mut image = map(&joined);
        image.sort();
        assert_eq!(image, (0..24).collect::<Vec<_>>());
    }
}

#[test]
fn complement_ignores_zero_strides_and_rounds_up() {
    assert_eq!(
        complement(&l("(4,3):(1,0)"), 24).unwrap().to_string(),
        "6:4"
    );
    assert_eq!(complement(&l("4:0"), 24).unwrap().to_string(), "24:1");
    assert_eq!(complement(&l("4:1"), 10).unwrap().to_string(), "3:4");
    assert_eq!(complement(&l("4:1"), 3).unwrap().to_string(), "1:0");
}

// ---- divides -------------------------------------------------------------------

#[test]
fn logical_divide_1d_worked_example() {
    let a = l("(4,2,3):(2,1,8)");
    let b = l("4:2");
    assert_eq!(complement(&b, a.size()).unwrap().to_string(), "(2,3):(1,8)");
    let r = logical_divide(&a, &Tiler::Layout(b)).unwrap();
    assert_eq!(r.to_string(), "((2,2),(2,3)):((4,1),(2,8))");
    assert_eq!(
        map(&r),
        [0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15, 16, 20, 17, 21, 18, 22, 19, 23]
    );
}

#[test]
fn logical_divide_2d_cute_doc() {
    let a = l("(9,(4,8)):(59,(13,1))");
    let t = tiler("<3:3, (2,4):(1,8)>");
    let r = logical_divide(&a, &t).unwrap();
    assert_eq!(
        r.to_string(),
        "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))"
    );
    // The first mode of each mode is the composition.
    let firsts = Layout::concat(
        &r.modes()
            .iter()
            .map(|m| m.mode(0).unwrap())
            .collect::<Vec<_>>(),
    );
    assert_eq!(firsts.to_string(), "(3,(2,4)):(177,(13,2))");
    assert_eq!(firsts, composition_tiler(&a, &t).unwrap());
}

#[test]
fn zipped_tiled_flat_divide_cute_doc() {
    let a = l("(9,(4,8)):(59,(13,1))");
    let t = tiler("<3:3, (2,4):(1,8)>");
    let zd = zipped_divide(&a, &t).unwrap();
    assert_eq!(
        zd.to_string(),
        "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))"
    );
    // Shape ((3,8),(3,4)) and mode 0 is the composition.
    let sizes: Vec<Vec<i64>> = zd
        .modes()
        .iter()
        .map(|m| m.modes().iter().map(Layout::size).collect())
        .collect();
    assert_eq!(sizes, [[3, 8], [3, 4]]);
    assert_eq!(zd.mode(0).unwrap(), composition_tiler(&a, &t).unwrap());
    // The offset of tile 3, tile 7 and tile (1,2).
    assert_eq!(zd.crd2idx(&"(0,3)".parse().unwrap()).unwrap(), 26);
    assert_eq!(zd.crd2idx(&"(0,7)".parse().unwrap()).unwrap(), 59 + 1);
    assert_eq!(zd.crd2idx(&"(0,(1,2))".parse().unwrap()).unwrap(), 59 + 1);
    let td = tiled_divide(&a, &t).unwrap();
    assert_eq!(
        td.to_string(),
        "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))"
    );
    let fd = flat_divide(&a, &t).unwrap();
    assert_eq!(fd.to_string(), "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))");
    for layout in [&td, &fd] {
        same_function(&coalesce(layout), &coalesce(&zd));
    }
}

#[test]
fn divides_with_a_shape_tiler_and_leftover_modes() {
    let a = l("(8,8,3):(1,8,64)");
    let zd = zipped_divide(&a, &tiler("(2,4)")).unwrap();
    assert_eq!(zd.to_string(), "((2,4),(4,2,3)):((1,8),(2,32,64))");
    assert_eq!(
        tiled_divide(&a, &tiler("(2,4)")).unwrap().to_string(),
        "((2,4),4,2,3):((1,8),2,32,64)"
    );
    assert_eq!(
        flat_divide(&a, &tiler("(2,4)")).unwrap().to_string(),
        "(2,4,4,2,3):(1,8,2,32,64)"
    );
    // A 1-D layout tiler keeps the rank-2 (tile, rest) form.
    let zd = zipped_divide(&l("(4,2,3):(2,1,8)"), &tiler("4:2")).unwrap();
    assert_eq!(zd.to_string(), "((2,2),(2,3)):((4,1),(2,8))");
    assert_eq!(
        tiled_divide(&l("(4,2,3):(2,1,8)"), &tiler("4:2"))
            .unwrap()
            .to_string(),
        "((2,2),2,3):((4,1),2,8)"
    );
}

// ---- products ------------------------------------------------------------------

#[test]
fn logical_product_1d_worked_example() {
    let a = l("(2,2):(4,1)");
    assert_eq!(complement(&a, 24).unwrap().to_string(), "(2,3):(2,8)");
    let r = logical_product(&a, &tiler("6:1")).unwrap();
    assert_eq!(r.to_string(), "((2,2),(2,3)):((4,1),(2,8))");
    assert_eq!(
        grid(&r),
        [
            [0, 2, 8, 10, 16, 18],
            [4, 6, 12, 14, 20, 22],
            [1, 3, 9, 11, 17, 19],
            [5, 7, 13, 15, 21, 23]
        ]
    );
    // Identical to the 1-D logical divide example.
    assert_eq!(
        r,
        logical_divide(&l("(4,2,3):(2,1,8)"), &tiler("4:2")).unwrap()
    );
}

#[test]
fn logical_product_with_eight_reordered_tiles() {
    // 02_layout_algebra.md: B = (4,2):(2,1) gives 8 tiles in another order.
    let r = logical_product(&l("(2,2):(4,1)"), &tiler("(4,2):(2,1)")).unwrap();
    assert_eq!(r.to_string(), "((2,2),(4,2)):((4,1),(8,2))");
    let mut image = map(&r);
    image.sort();
    assert_eq!(image, (0..32).collect::<Vec<_>>());
}

#[test]
fn blocked_and_raked_products_cute_doc() {
    // A 2x5 row-major block over a 3x4 column-major arrangement.
    let a = l("(2,5):(5,1)");
    let b = l("(3,4):(1,3)");
    let blocked = blocked_product(&a, &b).unwrap();
    assert_eq!(blocked.to_string(), "((2,3),(5,4)):((5,10),(1,30))");
    let raked = raked_product(&a, &b).unwrap();
    assert_eq!(raked.to_string(), "((3,2),(4,5)):((10,5),(30,1))");
    // The same result as the by-mode product with the unintuitive tiler.
    let by_mode = logical_product(&a, &tiler("<3:5, 4:6>")).unwrap();
    assert_eq!(by_mode, blocked);
    // Row 0 of the blocked picture: block row 0, then the next block to the right.
    assert_eq!(
        grid(&blocked)[0],
        (0..20)
            .map(|c| blocked.crd2idx(&IntTuple::flat(&[0, c])).unwrap())
            .collect::<Vec<_>>()
    );
    assert_eq!(&grid(&blocked)[0][..6], [0, 1, 2, 3, 4, 30]);
    assert_eq!(&grid(&raked)[0][..6], [0, 30, 60, 90, 1, 31]);
}

#[test]
fn products_pad_to_the_larger_rank() {
    let r = blocked_product(&l("4:1"), &l("(2,3):(1,2)")).unwrap();
    assert_eq!(r.to_string(), "((4,2),(1,3)):((1,4),(0,8))");
    let r = blocked_product(&l("4:1"), &l("3:1")).unwrap();
    assert_eq!(r.to_string(), "((4,3)):((1,4))");
}

#[test]
fn zipped_tiled_flat_product() {
    let a = l("(2,5):(5,1)");
    let t = tiler("<3:5, 4:6>");
    assert_eq!(
        zipped_product(&a, &t).unwrap().to_string(),
        "((2,5),(3,4)):((5,1),(10,30))"
    );
    assert_eq!(
        tiled_product(&a, &t).unwrap().to_string(),
        "((2,5),3,4):((5,1),10,30)"
    );
    assert_eq!(
        flat_product(&a, &t).unwrap().to_string(),
        "(2,5,3,4):(5,1,10,30)"
    );
    // Modes past the tiler go to the rest mode.
    let z = zipped_product(&l("(2,5,7):(5,1,10)"), &t).unwrap();
    assert_eq!(z.to_string(), "((2,5),(3,4,7)):((5,1),(10,30,10))");
}

#[test]
fn ordered_layouts_cute_header() {
    let r =
        make_ordered_layout(&"(2,2,2,2)".parse().unwrap(), &"(0,2,3,1)".parse().unwrap()).unwrap();
    assert_eq!(r.to_string(), "(2,2,2,2):(1,4,8,2)");
    // A leaf of the order may stand for a subtree, which is column-major.
    let r = make_ordered_layout(&"((2,3),4)".parse().unwrap(), &"(1,0)".parse().unwrap()).unwrap();
    assert_eq!(r.to_string(), "((2,3),4):((4,8),1)");
    // Equal orders go left to right.
    let r = make_ordered_layout(&"(2,3,4)".parse().unwrap(), &"(1,0,1)".parse().unwrap()).unwrap();
    assert_eq!(r.to_string(), "(2,3,4):(3,1,6)");
}

#[test]
fn tile_to_shape_repeats_a_block() {
    let block = l("(2,2):(1,2)");
    let r = tile_to_shape(&block, &"(4,6)".parse().unwrap(), None).unwrap();
    assert_eq!(r.to_string(), "((2,2),(2,3)):((1,4),(2,8))");
    assert!("(4,6)".parse::<IntTuple>().unwrap().compatible(r.shape()));
    // Repeat along mode 1 first.
    let r = tile_to_shape(
        &block,
        &"(4,6)".parse().unwrap(),
        Some(&"(1,0)".parse().unwrap()),
    )
    .unwrap();
    assert_eq!(r.to_string(), "((2,2),(2,3)):((1,12),(2,4))");
    // A rank-1 block against a rank-3 target.
    let r = tile_to_shape(&l("8:1"), &"(16,2,3)".parse().unwrap(), None).unwrap();
    assert_eq!(r.to_string(), "((8,2),(1,2),(1,3)):((1,8),(0,16),(0,32))");
}

// ---- inverses --------------------------------------------------------------------

#[test]
fn left_inverse_of_a_non_surjective_layout() {
    // CuTe C++'s answer (docs/layouts.md, Choices).
    let a = l("(4,5):(1,5)");
    let r = left_inverse(&a).unwrap();
    assert_eq!(r.to_string(), "(5,5):(1,4)");
    assert!((0..a.size()).all(|i| r.call(a.call(i)) == i));
}

#[test]
fn inverses_of_permutations() {
    let cases = [
        ("(4,2):(2,1)", "(2,4):(4,1)"),
        ("(2,3):(3,1)", "(3,2):(2,1)"),
        ("((2,2),(2,2)):((1,4),(2,8))", "(2,2,2,2):(1,4,2,8)"),
        ("8:1", "8:1"),
    ];
    for (a, inv) in cases {
        let a = l(a);
        let right = right_inverse(&a).unwrap();
        assert_eq!(right.to_string(), inv, "right_inverse({a})");
        assert_eq!(left_inverse(&a).unwrap(), right, "left_inverse({a})");
        assert!((0..a.size()).all(|i| a.call(right.call(i)) == i && right.call(a.call(i)) == i));
    }
}

#[test]
fn right_inverse_of_partial_layouts() {
    // Only the stride chain starting at 1 is inverted.
    assert_eq!(right_inverse(&l("(4,3):(1,8)")).unwrap().to_string(), "4:1");
    assert_eq!(right_inverse(&l("4:2")).unwrap().to_string(), "1:0");
    assert_eq!(right_inverse(&l("(2,4):(0,1)")).unwrap().to_string(), "4:2");
    assert_eq!(right_inverse(&l("1:0")).unwrap().to_string(), "1:0");
    assert_eq!(left_inverse(&l("4:2")).unwrap().to_string(), "(2,4):(0,1)");
}

#[test]
fn left_inverse_cute_unit_test_layouts() {
    // The non-negative layouts of CuTe's inverse_left.cpp, checked with its
    // post-condition L(R(L(i))) = L(i), and R(L(i)) = i for the injective ones.
    let cases = [
        "1:0",
        "1:1",
        "((1,1)):((0,0))",
        "((3,7)):((0,0))",
        "(4):(0)",
        "(4):(1)",
        "(4):(2)",
        "(2,4):(0,2)",
        "(8,4):(1,8)",
        "(8,4):(4,1)",
        "(2,4,6):(1,2,8)",
        "(2,4,6):(4,1,8)",
        "(2,4,4,6):(4,1,0,8)",
        "(4,2):(1,16)",
        "(4,2):(1,5)",
        "(128,128):(65536,1)",
        "(128,160):(65536,1)",
        "(128,3,160):(65536,512,1)",
        "(128,64):(131072,2)",
        "(32,4,4,4):(262144,4,8388608,1)",
        "(2,2,2):(4,0,1)",
        "(((((32,4),1),(32,2)),4),1,(2,2),2):(((((262144,4),0),(0,1)),8388608),0,(2,16),32)",
    ];
    for text in cases {
        let a = l(text);
        let r = left_inverse(&a).unwrap();
        let injective = a
            .stride()
            .leaves()
            .iter()
            .zip(a.shape().leaves())
            .all(|(&d, s)| d != 0 || s == 1);
        // Every index of the small layouts, an even sample of the big ones.
        for i in (0..a.size()).step_by(1 + a.size() as usize / 4096) {
            assert_eq!(a.call(r.call(a.call(i))), a.call(i), "{text} at {i}");
            if injective {
                assert_eq!(r.call(a.call(i)), i, "{text} at {i}");
            }
        }
    }
    assert_eq!(
        left_inverse(&l("(128,128):(65536,1)")).unwrap().to_string(),
        "(65536,128):(128,1)"
    );
}

#[test]
fn right_inverse_cute_unit_test_layouts() {
    let cases = [
        "1:0",
        "1:1",
        "((3,7)):((0,0))",
        "(4):(0)",
        "(4):(2)",
        "(2,4):(0,2)",
        "(8,4):(4,1)",
        "(2,4,6):(4,1,8)",
        "(2,4,4,6):(4,1,0,8)",
        "(4,2):(1,16)",
        "(4,2):(1,5)",
        "(128,128):(65536,1)",
        "(32,4,4,4):(262144,4,8388608,1)",
    ];
    for text in cases {
        let a = l(text);
        let r = right_inverse(&a).unwrap();
        assert!((0..r.size()).all(|i| a.call(r.call(i)) == i), "{text}");
    }
    assert_eq!(
        right_inverse(&l("(2,4,6):(4,1,8)")).unwrap().to_string(),
        "(4,2,6):(2,1,8)"
    );
}

// ---- upcast, downcast, recast --------------------------------------------------

#[test]
fn upcast_mojo_example() {
    let x = Layout::row_major("(4,8)".parse().unwrap()).unwrap();
    assert_eq!(x.to_string(), "(4,8):(8,1)");
    assert_eq!(upcast(&x, 2).unwrap().to_string(), "(4,4):(4,1)");
    assert_eq!(downcast(&upcast(&x, 2).unwrap(), 2).unwrap(), x);
}

#[test]
fn upcast_rules_per_mode() {
    // new_stride = shape_div(d, n), new_shape = shape_div(s, shape_div(n, d)).
    assert_eq!(
        upcast(&l("(4,8):(1,4)"), 4).unwrap().to_string(),
        "(1,8):(1,1)"
    );
    assert_eq!(
        upcast(&l("(8,3):(2,0)"), 4).unwrap().to_string(),
        "(4,3):(1,0)"
    );
    assert_eq!(
        upcast(&l("((2,8),4):((32,1),8)"), 8).unwrap().to_string(),
        "((2,1),4):((4,1),1)"
    );
    assert_eq!(upcast(&l("8:-1"), 2).unwrap().to_string(), "4:-1");
    assert_eq!(
        downcast(&l("(4,4):(1,8)"), 4).unwrap().to_string(),
        "(16,4):(1,32)"
    );
}

#[test]
fn recast_between_widths() {
    let x = Layout::row_major("(4,8)".parse().unwrap()).unwrap();
    assert_eq!(recast(&x, 16, 16).unwrap(), x);
    assert_eq!(recast(&x, 16, 32).unwrap().to_string(), "(4,4):(4,1)");
    assert_eq!(recast(&x, 32, 8).unwrap().to_string(), "(4,32):(32,1)");
    // 3 old elements of 16 bits = 2 new of 24: upcast by 3 needs 3 | 8.
    assert!(recast(&x, 16, 48).is_err());
    // A row of six 16-bit elements holds four 24-bit ones.
    assert_eq!(
        recast(&l("(4,6):(6,1)"), 16, 24).unwrap().to_string(),
        "(4,4):(4,1)"
    );
    assert_eq!(
        recast(&l("(4,6):(6,1)"), 16, 48).unwrap().to_string(),
        "(4,2):(2,1)"
    );
}

#[test]
fn shape_div_cute_doc() {
    let s: IntTuple = "(6,2)".parse().unwrap();
    for (d, expected) in [(2, "(3,2)"), (3, "(2,2)"), (6, "(1,2)"), (12, "(1,1)")] {
        assert_eq!(
            shape_div(&s, &IntTuple::Int(d)).unwrap().to_string(),
            expected
        );
    }
    let s: IntTuple = "(3,6,2,8)".parse().unwrap();
    for (d, expected) in [
        (3, "(1,6,2,8)"),
        (6, "(1,3,2,8)"),
        (9, "(1,2,2,8)"),
        (72, "(1,1,1,4)"),
    ] {
        assert_eq!(
            shape_div(&s, &IntTuple::Int(d)).unwrap().to_string(),
            expected
        );
    }
    assert_eq!(
        shape_div(&IntTuple::Int(3), &IntTuple::Int(6)).unwrap(),
        IntTuple::Int(1)
    );
    assert_eq!(
        shape_div(&IntTuple::Int(12), &"(2,3)".parse().unwrap()).unwrap(),
        IntTuple::Int(2)
    );
    assert_eq!(
        shape_div(&"(4,9)".parse().unwrap(), &"(2,3)".parse().unwrap())
            .unwrap()
            .to_string(),
        "(2,3)"
    );
}

// ---- swizzles --------------------------------------------------------------------

#[test]
fn swizzle_masks_and_bits() {
    let sw = Swizzle::new(3, 4, 3).unwrap();
    assert_eq!((sw.yyy_mask(), sw.zzz_mask()), (0b11_1000_0000, 0b111_0000));
    // Bits 7..9 are XOR-ed into bits 4..6; bits 0..3 are left alone.
    assert_eq!(sw.apply(0b10_1000_0000), 0b10_1101_0000);
    assert_eq!(sw.apply(0b100_0000_0000), 0b100_0000_0000);
    assert_eq!(sw.apply(0b1111), 0b1111);
    let neg = Swizzle::new(3, 0, -3).unwrap();
    assert_eq!((neg.yyy_mask(), neg.zzz_mask()), (0b111, 0b111_000));
    assert_eq!(neg.apply(0b000_101), 0b101_101);
}

#[test]
fn swizzled_8x8_row_major() {
    // Sw<3,0,3> o 0 o (8,8):(8,1): row r, column c lands at 8r + (c xor r).
    let c: ComposedLayout = "Sw<3,0,3> o 0 o (8,8):(8,1)".parse().unwrap();
    for r in 0..8 {
        for col in 0..8 {
            assert_eq!(
                c.crd2idx(&IntTuple::flat(&[r, col])).unwrap(),
                8 * r + (col ^ r)
            );
        }
    }
}

#[test]
fn swizzled_layouts_slice_consistently() {
    // CuTe's swizzle_layout.cpp: slicing a row or a column of a swizzled
    // layout gives the same offsets as indexing the whole.
    for text in [
        "Sw<3,0,3> o 0 o (8,8):(8,1)",
        "Sw<3,0,-3> o 0 o (8,8):(8,1)",
        "Sw<2,1,3> o 0 o ((2,2,2),(2,2,2)):((32,2,8),(4,1,16))",
    ] {
        let c: ComposedLayout = text.parse().unwrap();
        let (rows, cols) = (
            c.layout().mode(0).unwrap().size(),
            c.layout().mode(1).unwrap().size(),
        );
        for i in 0..rows {
            let row = c.slice(&format!("({i},_)").parse().unwrap()).unwrap();
            for j in 0..cols {
                let whole = c.crd2idx(&IntTuple::flat(&[i, j])).unwrap();
                assert_eq!(whole, row.call(j), "{text} ({i},{j})");
                let col = c.slice(&format!("(_,{j})").parse().unwrap()).unwrap();
                assert_eq!(whole, col.call(i), "{text} ({i},{j})");
            }
        }
    }
}

#[test]
fn swizzled_layouts_compose_inside() {
    let c: ComposedLayout = "Sw<3,0,3> o 0 o (8,8):(8,1)".parse().unwrap();
    let tile = c.compose(&tiler("(4,4)")).unwrap();
    assert_eq!(tile.to_string(), "Sw<3,0,3> o 0 o (4,4):(8,1)");
    for i in 0..16 {
        assert_eq!(
            tile.call(i),
            c.crd2idx(&IntTuple::flat(&[i % 4, i / 4])).unwrap()
        );
    }
    assert_eq!(
        c.to_table().unwrap().lines().nth(3),
        Some(" 0  |  0 |  1 |  2 |  3 |  4 |  5 |  6 |  7 |")
    );
    assert_eq!(
        c.to_table().unwrap().lines().nth(5),
        Some(" 1  |  9 |  8 | 11 | 10 | 13 | 12 | 15 | 14 |")
    );
}

//! Int-tuples, layouts, coordinates and their text forms: the examples of
//! CuTe's layout tutorial (NVIDIA CUTLASS,
//! <https://github.com/NVIDIA/cutlass/blob/main/media/docs/cpp/cute/01_layout.md>)
//! and of docs/layouts.md ("What a layout is").

use tile_ir::layout::{crd2idx, idx2crd, Coord, IntTuple, Layout};

fn t(s: &str) -> IntTuple {
    s.parse().unwrap()
}

fn l(s: &str) -> Layout {
    s.parse().unwrap()
}

fn map(layout: &Layout) -> Vec<i64> {
    (0..layout.size()).map(|i| layout.call(i)).collect()
}

#[test]
fn int_tuple_measures() {
    let x = t("(4,(2,3))");
    assert_eq!((x.rank(), x.depth(), x.size()), (2, 2, 24));
    assert_eq!(x.flatten(), t("(4,2,3)"));
    assert_eq!(x.leaves(), [4, 2, 3]);
    assert_eq!((t("7").rank(), t("7").depth(), t("7").size()), (1, 0, 7));
    assert_eq!((t("(7)").rank(), t("(7)").depth()), (1, 1));
    assert_eq!((t("()").rank(), t("()").depth(), t("()").size()), (0, 1, 1));
}

#[test]
fn bare_int_and_one_tuple_differ() {
    assert_ne!(t("5"), t("(5)"));
    assert_eq!(t("5").to_string(), "5");
    assert_eq!(t("(5)").to_string(), "(5)");
    assert_ne!(l("3:1"), l("(3):(1)"));
    assert_eq!(map(&l("3:1")), map(&l("(3):(1)")));
}

#[test]
fn congruent_and_compatible() {
    assert!(t("(4,(2,3))").congruent(&t("(1,(4,8))")));
    assert!(!t("(4,(2,3))").congruent(&t("(1,4)")));
    assert!(!t("4").congruent(&t("(4)")));
    // A ≼ B: an int matches any tuple of the same size.
    assert!(t("24").compatible(&t("(4,(2,3))")));
    assert!(t("(4,6)").compatible(&t("(4,(2,3))")));
    assert!(!t("(4,(2,3))").compatible(&t("(4,6)")));
    assert!(!t("(6,4)").compatible(&t("(4,(2,3))")));
    assert!(!t("(4,6,1)").compatible(&t("(4,6)")));
}

#[test]
fn prefix_and_inner_products() {
    assert_eq!(t("(2,(3,4))").prefix_product(1), t("(1,(2,6))"));
    assert_eq!(t("(2,(3,4))").suffix_product(1), t("(12,(4,1))"));
    assert_eq!(t("(1,(2,3))").inner_product(&t("(3,(12,1))")).unwrap(), 30);
    assert!(t("(1,2)").inner_product(&t("(1,(2,3))")).is_err());
}

#[test]
fn int_tuple_text_accepts_blanks_signs_and_static_marks() {
    assert_eq!(t(" ( _4 , ( -2 , 3 ) ) ").to_string(), "(4,(-2,3))");
    assert_eq!(l("(_2,_3):(_1,_2)").to_string(), "(2,3):(1,2)");
}

#[test]
fn layout_text_round_trips() {
    for text in [
        "((2,2),3):((24,2),8)",
        "(4,(2,3)):(1,(4,8))",
        "8:1",
        "(3):(1)",
        "((3)):((1))",
        "():()",
        "(2,3):(0,-1)",
    ] {
        assert_eq!(l(text).to_string(), text);
    }
}

#[test]
fn default_strides() {
    let s = t("(2,(2,2))");
    assert_eq!(
        Layout::column_major(s.clone()).unwrap().to_string(),
        "(2,(2,2)):(1,(2,4))"
    );
    assert_eq!(
        Layout::row_major(t("(2,4)")).unwrap().to_string(),
        "(2,4):(4,1)"
    );
    assert_eq!(
        Layout::row_major(t("(4,(2,3))")).unwrap().to_string(),
        "(4,(2,3)):(6,(3,1))"
    );
    assert_eq!(
        Layout::column_major(t("(4,(2,3))")).unwrap().to_string(),
        "(4,(2,3)):(1,(4,8))"
    );
    assert_eq!(Layout::column_major(t("8")).unwrap().to_string(), "8:1");
}

#[test]
fn size_cosize_rank_depth() {
    let x = l("(2,(2,2)):(4,(2,1))");
    assert_eq!((x.size(), x.cosize(), x.rank(), x.depth()), (8, 8, 2, 2));
    let y = l("(4,2):(2,1)");
    assert_eq!((y.size(), y.cosize()), (8, 8));
    let gaps = l("(2,3):(1,5)");
    assert_eq!(gaps.cosize(), 12);
    assert_eq!(l("(3,7):(0,0)").cosize(), 1);
}

#[test]
fn coordinates_of_cute_layout_doc() {
    // 01_layout.md: idx2crd and crd2idx for (3,(2,3)):(3,(12,1)).
    let shape = t("(3,(2,3))");
    let stride = t("(3,(12,1))");
    assert_eq!(idx2crd(16, &shape), t("(1,(1,2))"));
    for c in ["16", "(1,5)", "(1,(1,2))"] {
        assert_eq!(crd2idx(&t(c), &shape, &stride).unwrap(), 17);
    }
    let x = Layout::new(shape, stride).unwrap();
    assert_eq!(x.idx2crd(16), t("(1,(1,2))"));
    assert_eq!(x.call(16), 17);
    // The 3x6 table of that section.
    let rows: Vec<Vec<i64>> = (0..3)
        .map(|i| {
            (0..6)
                .map(|j| x.crd2idx(&IntTuple::flat(&[i, j])).unwrap())
                .collect()
        })
        .collect();
    assert_eq!(
        rows,
        [
            [0, 12, 1, 13, 2, 14],
            [3, 15, 4, 16, 5, 17],
            [6, 18, 7, 19, 8, 20]
        ]
    );
}

#[test]
fn call_is_idx2crd_then_crd2idx_and_extends_past_size() {
    let x = l("(2,(3,4)):(1,(2,100))");
    for i in 0..40 {
        assert_eq!(x.call(i), x.crd2idx(&x.idx2crd(i)).unwrap(), "index {i}");
    }
    // Past the size the last mode keeps counting: 24 -> (0,(0,4)).
    assert_eq!(x.idx2crd(24), t("(0,(0,4))"));
    assert_eq!(x.call(24), 400);
}

#[test]
fn sublayouts_select_take() {
    let a = Layout::column_major(t("(4,(3,6))")).unwrap();
    assert_eq!(a.to_string(), "(4,(3,6)):(1,(4,12))");
    assert_eq!(a.mode(0).unwrap().to_string(), "4:1");
    assert_eq!(a.mode(1).unwrap().to_string(), "(3,6):(4,12)");
    assert_eq!(a.mode(1).unwrap().mode(0).unwrap().to_string(), "3:4");
    assert_eq!(a.mode(1).unwrap().mode(1).unwrap().to_string(), "6:12");
    assert_eq!(a.mode(2), None);

    let b = Layout::column_major(t("(2,3,5,7)")).unwrap();
    assert_eq!(b.to_string(), "(2,3,5,7):(1,2,6,30)");
    assert_eq!(b.select(&[1, 3]).unwrap().to_string(), "(3,7):(2,30)");
    assert_eq!(
        b.select(&[0, 1, 3]).unwrap().to_string(),
        "(2,3,7):(1,2,30)"
    );
    assert_eq!(b.select(&[2]).unwrap().to_string(), "(5):(6)");
    assert_eq!(b.take(1, 3).unwrap().to_string(), "(3,5):(2,6)");
    assert_eq!(b.take(1, 4).unwrap().to_string(), "(3,5,7):(2,6,30)");
    assert!(b.take(1, 1).is_err());
}

#[test]
fn concatenation_append_prepend_replace() {
    let a = l("3:1");
    let b = l("4:3");
    let row = Layout::concat(&[a.clone(), b.clone()]);
    let col = Layout::concat(&[b.clone(), a.clone()]);
    assert_eq!(row.to_string(), "(3,4):(1,3)");
    assert_eq!(col.to_string(), "(4,3):(3,1)");
    assert_eq!(
        Layout::concat(&[row.clone(), col]).to_string(),
        "((3,4),(4,3)):((1,3),(3,1))"
    );
    let aa = Layout::concat(std::slice::from_ref(&a));
    assert_eq!(aa.to_string(), "(3):(1)");
    assert_eq!(
        Layout::concat(std::slice::from_ref(&aa)).to_string(),
        "((3)):((1))"
    );
    assert_eq!(
        Layout::concat(&[a.clone(), aa, a.clone()]).to_string(),
        "(3,(3),3):(1,(1),1)"
    );

    let ab = a.append(&b);
    assert_eq!(ab.to_string(), "(3,4):(1,3)");
    assert_eq!(a.prepend(&b).to_string(), "(4,3):(3,1)");
    let c = ab.append(&ab);
    assert_eq!(c.to_string(), "(3,4,(3,4)):(1,3,(1,3))");
    assert_eq!(c.replace(2, &b).unwrap().to_string(), "(3,4,4):(1,3,3)");
    assert!(c.replace(3, &b).is_err());
}

#[test]
fn group_and_flatten() {
    let a = Layout::column_major(t("(2,3,5,7)")).unwrap();
    let b = a.group(0, 2).unwrap();
    assert_eq!(b.to_string(), "((2,3),5,7):((1,2),6,30)");
    let c = b.group(1, 3).unwrap();
    assert_eq!(c.to_string(), "((2,3),(5,7)):((1,2),(6,30))");
    assert_eq!(b.flatten(), a);
    assert_eq!(c.flatten(), a);
    assert!(a.group(2, 5).is_err());
}

#[test]
fn slicing_with_free_modes() {
    let x = l("((2,3),4):((1,2),6)");
    let s = |c: &str| x.slice(&c.parse::<Coord>().unwrap()).unwrap().to_string();
    assert_eq!(s("_"), "((2,3),4):((1,2),6)");
    assert_eq!(s("(_,2)"), "(2,3):(1,2)");
    assert_eq!(s("(1,_)"), "4:6");
    assert_eq!(s("((_,1),_)"), "(2,4):(1,6)");
    assert_eq!(s("((1,_),_)"), "(3,4):(2,6)");
    assert_eq!(s("(3,2)"), "():()");
    let (sliced, offset) = x.slice_and_offset(&"((_,2),3)".parse().unwrap()).unwrap();
    assert_eq!((sliced.to_string(), offset), ("2:1".to_string(), 22));
    // L(c) = offset + slice(free part).
    for i in 0..2 {
        assert_eq!(
            x.crd2idx(&t(&format!("(({i},2),3)"))).unwrap(),
            offset + sliced.call(i)
        );
    }
}

#[test]
fn coord_text() {
    let c: Coord = "((_,1),_3,_)".parse().unwrap();
    assert_eq!(c.to_string(), "((_,1),3,_)");
    assert_eq!(
        c,
        Coord::Tuple(vec![
            Coord::Tuple(vec![Coord::Free, Coord::Int(1)]),
            Coord::Int(3),
            Coord::Free
        ])
    );
}

#[test]
fn print_layout_table_of_cute_doc() {
    let x = l("(2,(2,2)):(4,(2,1))");
    let expected = "\
(2,(2,2)):(4,(2,1))
      0   1   2   3
    +---+---+---+---+
 0  | 0 | 2 | 1 | 3 |
    +---+---+---+---+
 1  | 4 | 6 | 5 | 7 |
    +---+---+---+---+
";
    assert_eq!(x.to_table().unwrap(), expected);
}

#[test]
fn table_widths_and_ranks() {
    let x = l("(2,12):(12,1)");
    let table = x.to_table().unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        lines[1],
        "       0    1    2    3    4    5    6    7    8    9   10   11"
    );
    assert_eq!(
        lines[5],
        " 1  | 12 | 13 | 14 | 15 | 16 | 17 | 18 | 19 | 20 | 21 | 22 | 23 |"
    );
    let row = l("4:3").to_table().unwrap();
    assert_eq!(row.lines().nth(3), Some(" 0  | 0 | 3 | 6 | 9 |"));
    assert!(l("(2,2,2):(1,2,4)").to_table().is_err());
}

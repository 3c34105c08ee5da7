//! Bad input is an error with a message naming the operation, the rule
//! and the offending values; the messages are pinned here.

use tile_ir::layout::*;

fn l(s: &str) -> Layout {
    s.parse().unwrap()
}

fn tiler(s: &str) -> Tiler {
    s.parse().unwrap()
}

fn message<T: std::fmt::Debug>(r: Result<T>) -> String {
    r.unwrap_err().to_string()
}

#[test]
fn parse_errors_carry_the_position() {
    let cases = [
        ("(4,(2,3)", "parse error at byte 8 of `(4,(2,3)`: expected `,` or `)`"),
        ("(4,2):(1)", "Layout::new: (4,2) and (1) are not congruent"),
        ("4:", "parse error at byte 2 of `4:`: expected an integer"),
        ("(4,x):(1,4)", "parse error at byte 3 of `(4,x):(1,4)`: expected an integer"),
        ("4", "parse error at byte 1 of `4`: expected `:` between shape and stride"),
        ("4:1 junk", "parse error at byte 4 of `4:1 junk`: expected end of input"),
        ("99999999999999999999:1", "parse error at byte 0 of `99999999999999999999:1`: expected an integer that fits in 64 bits"),
        ("(0,2):(1,1)", "Layout::new: every extent must be at least 1: shape (0,2)"),
    ];
    for (text, expected) in cases {
        assert_eq!(message(text.parse::<Layout>()), expected, "{text}");
    }
    assert_eq!(
        message("(1,_)x".parse::<Coord>()),
        "parse error at byte 5 of `(1,_)x`: expected end of input"
    );
    assert_eq!(
        message("<4:1, 3:1".parse::<Tiler>()),
        "parse error at byte 9 of `<4:1, 3:1`: expected `,` or `>`"
    );
    assert_eq!(
        message("Sw<2,0>".parse::<Swizzle>()),
        "parse error at byte 6 of `Sw<2,0>`: expected `,`"
    );
    assert_eq!(
        message("Sw<1,0,2> o (2,2):(1,2)".parse::<ComposedLayout>()),
        "parse error at byte 12 of `Sw<1,0,2> o (2,2):(1,2)`: expected an integer"
    );
}

#[test]
fn overflowing_layouts_are_refused() {
    assert_eq!(
        message("(4294967296,4294967296):(1,4294967296)".parse::<Layout>()),
        "Layout::new: arithmetic overflow in the size or span of (4294967296,4294967296):(1,4294967296)"
    );
}

#[test]
fn shape_div_needs_one_operand_to_divide_the_other() {
    let e = shape_div(&IntTuple::Int(6), &IntTuple::Int(4));
    assert_eq!(message(e), "shape_div(6, 4): neither divides the other");
    let e = shape_div(&"(3,6,2,8)".parse().unwrap(), &IntTuple::Int(4));
    assert_eq!(message(e), "shape_div(3, 4): neither divides the other");
    let e = shape_div(&"(4,9)".parse().unwrap(), &"(2,3,1)".parse().unwrap());
    assert_eq!(message(e), "shape_div: (4,9) and (2,3,1) are not congruent");
}

#[test]
fn composition_divisibility_conditions() {
    assert_eq!(
        message(composition(&l("(4,3):(1,5)"), &l("3:3"))),
        "composition: stride divisibility condition fails: (4,3):(1,5) ∘ 3:3: stride 3 is neither a divisor nor a multiple of extent 4"
    );
    assert_eq!(
        message(composition(&l("(4,3):(1,10)"), &l("3:2"))),
        "composition: shape divisibility condition fails: (4,3):(1,10) ∘ 3:2: 3 elements do not split into whole runs of 2"
    );
    assert_eq!(
        message(composition(&l("(2,5,2):(1,4,2)"), &l("(4,3):(1,4)"))),
        "composition: the right operand's modes carry across an extent boundary of the left operand: (2,5,2):(1,4,2) ∘ (4,3):(1,4): their offsets modulo 10 add up to 11"
    );
    assert_eq!(
        message(composition(&l("(6,1):(0,1)"), &l("(6,2):(1,1)"))),
        "composition: the right operand's modes carry across an extent boundary of the left operand: (6,1):(0,1) ∘ (6,2):(1,1): their offsets modulo 6 add up to 6"
    );
    assert_eq!(
        message(composition(&l("(4,3):(1,10)"), &l("2:-1"))),
        "composition: negative strides in the right operand are not supported: (4,3):(1,10) ∘ 2:-1: mode 2:-1"
    );
    assert_eq!(
        message(composition_tiler(
            &l("(4,3):(1,10)"),
            &tiler("<2:1, 2:1, 2:1>")
        )),
        "composition: the tiler has more modes than the layout: 3 modes for (4,3):(1,10)"
    );
}

#[test]
fn complement_of_overlapping_layouts() {
    assert_eq!(
        message(complement(&l("(2,2):(1,1)"), 8)),
        "complement: the layout is not injective or its modes interleave: complement((2,2):(1,1), 8): stride 1 lies inside the span 2 of the modes with smaller strides"
    );
    assert_eq!(
        message(complement(&l("(2,3):(1,3)"), 12)),
        "complement: stride divisibility condition fails: complement((2,3):(1,3), 12): stride 3 is not a multiple of the span 2 of the modes with smaller strides"
    );
    assert_eq!(
        message(complement(&l("4:-1"), 8)),
        "complement: strides must be non-negative: complement(4:-1, 8): layout 4:-1"
    );
    assert_eq!(
        message(complement(&l("4:1"), 0)),
        "complement: the cotarget must be at least 1: complement(4:1, 0): cotarget 0"
    );
    // Divides and products report the complement that failed.
    assert_eq!(
        message(logical_divide(&l("12:1"), &tiler("(2,2):(1,1)"))),
        "complement: the layout is not injective or its modes interleave: complement((2,2):(1,1), 12): stride 1 lies inside the span 2 of the modes with smaller strides"
    );
}

#[test]
fn divide_and_product_rank_errors() {
    assert_eq!(
        message(zipped_divide(&l("(4,4):(1,4)"), &tiler("<2:1, 2:1, 2:1>"))),
        "logical_divide: the tiler has more modes than the layout: 3 modes for (4,4):(1,4)"
    );
    assert_eq!(
        message(logical_product(&l("4:1"), &tiler("<2:1, 2:1>"))),
        "logical_product: the tiler has more modes than the layout: 2 modes for 4:1"
    );
    assert_eq!(
        message(tile_to_shape(&l("(2,3):(1,2)"), &"(4,4)".parse().unwrap(), None)),
        "tile_to_shape: the block shape does not divide the target shape: block mode 3:2 of size 3 into 4 in target (4,4)"
    );
    assert_eq!(
        message(tile_to_shape(&l("(2,3,4):(1,2,6)"), &"(4,6)".parse().unwrap(), None)),
        "tile_to_shape: the block has more modes than the target shape: block (2,3,4):(1,2,6), target (4,6)"
    );
    assert_eq!(
        message(make_ordered_layout(
            &"(2,3)".parse().unwrap(),
            &"(0,1,2)".parse().unwrap()
        )),
        "make_ordered_layout: (2,3) and (0,1,2) are not congruent"
    );
}

#[test]
fn inverse_errors() {
    assert_eq!(
        message(left_inverse(&l("(2,2):(2,3)"))),
        "left_inverse: left inverse divisibility condition fails: stride 3 of (2,2):(2,3) is not a multiple of the previous stride 2"
    );
    assert_eq!(
        message(left_inverse(&l("4:-1"))),
        "left_inverse: strides must be non-negative: 4:-1"
    );
}

#[test]
fn upcast_downcast_recast_errors() {
    assert_eq!(
        message(upcast(&l("(4,8):(8,1)"), 3)),
        "upcast: shape_div condition fails: mode 4:8 of (4,8):(8,1) by 3: shape_div(8, 3): neither divides the other"
    );
    assert_eq!(
        message(upcast(&l("(3,8):(1,3)"), 2)),
        "upcast: shape_div condition fails: mode 3:1 of (3,8):(1,3) by 2: shape_div(3, 2): neither divides the other"
    );
    assert_eq!(
        message(upcast(&l("4:1"), 0)),
        "upcast: the factor must be at least 1: factor 0 for 4:1"
    );
    assert_eq!(
        message(downcast(&l("(4,4):(2,8)"), 2)),
        "downcast: a mode with stride 1 is needed so the new elements are adjacent: (4,4):(2,8)"
    );
    assert_eq!(
        message(recast(&l("4:1"), 0, 8)),
        "recast: element widths must be positive: 0 to 8 bits for 4:1"
    );
}

#[test]
fn layout_manipulation_errors() {
    let x = l("(2,3,5):(1,2,6)");
    assert_eq!(
        message(x.select(&[0, 3])),
        "select: mode index out of range: mode 3 of (2,3,5):(1,2,6)"
    );
    assert_eq!(
        message(x.take(2, 2)),
        "take: mode range must be non-empty and within the rank: 2..2 of (2,3,5):(1,2,6)"
    );
    assert_eq!(
        message(x.replace(5, &l("1:0"))),
        "replace: mode index out of range: mode 5 of (2,3,5):(1,2,6)"
    );
    assert_eq!(
        message(x.slice(&"(_,(1,2),_)".parse().unwrap())),
        "slice: a tuple coordinate needs a layout of the same rank: coordinate (1,2) for 3:2"
    );
    assert_eq!(
        message(x.crd2idx(&"(1,2)".parse().unwrap())),
        "crd2idx: a tuple coordinate needs a shape of the same rank: coordinate (1,2) in shape (2,3,5)"
    );
    assert_eq!(
        message(coalesce_by(&x, &"(1,1,1,1)".parse().unwrap())),
        "coalesce: the profile has more modes than the layout: profile (1,1,1,1) for (2,3,5):(1,2,6)"
    );
    assert_eq!(
        message(x.to_table()),
        "Layout::to_table: only layouts of rank 1 or 2 can be drawn: (2,3,5):(1,2,6)"
    );
}

#[test]
fn swizzle_errors() {
    assert_eq!(
        message(Swizzle::new(3, 0, 2)),
        "Swizzle::new: |shift| must be at least bits: Sw<3,0,2>"
    );
    assert_eq!(
        message(Swizzle::new(8, 40, 20)),
        "Swizzle::new: the masks must fit in 62 bits: Sw<8,40,20>"
    );
    assert_eq!(
        message("Sw<-1,0,2>".parse::<Swizzle>()),
        "parse error at byte 3 of `Sw<-1,0,2>`: expected a swizzle bit count in 0..2^32"
    );
}

#[test]
fn degenerate_input_does_not_panic() {
    assert_eq!(
        message(shape_div(&IntTuple::Int(6), &IntTuple::Int(0))),
        "shape_div(6, 0): neither divides the other"
    );
    assert!(shape_div(&IntTuple::Int(i64::MIN), &IntTuple::Int(-1)).is_err());
    // Unvalidated shapes with a zero extent.
    let shape: IntTuple = "(0,3)".parse().unwrap();
    assert_eq!(idx2crd(5, &shape).to_string(), "(5,0)");
    assert_eq!(
        crd2idx(&IntTuple::Int(5), &shape, &"(1,4)".parse().unwrap()).unwrap(),
        5
    );
    assert_eq!(
        complement(&l("4:1"), i64::MAX).unwrap().to_string(),
        format!("{}:4", i64::MAX / 4 + 1)
    );
    assert_eq!(
        l("(2,2):(4611686018427387903,1)").cosize(),
        4611686018427387905
    );
    assert!("(2,2):(9223372036854775807,1)".parse::<Layout>().is_err());
}

//! Every independent error of a kernel in one run of the front end: the
//! translator goes on after a failed statement, reports each error once and
//! none for the uses of what a failed statement would have defined
//! (`translate/recover.rs`).

/// The messages of the errors of lowering `body` (attribute `attr`, const
/// parameter `B` when `attr` gives configs), in the order reported.
fn errors(attr: &str, body: &str) -> Vec<String> {
    let generics = if attr.is_empty() {
        ""
    } else {
        "<const B: usize>"
    };
    let src =
        format!("fn k{generics}(x: &Tensor<f32>, out: &mut Tensor<f32>, n: i32) {{ {body} }}");
    let item: syn::ItemFn = syn::parse_str(&src).expect("kernel parses");
    match tile_frontend::translate_kernel(attr.parse().expect("attribute"), &item) {
        Ok(_) => Vec::new(),
        Err(e) => e.into_iter().map(|one| one.to_string()).collect(),
    }
}

const DTYPES: &str =
    "mismatched dtypes f32 and f16 in `*`: convert one side, e.g. `.cast::<f32>()`";
const AXIS: &str = "the grid axis must be 0, 1 or 2, found 3";

#[test]
fn independent_errors_are_all_reported_in_order() {
    let body = "
        let t = partition_view(x, [16]).load(0);
        let a = t * 2.0f16;
        for i in 0..n { let b = program_id(3); }
        let c = zeros::<f32>([0]);
        partition_view(out, [16]).store(t, 0);
    ";
    assert_eq!(
        errors("", body),
        [DTYPES, AXIS, "tile extents must be positive, found 0"]
    );
}

#[test]
fn uses_of_a_failed_statement_are_not_errors() {
    // Through a tuple pattern, an expression, a loop's carried variable, an
    // `if`'s merged variable, a block's value and the store.
    let body = "
        let t = partition_view(x, [16]).load(0);
        let (bad, scale) = (t * 2.0f16, 2.0);
        let mut acc = bad + t;
        for i in 0..n { acc = acc + bad * scale; }
        if n > 0 { acc = acc * scale; }
        let v = { let w = acc; w };
        partition_view(out, [16]).store(v, 0);
    ";
    assert_eq!(errors("", body), [DTYPES]);
}

#[test]
fn an_assignment_that_fails_poisons_its_variable() {
    let body = "
        let t = partition_view(x, [16]).load(0);
        let mut acc = t;
        acc = acc * 2.0f16;
        partition_view(out, [16]).store(acc.reshape([4, 4]), 0);
    ";
    assert_eq!(errors("", body), [DTYPES]);
}

#[test]
fn syntax_lowered_twice_reports_its_error_once() {
    // A helper called twice, and an `if` whose value is learned by lowering
    // each branch once before lowering it for real.
    let body = "
        #[tile_fn]
        fn scaled(t: Tile) -> Tile { t * 2.0f16 }
        let t = partition_view(x, [16]).load(0);
        let a = scaled(t);
        let b = scaled(t);
        let c = if n > 0 { let d = program_id(3); t } else { t };
        partition_view(out, [16]).store(c, 0);
    ";
    assert_eq!(errors("", body), [DTYPES, AXIS]);
}

#[test]
fn errors_of_both_branches_are_reported() {
    let body = "
        let t = partition_view(x, [16]).load(0);
        let c = if n > 0 { t * 2.0f16 } else { t.softplus() };
        partition_view(out, [16]).store(c, 0);
    ";
    let found = errors("", body);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0], DTYPES);
    assert!(found[1].starts_with("no method `softplus`"), "{found:?}");
}

#[test]
fn errors_every_specialization_hits_are_reported_once_and_unlabeled() {
    let body = "
        let t = partition_view(x, [B]).load(0);
        let a = t * 2.0f16;
        let z = zeros::<f32>([B - 64]);
        partition_view(out, [B]).store(t, 0);
    ";
    assert_eq!(
        errors("configs(B = 64), configs(B = 128)", body),
        [
            DTYPES,
            "tile extents must be positive, found 0 (in specialization B=64)"
        ]
    );
}

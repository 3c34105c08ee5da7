//! The shrinker reduces planted failures to small cases, and the regression
//! printer writes a case that reads back exactly.

use tile_ir::interp::Arg;
use tile_ir::OpKind;
use tile_testgen::{generate, hex_bytes, shrink, to_regression_test, Case, GenConfig};

fn ops(case: &Case) -> Vec<OpKind> {
    let mut kinds = Vec::new();
    case.func
        .walk(&mut |op| kinds.push(case.func.op(op).kind.clone()));
    kinds
}

fn has_dot(case: &Case) -> bool {
    ops(case).iter().any(|k| matches!(k, OpKind::Dot { .. }))
}

/// The first seed whose case satisfies `wanted`.
fn find(wanted: impl Fn(&Case) -> bool) -> Case {
    let config = GenConfig::default();
    (0..10_000)
        .map(|seed| generate(seed, &config))
        .find(|c| wanted(c))
        .expect("some seed has the feature")
}

#[test]
fn a_planted_dot_failure_shrinks_to_a_lone_dot() {
    let case = find(|c| has_dot(c) && ops(c).len() > 25 && c.grid != [1, 1, 1]);
    let small = shrink(&case, has_dot);
    assert!(has_dot(&small));
    tile_ir::verify::verify(&small.func).expect("the shrunk kernel verifies");
    let kinds = ops(&small);
    // A dot of three zero tiles, a view and a store with its indices.
    assert!(
        kinds.len() <= 8,
        "{} ops left:\n{}",
        kinds.len(),
        small.func
    );
    assert_eq!(small.grid, [1, 1, 1]);
    assert_eq!(small.args.len(), 1, "only the stored tensor is left");
    assert_eq!(small.args.len(), small.func.params.len());
}

#[test]
fn shrinking_keeps_the_failure_and_never_grows_the_case() {
    // Fails when some program stores a masked result: the store must stay.
    let masked = |c: &Case| ops(c).contains(&OpKind::StoreMasked);
    let case = find(|c| masked(c) && ops(c).len() > 20);
    let small = shrink(&case, masked);
    assert!(masked(&small));
    assert!(ops(&small).len() < ops(&case).len());
    let elements = |c: &Case| -> usize {
        c.args
            .iter()
            .map(|a| match a {
                Arg::Tensor(t) => t.data().len(),
                Arg::Tensors(ts) => ts.iter().map(|t| t.data().len()).sum(),
                Arg::Scalar(_) => 1,
            })
            .sum()
    };
    assert!(elements(&small) <= elements(&case));
}

#[test]
fn a_case_that_does_not_fail_is_returned_unchanged() {
    let case = generate(3, &GenConfig::default());
    assert_eq!(shrink(&case, |_| false), case);
}

#[test]
fn the_regression_source_holds_the_kernel_grid_and_argument_bytes() {
    let case = generate(11, &GenConfig::default());
    let src = to_regression_test(&case);
    let kernel = src
        .split("r#\"")
        .nth(1)
        .and_then(|rest| rest.split("\"#").next())
        .expect("the kernel is a raw string");
    let parsed = tile_ir::text::parse_function(kernel).expect("the kernel parses");
    assert_eq!(parsed.to_string(), case.func.to_string());
    assert!(src.contains(&format!("grid: {:?}", case.grid)));
    for arg in &case.args {
        if let Arg::Tensor(t) = arg {
            let hex: String = t.data().iter().map(|b| format!("{b:02x}")).collect();
            assert!(src.contains(&hex));
            assert_eq!(hex_bytes(&hex), t.data());
        }
    }
    assert!(src.contains(&format!("fn {}()", case.func.name)));
}

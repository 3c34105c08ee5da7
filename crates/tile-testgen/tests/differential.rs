//! The differential suite: generated programs through the verifier, the text
//! round trip, the interpreter and the default pass pipeline.

use std::collections::BTreeSet;
use tile_ir::{BinaryOp, CmpPred, DType, OpKind, Type, UnaryOp};
use tile_testgen::{check_case, generate, shrink, to_regression_test, Case, GenConfig};

/// The number of generated programs checked.
const CASES: u64 = 1008;

/// Checks the seeds of `range`, and on a failure panics with the first
/// failing case shrunk and printed as a regression test.
fn check_seeds(range: std::ops::Range<u64>) {
    let config = GenConfig::default();
    let mut failures = Vec::new();
    for seed in range {
        if let Err(failure) = check_case(&generate(seed, &config)) {
            failures.push((seed, failure));
        }
    }
    if let Some((seed, failure)) = failures.first() {
        let case = generate(*seed, &config);
        let kind = std::mem::discriminant(failure);
        let small = shrink(&case, |c| {
            check_case(c).is_err_and(|f| std::mem::discriminant(&f) == kind)
        });
        panic!(
            "{} cases failed; seeds {:?}\nfirst (seed {seed}): {failure}\nshrunk:\n{}",
            failures.len(),
            failures.iter().map(|f| f.0).collect::<Vec<_>>(),
            to_regression_test(&small)
        );
    }
}

// The suite in four parts, so that the test threads share the work.
#[test]
fn seeds_0_to_251_survive_the_pipeline_bit_for_bit() {
    check_seeds(0..CASES / 4);
}

#[test]
fn seeds_252_to_503_survive_the_pipeline_bit_for_bit() {
    check_seeds(CASES / 4..CASES / 2);
}

#[test]
fn seeds_504_to_755_survive_the_pipeline_bit_for_bit() {
    check_seeds(CASES / 2..3 * CASES / 4);
}

#[test]
fn seeds_756_to_1007_survive_the_pipeline_bit_for_bit() {
    check_seeds(3 * CASES / 4..CASES);
}

#[test]
fn the_suite_reaches_every_op_and_dtype() {
    let config = GenConfig::default();
    let mut seen = BTreeSet::new();
    for seed in 0..CASES {
        features(&generate(seed, &config), &mut seen);
    }
    let missing: Vec<String> = expected_features().difference(&seen).cloned().collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
}

/// What a case exercises: op names (with the elementwise op, the reduction's
/// `keepdim`, the `dot` operand dtypes), and every dtype loaded and stored.
fn features(case: &Case, seen: &mut BTreeSet<String>) {
    let func = &case.func;
    func.walk(&mut |id| {
        let op = func.op(id);
        let dtype = |i: usize| func.ty(op.operands[i]).dtype();
        let name = match &op.kind {
            OpKind::Unary(u) => u.name().to_string(),
            OpKind::Binary(b) => b.name().to_string(),
            OpKind::Cmp(p) => format!("cmp {p}"),
            OpKind::Reduce { keepdim, .. } => format!("reduce keepdim={keepdim}"),
            OpKind::ArgReduce { keepdim, .. } => format!("arg keepdim={keepdim}"),
            OpKind::Dot { .. } => format!("dot {}x{}", dtype(0), dtype(1)),
            OpKind::Load | OpKind::LoadMasked { .. } => {
                format!("load {}", func.ty(op.results[0]).dtype())
            }
            OpKind::Store | OpKind::StoreMasked => format!("store {}", dtype(0)),
            OpKind::Broadcast { .. } if !matches!(func.ty(op.operands[0]), Type::Tile(_)) => {
                "broadcast of a scalar".to_string()
            }
            kind => kind.name().to_string(),
        };
        seen.insert(name);
        seen.insert(op.kind.name().to_string());
    });
}

/// Every feature the default configuration must reach in the suite.
fn expected_features() -> BTreeSet<String> {
    let mut all: BTreeSet<String> = [
        "program_id",
        "num_programs",
        "constant",
        "full",
        "iota",
        "select",
        "fma",
        "cast",
        "broadcast",
        "broadcast of a scalar",
        "reshape",
        "permute",
        "expand",
        "flip",
        "slice",
        "pad",
        "cat",
        "unpack_fp4",
        "pack_fp4",
        "reduce keepdim=true",
        "reduce keepdim=false",
        "arg keepdim=true",
        "arg keepdim=false",
        "scan",
        "reduce_with",
        "scan_with",
        "dim",
        "partition_view",
        "load",
        "load_masked",
        "store",
        "store_masked",
        "for",
        "while",
        "if",
        "yield",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    all.extend(UnaryOp::ALL.iter().map(|u| u.name().to_string()));
    all.extend(BinaryOp::ALL.iter().map(|b| b.name().to_string()));
    all.extend(CmpPred::ALL.iter().map(|p| format!("cmp {p}")));
    for d in DType::ALL {
        all.insert(format!("load {d}"));
        all.insert(format!("store {d}"));
    }
    use DType::*;
    let dots = [
        (F16, F16),
        (BF16, BF16),
        (F32, F32),
        (F64, F64),
        (I8, I8),
        (F8E4M3, F8E4M3),
        (F8E4M3, F8E5M2),
        (F8E5M2, F8E4M3),
        (F8E5M2, F8E5M2),
    ];
    all.extend(dots.iter().map(|(a, b)| format!("dot {a}x{b}")));
    all
}

//! The pass manager: passes by name, dumps after each, errors.

use tile_ir::passes::{PassError, PassManager};
use tile_ir::samples;
use tile_ir::text::parse_function;

#[test]
fn unknown_pass_names_the_known_ones() {
    let err = PassManager::new().add("gvn").err().unwrap();
    assert_eq!(
        err.to_string(),
        "unknown pass `gvn`; the passes are canonicalize, licm, cse, dce, expand-scaled-dots, expand-fp4-pairs"
    );
}

#[test]
fn calls_back_after_each_pass_with_the_kernel_as_it_is_then() {
    let mut func = samples::layernorm(2, 8).unwrap();
    let mut seen = Vec::new();
    PassManager::default_pipeline()
        .run(&mut func, |pass, f| seen.push((pass, f.to_string())))
        .unwrap();
    let names: Vec<_> = seen.iter().map(|(p, _)| *p).collect();
    assert_eq!(names, ["canonicalize", "licm", "cse", "dce"]);
    assert_eq!(seen[3].1, func.to_string());
    // Both broadcasts to [2, 1] (of the column count and of eps) are live.
    assert_eq!(seen[3].1.matches("to [2, 1]").count(), 2);
}

#[test]
fn refuses_an_invalid_input_kernel() {
    let mut func = parse_function("kernel @k() {\n  %0 = program_id 4 : i32\n}").unwrap();
    let err = PassManager::default_pipeline()
        .run(&mut func, |_, _| {})
        .unwrap_err();
    assert!(matches!(err, PassError::InvalidInput(_)));
    assert_eq!(
        err.to_string(),
        "the input kernel is invalid: verifier: in kernel `k`, op `%0 = program_id`: the grid axis must be 0, 1 or 2, found 4"
    );
}

//! The differential suite: generated programs through the verifier, the text
//! round trip, the interpreter and the default pass pipeline.

use tile_testgen::{check_case, generate, shrink, to_regression_test, GenConfig};

/// The number of generated programs checked.
const CASES: u64 = 1000;

#[test]
fn generated_programs_survive_the_pipeline_bit_for_bit() {
    let config = GenConfig::default();
    let mut failures = Vec::new();
    for seed in 0..CASES {
        let case = generate(seed, &config);
        if let Err(failure) = check_case(&case) {
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
            "{} of {CASES} cases failed; seeds {:?}\nfirst (seed {seed}): {failure}\nshrunk:\n{}",
            failures.len(),
            failures.iter().map(|f| f.0).collect::<Vec<_>>(),
            to_regression_test(&small)
        );
    }
}

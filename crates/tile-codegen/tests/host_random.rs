//! The random programs of the differential suite (tile-testgen) compiled for
//! the host and run in parallel, against the interpreter, byte for byte.
//! Programs using an op the host back end does not support yet are counted
//! and skipped; a floor on the programs run keeps the test from passing
//! vacuously.

mod common;

use common::{bytes, run_host, HostRun};

use tile_codegen::host::HostError;
use tile_ir::interp::{self};
use tile_runtime::cpu::RunError;
use tile_testgen::{generate, GenConfig};

/// The number of generated programs tried.
const CASES: u64 = 400;

/// How the seeds of `range` went: (ran and agreed, skipped as unsupported).
fn check_seeds(range: std::ops::Range<u64>) -> (u64, u64) {
    let (mut ran, mut skipped) = (0, 0);
    let mut failures = Vec::new();
    for seed in range {
        let case = generate(seed, &GenConfig::default());
        let mut expected = case.args.clone();
        let oracle = interp::run(&case.func, case.grid, &mut expected);
        let mut actual = case.args.clone();
        match (run_host(&case.func, case.grid, &mut actual), oracle) {
            (Err(HostRun::Compile(HostError::Unsupported { .. })), _) => skipped += 1,
            (Ok(()), Ok(())) if bytes(&actual) == bytes(&expected) => ran += 1,
            (Ok(()), Ok(())) => failures.push(format!("seed {seed}: results differ")),
            (Err(HostRun::Run(RunError::Op { .. })), Err(_)) => ran += 1,
            (host, oracle) => failures.push(format!(
                "seed {seed}: host {host:?}, interpreter {oracle:?}"
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} seeds disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
    (ran, skipped)
}

/// Checks the seeds of `range` and that at least 95% of them ran.
fn check_half(range: std::ops::Range<u64>) {
    let count = range.end - range.start;
    let (ran, skipped) = check_seeds(range);
    println!("host path: {ran} of {count} programs ran, {skipped} skipped as unsupported");
    assert!(
        ran >= count * 95 / 100,
        "only {ran} of {count} programs ran on the host ({skipped} unsupported)"
    );
}

#[test]
fn first_half_of_the_seeds_agree_with_the_interpreter() {
    check_half(0..CASES / 2);
}

#[test]
fn second_half_of_the_seeds_agree_with_the_interpreter() {
    check_half(CASES / 2..CASES);
}

//! Looks for failing seeds of the default configuration and saves each one,
//! shrunk, as a regression test source:
//!
//! ```text
//! cargo run --release -p tile-testgen --example hunt -- <first seed> <end seed> <dir>
//! ```
//!
//! A failure is shrunk while the case fails with the same kind of
//! [`tile_testgen::Failure`]; the source is written to `<dir>/gen_<seed>.rs`.

use tile_testgen::{check_case, generate, shrink, to_regression_test, GenConfig};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [first, end, dir] = args.as_slice() else {
        eprintln!("usage: hunt <first seed> <end seed> <dir>");
        std::process::exit(2);
    };
    let (Ok(first), Ok(end)) = (first.parse::<u64>(), end.parse::<u64>()) else {
        eprintln!("the seeds must be integers");
        std::process::exit(2);
    };
    let config = GenConfig::default();
    for seed in first..end {
        let case = generate(seed, &config);
        let Err(failure) = check_case(&case) else {
            continue;
        };
        let kind = std::mem::discriminant(&failure);
        let small = shrink(&case, |c| {
            check_case(c).is_err_and(|f| std::mem::discriminant(&f) == kind)
        });
        let path = format!("{dir}/gen_{seed}.rs");
        match std::fs::write(&path, to_regression_test(&small)) {
            Ok(()) => println!("seed {seed}: {failure}\n  saved {path}"),
            Err(e) => eprintln!("seed {seed}: cannot write {path}: {e}"),
        }
    }
}

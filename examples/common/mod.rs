//! What every example shares: deterministic inputs, the error measure, timing
//! and the result table.

use std::time::{Duration, Instant};
use tile::{Device, Error, KernelCode};

/// Deterministic pseudo-random inputs (xorshift), so every run checks the
/// same values.
pub struct Inputs(u64);

impl Default for Inputs {
    /// A generator with a fixed seed.
    fn default() -> Self {
        Inputs(0x9e37_79b9_7f4a_7c15)
    }
}

impl Inputs {
    /// `n` values in [-2, 2).
    pub fn take(&mut self, n: usize) -> Vec<f32> {
        (0..n)
            .map(|_| {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                (self.0 >> 40) as f32 / (1u64 << 24) as f32 * 4.0 - 2.0
            })
            .collect()
    }
}

/// One line of the table: a kernel run and its check against plain Rust.
pub struct Row {
    /// The kernel and its specialization.
    pub kernel: String,
    /// What ran it: a GPU image, host code of an ISA level, the interpreter.
    pub code: KernelCode,
    /// The problem shape.
    pub shape: String,
    /// The largest error against the reference, relative to `1 + |want|`.
    pub max_error: f64,
    /// The largest error accepted (0: bit-exact).
    pub tolerance: f64,
    /// The time of a launch (not the first, which loads the kernel).
    pub time: Duration,
}

/// Runs the launch `f` once to load the kernel, then again, measured.
pub fn timed(mut f: impl FnMut() -> Result<(), Error>) -> Result<Duration, Error> {
    f()?;
    let start = Instant::now();
    f()?;
    Ok(start.elapsed())
}

/// The largest error of `got` against `want`, relative to `1 + |want|`.
pub fn max_error(got: &[f32], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len(), "result and reference lengths differ");
    got.iter()
        .zip(want)
        .map(|(&g, &w)| (f64::from(g) - w).abs() / (1.0 + w.abs()))
        .fold(0.0, f64::max)
}

/// Prints the table; returns whether every check passed.
pub fn print_table(dev: &Device, rows: &[Row]) -> bool {
    println!(
        "{:<24} {:<16} {:<24} {:<30} {:>10}",
        "kernel", "device", "shape", "check", "time"
    );
    let mut all_ok = true;
    for row in rows {
        let ok = row.max_error <= row.tolerance;
        all_ok &= ok;
        let verdict = if ok { "ok" } else { "FAILED" };
        let check = if row.tolerance == 0.0 {
            format!("{verdict} (exact)")
        } else {
            format!(
                "{verdict} (err {:.1e} <= {:.0e})",
                row.max_error, row.tolerance
            )
        };
        println!(
            "{:<24} {:<16} {:<24} {:<30} {:>8.1}ms",
            row.kernel,
            format!("{dev} ({})", row.code),
            row.shape,
            check,
            row.time.as_secs_f64() * 1e3
        );
    }
    all_ok
}

/// How an example runs: its kernels on `dev`, one row each.
pub type Example = fn(&Device, &mut Inputs) -> Result<Vec<Row>, Error>;

/// The `main` of the examples: runs them on the best device and prints the
/// table; exits with status 1 when a check fails.
pub fn run_examples(examples: &[Example]) -> Result<(), Error> {
    let dev = Device::best()?;
    let mut rng = Inputs::default();
    let mut rows = Vec::new();
    for run in examples {
        rows.extend(run(&dev, &mut rng)?);
    }
    let ok = print_table(&dev, &rows);
    println!();
    for gpu in [Device::cuda(0), Device::hip(0)] {
        if let Err(why) = gpu {
            println!("not used: {why}");
        }
    }
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}

//! The differential suite: generated programs (tile-testgen) through the
//! lowering and the lockstep emulator, against the interpreter, bit for bit.
//! Programs are lowered for sm_80's tensor cores (`mma.sync`, `cp.async`)
//! with software pipelines of 2 or 3 stages ([`options`]), so that the
//! generator's pipelined products run pipelined.
//!
//! A seed that disagrees is shrunk on the spot and saved as a case file in
//! `tests/regressions/` (the failure message names it); every saved case is
//! replayed by `saved_regressions_agree`, so a fixed bug stays fixed.

use tile_testgen::inputs::bytes;

use std::path::{Path, PathBuf};
use tile_ir::interp::{self};
use tile_testgen::corpus::{load_cases, save_case};
use tile_testgen::{generate, shrink, Case, GenConfig};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions, TensorCores};

/// The number of generated programs checked.
const CASES: u64 = 1000;

/// The fewest seeds of each half with an access proven in bounds (guarded
/// or looped unmasked loads of the generator: 89 and 89 today), so that the proofs
/// are exercised.
const PROVEN_FLOOR: usize = 60;

/// How a case is lowered for `warps`: sm_80's tensor cores, and 2 stages
/// with 2 warps, 3 otherwise (a saved case records only its warps).
fn options(warps: u32) -> LowerOptions {
    let stages = if warps == 2 { 2 } else { 3 };
    LowerOptions::warps(warps)
        .with_tensor_cores(TensorCores::MmaSync)
        .with_stages(stages)
}

/// Why `case` lowered for `warps` disagrees with the interpreter, if it does
/// (`None` too when the interpreter itself rejects the case).
fn disagreement(case: &Case, warps: u32) -> Option<String> {
    let mut expected = case.args.clone();
    interp::run(&case.func, case.grid, &mut expected).ok()?;
    let program = match lower(&case.func, &options(warps)) {
        Ok(p) => p,
        Err(e) => return Some(format!("lowering failed: {e}")),
    };
    let mut actual = case.args.clone();
    if let Err(e) = emulate::run(&program, case.grid, &mut actual) {
        return Some(format!("the emulator failed: {e}"));
    }
    (bytes(&actual) != bytes(&expected)).then(|| format!("results differ ({warps} warps)"))
}

/// The kind of a disagreement, kept while shrinking.
fn kind(why: &str) -> &str {
    why.split(':').next().unwrap_or(why)
}

/// Shrinks `case` while `fails` still reports the same kind of failure as
/// `why`, and saves it as `<dir>/<name>.case`; returns the path and the
/// shrunk case.
fn shrink_and_save(
    case: &Case,
    warps: u32,
    why: &str,
    dir: &Path,
    name: &str,
    fails: impl Fn(&Case) -> Option<String>,
) -> (PathBuf, Case) {
    let small = shrink(case, |c| fails(c).is_some_and(|w| kind(&w) == kind(why)));
    let now = fails(&small).unwrap_or_else(|| why.to_string());
    let path =
        save_case(dir, name, &small, warps, &now).expect("the regression corpus is writable");
    (path, small)
}

fn regressions() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions")
}

/// The fewest seeds of each half whose program has a software-pipelined
/// loop (the generator's pipelined products: 69 and 71 today).
const PIPELINED_FLOOR: usize = 40;

/// What the lowered program of `case` exercises: an access proven in
/// bounds (its check dropped, so the emulator's own bounds check on every
/// global access is what validates the proof), and a software pipeline.
fn coverage(case: &Case, warps: u32) -> (bool, bool) {
    lower(&case.func, &options(warps)).map_or((false, false), |program| {
        let text = program.to_string();
        (
            text.contains("// bounds: proven"),
            text.contains("cp.async.wait"),
        )
    })
}

/// Checks the seeds of `range`; returns how many of them have an access
/// proven in bounds, and how many a software pipeline.
fn check_seeds(range: std::ops::Range<u64>) -> (usize, usize) {
    let mut failures = Vec::new();
    let (mut proven, mut pipelined) = (0, 0);
    for seed in range {
        let case = generate(seed, &GenConfig::default());
        let warps = [1, 2, 4][(seed % 3) as usize];
        let (proves, pipelines) = coverage(&case, warps);
        proven += usize::from(proves);
        pipelined += usize::from(pipelines);
        if let Some(why) = disagreement(&case, warps) {
            let (path, _) = shrink_and_save(
                &case,
                warps,
                &why,
                &regressions(),
                &format!("gen_{seed}"),
                |c| disagreement(c, warps),
            );
            failures.push(format!(
                "seed {seed}: {why}\n  shrunk and saved as {}",
                path.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} seeds disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
    (proven, pipelined)
}

#[test]
fn first_half_of_the_seeds_agree_with_the_interpreter() {
    let (proven, pipelined) = check_seeds(0..CASES / 2);
    eprintln!("{proven} seeds prove an access, {pipelined} pipeline a loop");
    assert!(
        proven >= PROVEN_FLOOR,
        "only {proven} seeds prove an access"
    );
    assert!(
        pipelined >= PIPELINED_FLOOR,
        "only {pipelined} seeds pipeline a loop"
    );
}

#[test]
fn second_half_of_the_seeds_agree_with_the_interpreter() {
    let (proven, pipelined) = check_seeds(CASES / 2..CASES);
    eprintln!("{proven} seeds prove an access, {pipelined} pipeline a loop");
    assert!(
        proven >= PROVEN_FLOOR,
        "only {proven} seeds prove an access"
    );
    assert!(
        pipelined >= PIPELINED_FLOOR,
        "only {pipelined} seeds pipeline a loop"
    );
}

#[test]
fn saved_regressions_agree() {
    let cases = load_cases(&regressions()).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !cases.is_empty(),
        "the corpus in tests/regressions is empty"
    );
    for saved in cases {
        if let Some(why) = disagreement(&saved.case, saved.warps) {
            panic!("regression `{}` fails again: {why}", saved.name);
        }
    }
}

#[test]
fn a_planted_disagreement_is_shrunk_and_saved() {
    // Plant a bug: "disagree" whenever the kernel has a store. The shrunk
    // case keeps a store and little else, and reads back identically.
    let case = generate(7, &GenConfig::default());
    let has_store = |c: &Case| {
        c.func
            .to_string()
            .contains("store")
            .then(|| "planted: a store".to_string())
    };
    let why = has_store(&case).expect("seed 7 stores");
    let dir = std::env::temp_dir().join(format!("tile-corpus-{}", std::process::id()));
    let (path, small) = shrink_and_save(&case, 2, &why, &dir, "planted", has_store);
    let text = std::fs::read_to_string(&path).expect("the case file");
    assert!(text.starts_with("# planted: a store\nwarps 2\n"), "{text}");
    assert!(small.func.to_string().len() < case.func.to_string().len());
    let loaded = load_cases(&dir).expect("the corpus loads");
    assert_eq!(loaded.len(), 1);
    let back = &loaded[0];
    assert_eq!(
        (back.name.as_str(), back.warps, back.case.grid),
        ("planted", 2, small.grid)
    );
    assert_eq!(back.case.func.to_string(), small.func.to_string());
    assert_eq!(bytes(&back.case.args), bytes(&small.args));
    let _ = std::fs::remove_dir_all(&dir);
}

//! `cargo check` of a crate with kernels, end to end: the macro reads
//! rustc's command line, sees a build that produces no code and compiles no
//! device code (its kernel cache stays empty, where a build stores an entry
//! per kernel, specialization and target), while the launchers type-check as
//! in a build, a kernel's error is reported at its line and column, and so is
//! a launch grid of four axes (a type error, not a const evaluation that only
//! a build would make).
//!
//! The fixture crate is written under the test target's scratch directory
//! and checked with a target directory of its own there, kept between runs:
//! the first run compiles the macro's dependencies for it (about a minute
//! and a half), later ones the crates that changed.

use std::path::Path;
use std::process::Command;

const MANIFEST: &str = r#"[package]
name = "check-fixture"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
tile = { path = "WORKSPACE" }

[workspace]

[profile.dev.package."*"]
opt-level = 1
"#;

/// Two kernels for the default targets, a launch of the first (whose
/// arguments type-check only against the generated launcher), a dtype error
/// in the second, at line 17, column 13, and a launch of the first over a
/// grid of four axes, at line 22, column 36.
const LIB: &str = r#"use tile::{tile_kernel, Device, Tensor};

#[tile_kernel(configs(BLOCK = 1024), configs(BLOCK = 256))]
fn vector_add<const BLOCK: usize>(x: &Tensor<f32>, y: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    let (px, py) = (partition_view(x, [BLOCK]), partition_view(y, [BLOCK]));
    partition_view(out, [BLOCK]).store_masked(px.load_masked(pid) + py.load_masked(pid), pid);
}

pub fn add(dev: &Device, x: &Tensor<f32>, y: &Tensor<f32>, out: &mut Tensor<f32>) -> Result<(), tile::Error> {
    vector_add::<256>::launch(dev, [x.shape()[0].div_ceil(256) as u32], (x, y, out))
}

#[tile_kernel]
fn scale(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let t = partition_view(x, [128]).load(program_id(0));
    let u = t * 2.0f16;
    partition_view(out, [128]).store(u, program_id(0));
}

pub fn add4(dev: &Device, x: &Tensor<f32>, y: &Tensor<f32>, out: &mut Tensor<f32>) -> Result<(), tile::Error> {
    vector_add::<256>::launch(dev, [1, 1, 1, 1], (x, y, out))
}
"#;

#[test]
fn cargo_check_compiles_no_device_code_and_reports_errors_at_their_span() {
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cargo-check");
    let (fixture, cache) = (scratch.join("fixture"), scratch.join("cache"));
    let _ = std::fs::remove_dir_all(&cache);
    std::fs::create_dir_all(fixture.join("src")).unwrap();
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = workspace.canonicalize().unwrap();
    let manifest = MANIFEST.replace("WORKSPACE", &workspace.display().to_string());
    std::fs::write(fixture.join("Cargo.toml"), manifest).unwrap();
    // The workspace's versions of every dependency, so nothing is fetched.
    std::fs::copy(workspace.join("Cargo.lock"), fixture.join("Cargo.lock")).unwrap();
    // Written anew each run: the macro runs again.
    std::fs::write(fixture.join("src/lib.rs"), LIB).unwrap();

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(["check", "--offline", "--quiet", "--message-format=short"])
        .current_dir(&fixture)
        .env("CARGO_TARGET_DIR", scratch.join("target"))
        .env("CARGO_TERM_COLOR", "never")
        .env("TILE_CACHE_DIR", &cache)
        .env_remove("TILE_TARGETS")
        .env_remove("TILE_DEV_TARGETS")
        .env_remove("TILE_DUMP")
        .env_remove("TILE_CACHE")
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    // The two errors, at the multiplication and at the grid, and no other
    // (the good launch type-checks, the failed kernel's items too).
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(
        errors[0],
        "src/lib.rs:17:13: error: mismatched dtypes f32 and f16 in `*`: convert one side, e.g. `.cast::<f32>()`",
        "{stderr}"
    );
    assert_eq!(
        errors[1],
        "src/lib.rs:22:36: error[E0277]: a grid has one to three axes, but this one is `[u32; 4]`: expected `[x]`, `[x, y]` or `[x, y, z]`",
        "{stderr}"
    );
    assert!(
        errors[2].contains("could not compile `check-fixture`")
            && errors[2].contains("2 previous errors"),
        "{stderr}"
    );
    // No device code was compiled: the kernel cache holds no entry.
    let entries = std::fs::read_dir(cache.join("v1/entries")).map_or(0, |shards| {
        shards
            .map(|shard| std::fs::read_dir(shard.unwrap().path()).unwrap().count())
            .sum()
    });
    assert_eq!(entries, 0, "{stderr}");
}

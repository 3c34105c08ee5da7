//! The GPU bundle's check of the generated programs
//! (`examples/generated_images.rs` builds, `examples/generated_check.rs`
//! checks), end to end through the CUDA driver stand-in: a few seeds
//! compiled for sm_80 and sm_90a, launched through the runtime on a Hopper
//! stand-in (which runs both) and judged against the interpreter; and a
//! device that computes a wrong result (an emulation image of the kernel
//! with a store dropped, run in place of the genuine PTX) reported as a
//! failure naming the seed, the target, the output and the values.

#[path = "../examples/common/generated_args.rs"]
mod generated_args;
#[allow(dead_code)] // the kernel cache is the example's
#[path = "../examples/common/generated_build.rs"]
mod generated_build;
#[path = "../examples/common/generated_bundle.rs"]
mod generated_bundle;
#[path = "../examples/common/generated_report.rs"]
mod generated_report;
#[path = "../examples/common/generated_run.rs"]
mod generated_run;
#[path = "support/standin_child.rs"]
mod standin_child;

use generated_bundle::Manifest;
use generated_run::Outcome;
use std::path::{Path, PathBuf};
use tile::runtime::driver::GpuApi;
use tile::Device;
use tile_codegen::{Sm, Target};

/// Where the child finds the images (set by the parent).
const IMAGES: &str = "TILE_TEST_GENERATED_IMAGES";
/// What the child expects: `pass` or `fail:<seed>`.
const EXPECT: &str = "TILE_TEST_GENERATED_EXPECT";

const TARGETS: [Target; 2] = [Target::Nvptx(Sm::Sm80), Target::Nvptx(Sm::Sm90a)];

/// Seeds whose programs are small enough to emulate quickly.
const SEEDS: [u64; 3] = [0, 1, 2];

/// Builds `seeds`' images for [`TARGETS`] under `dir`/images.
fn build(dir: &Path, seeds: &[u64]) -> PathBuf {
    let images = dir.join("images");
    let (manifest, built) = generated_build::build(&images, seeds, &TARGETS, (2, None))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(manifest.cases.len(), seeds.len());
    assert_eq!(built.images, seeds.len() * TARGETS.len(), "{manifest:?}");
    assert_eq!(
        Manifest::read(&images),
        Ok(manifest),
        "the manifest's round trip"
    );
    images
}

#[test]
fn generated_programs_pass_through_the_driver_stand_in() {
    let dir = standin_child::standin_dir("generated", &[GpuApi::Cuda]);
    let images = build(&dir.0, &SEEDS);
    let written = generated_build::write_emulation_images(&images, &dir.0, &SEEDS, &TARGETS)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(written, SEEDS.len() * TARGETS.len());
    let env = [
        (IMAGES, images.to_str().expect("a UTF-8 path")),
        (EXPECT, "pass"),
        ("TILE_STANDIN_SM", "90"),
    ];
    standin_child::run_child(&dir.0, "child_checks_the_images", &env);
}

#[test]
fn a_wrong_result_on_the_device_is_a_failure() {
    let seed = SEEDS[0];
    let dir = standin_child::standin_dir("generated-wrong", &[GpuApi::Cuda]);
    let images = build(&dir.0, &[seed]);
    // The device runs, in place of the genuine sm_80 and sm_90a PTX, the
    // kernel without its first store: that output keeps its input.
    let mut func = tile_testgen::generate(seed, &Default::default()).func;
    tile_codegen::driver::optimize(&mut func).expect("the passes");
    let text = func.to_string();
    let store = text
        .lines()
        .find(|l| l.trim_start().starts_with("store"))
        .expect("a store");
    let mutant = text.replacen(&format!("{store}\n"), "", 1);
    let mutant = tile::ir::text::parse_function(&mutant).unwrap_or_else(|e| panic!("{e}"));
    let manifest = Manifest::read(&images).expect("the manifest");
    for image in &manifest.cases[&seed].images {
        let target: Target = image.target.parse().expect("a target");
        let genuine = std::fs::read(images.join(&image.file)).expect("the image");
        let built = generated_build::emulation_image(&mutant, seed, target)
            .unwrap_or_else(|e| panic!("{e}"));
        generated_build::write_under_key(&dir.0, &genuine, &built)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let env = [
        (IMAGES, images.to_str().expect("a UTF-8 path")),
        (EXPECT, &*format!("fail:{seed}")),
        ("TILE_STANDIN_SM", "90"),
    ];
    standin_child::run_child(&dir.0, "child_checks_the_images", &env);
}

/// Runs in a child process with the stand-in as the CUDA driver: checks
/// every seed of the images on every target the device runs, as
/// `generated_check` does, and what the parent expects of the result.
#[test]
#[ignore = "run by the tests above, with the driver stand-ins"]
fn child_checks_the_images() {
    let images = PathBuf::from(std::env::var(IMAGES).expect("the images"));
    let expect = std::env::var(EXPECT).expect("the expectation");
    let dev = Device::cuda(0).expect("the CUDA stand-in");
    let manifest = Manifest::read(&images).expect("the manifest");
    let targets: Vec<String> = TARGETS.iter().map(Target::to_string).collect();
    let (here, not_here) = generated_run::runnable(&dev, &targets);
    assert_eq!(here, targets, "a Hopper stand-in runs sm_80 and sm_90a PTX");
    let seeds: Vec<u64> = manifest.cases.keys().copied().collect();
    let records = generated_run::check(&dev, (&images, &manifest), &seeds, &here, 2, &mut |_| {})
        .unwrap_or_else(|e| panic!("{e}"));
    let table = generated_report::table(&records, &here, &not_here);
    eprintln!("{table}");
    let json = generated_report::json(&dev.to_string(), &records, &here, &not_here);
    assert_eq!(records.len(), seeds.len() * here.len());
    match expect.strip_prefix("fail:") {
        None => {
            for record in &records {
                assert!(
                    matches!(
                        record.outcome,
                        Outcome::Identical | Outcome::WithinBounds | Outcome::RejectedByBoth
                    ),
                    "seed {} on {}: {:?}",
                    record.seed,
                    record.target,
                    record.outcome
                );
            }
            assert!(
                records
                    .iter()
                    .any(|r| matches!(r.outcome, Outcome::Identical | Outcome::WithinBounds)),
                "no seed ran to the end"
            );
            assert!(table.contains("no failures"), "{table}");
            assert!(!json.contains("\"outcome\": \"failed\""), "{json}");
        }
        Some(seed) => {
            for record in &records {
                let Outcome::Failed(message) = &record.outcome else {
                    panic!(
                        "seed {seed} on {} did not fail: {:?}",
                        record.target, record.outcome
                    );
                };
                let at = format!("seed {seed} on {}", record.target);
                for part in [at.as_str(), "output `", "against the interpreter's"] {
                    assert!(message.contains(part), "no {part:?} in:\n{message}");
                }
            }
            assert!(table.contains("failed; the first:"), "{table}");
            assert!(json.contains("\"outcome\": \"failed\""), "{json}");
        }
    }
}

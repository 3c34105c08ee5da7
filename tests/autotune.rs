//! The autotuner on the CPU device: of two specializations that compute the
//! same, one deliberately slower, it chooses the faster, remembers it on
//! disk, and a second process reuses the choice without timing; a corrupt
//! file is ignored and replaced, disagreeing candidates are an error, and
//! `TILE_AUTOTUNE=off` and `Autotuner::off` time nothing.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use tile::autotune::{self, Autotuner, Candidate, Progress};
use tile::{tile_kernel, Device, LaunchArg, Tensor};

/// Copies `x` to `out`, after `R` rounds of `acc = (acc + x) - x`, which
/// leave `acc` exactly `x` (`2x - x` is exact) and cost `R` times the work.
#[tile_kernel(configs(B = 256, R = 1), configs(B = 256, R = 96), targets = "host")]
fn copy_after_rounds<const B: usize, const R: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    let v = partition_view(x, [B]).load_masked(pid);
    let mut acc = v;
    for i in 0..R {
        acc = acc + v - v;
    }
    partition_view(out, [B]).store_masked(acc, pid);
}

/// Twice `x`: disagrees with the copies.
#[tile_kernel(configs(B = 256), targets = "host")]
fn twice<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    let v = partition_view(x, [B]).load_masked(pid);
    partition_view(out, [B]).store_masked(v * 2.0, pid);
}

/// Copies `x` to `out` after 96 rounds of [`copy_after_rounds`]: a kernel
/// of its own whose one specialization is written `B=256`, as
/// [`copy_once`]'s is.
#[tile_kernel(configs(B = 256), targets = "host")]
fn copy_slowly<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    let v = partition_view(x, [B]).load_masked(pid);
    let mut acc = v;
    for i in 0..96 {
        acc = acc + v - v;
    }
    partition_view(out, [B]).store_masked(acc, pid);
}

/// Copies `x` to `out`.
#[tile_kernel(configs(B = 256), targets = "host")]
fn copy_once<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    let v = partition_view(x, [B]).load_masked(pid);
    partition_view(out, [B]).store_masked(v, pid);
}

const N: usize = 1 << 18;

/// The slow candidate first, the fast second.
fn candidates() -> [Candidate; 2] {
    let grid = [(N / 256) as u32, 1, 1];
    [
        Candidate {
            spec: copy_after_rounds::<256, 96>::kernel_spec(),
            grid,
        },
        Candidate {
            spec: copy_after_rounds::<256, 1>::kernel_spec(),
            grid,
        },
    ]
}

/// A fresh directory for one test's choices.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tile-autotune-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn quiet(_: &Progress<'_>) {}

/// Launches the candidates through `tuner` on `x` (values `0..N`) into a
/// tensor of sevens: the index chosen, and that the output is `x`.
fn run(tuner: &Autotuner, candidates: &[Candidate]) -> Result<usize, tile::Error> {
    let dev = Device::cpu();
    let values: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let x = dev.tensor_from_slice(&values, &[N])?;
    let mut out: Tensor<f32> = dev.tensor_from_slice(&vec![7.0; N], &[N])?;
    let index = tuner.launch(
        &dev,
        &[N as i64],
        candidates,
        &mut [LaunchArg::from(&x), LaunchArg::from(&mut out)],
    )?;
    assert_eq!(
        out.to_vec()?,
        values,
        "the chosen candidate ran once on the arguments"
    );
    Ok(index)
}

/// The file the choice for the candidates is kept in under `dir`.
fn choice_file(tuner: &Autotuner) -> PathBuf {
    let dev = Device::cpu();
    let code = dev
        .kernel_code(&candidates()[0].spec)
        .expect("the kernel loads");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    tuner
        .file_of(
            "copy_after_rounds",
            &format!("cpu {code} {cores} cores"),
            &[N as i64],
        )
        .expect("choices are kept")
}

static STEPS: AtomicUsize = AtomicUsize::new(0);

fn count(progress: &Progress<'_>) {
    if let Progress::Timing { count, .. } = progress {
        assert_eq!(*count, 2);
    }
    STEPS.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn the_fastest_candidate_is_chosen_once_and_kept_on_disk() {
    let dir = scratch("fastest");
    let tuner = Autotuner::in_dir(&dir).with_progress(count);
    assert_eq!(run(&tuner, &candidates()).unwrap(), 1);
    assert_eq!(tuner.timed(), 2);
    // Two candidates, each announced and timed, and a choice made: five
    // reports.
    assert_eq!(STEPS.load(Ordering::SeqCst), 5);
    // The choice is reused: nothing more is timed.
    assert_eq!(run(&tuner, &candidates()).unwrap(), 1);
    assert_eq!(tuner.timed(), 2);
    let file = std::fs::read_to_string(choice_file(&tuner)).unwrap();
    assert!(file.starts_with("tile-autotune 1\n"), "{file}");
    assert!(file.ends_with("choice B=256,R=1\n"), "{file}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs this test binary's `child` test in another process with `env`.
fn child(mode: &str, dir: &Path, env: &[(&str, &str)]) {
    let status = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "second_process", "--nocapture"])
        .env("TILE_AUTOTUNE_DIR", dir)
        .env("AUTOTUNE_TEST_MODE", mode)
        .envs(env.iter().copied())
        .status()
        .unwrap();
    assert!(status.success(), "the {mode} process failed");
}

/// What `child` runs: with the choices of `TILE_AUTOTUNE_DIR`, under
/// `AUTOTUNE_TEST_MODE` `reuse` (a choice is on disk: nothing is timed) or
/// `off` (`TILE_AUTOTUNE=off`: the first candidate runs, nothing is timed
/// or written).
#[test]
#[ignore = "run by the tests above in a process of its own"]
fn second_process() {
    let mode = std::env::var("AUTOTUNE_TEST_MODE").expect("run by `child`");
    let tuner = Autotuner::new().with_progress(quiet);
    match mode.as_str() {
        "reuse" => {
            assert!(tuner.is_on());
            assert_eq!(run(&tuner, &candidates()).unwrap(), 1);
        }
        "off" => {
            assert!(!tuner.is_on());
            assert_eq!(run(&tuner, &candidates()).unwrap(), 0);
            let dir = std::env::var_os("TILE_AUTOTUNE_DIR").unwrap();
            assert!(!Path::new(&dir).exists(), "nothing is written");
        }
        other => panic!("unknown mode {other}"),
    }
    assert_eq!(tuner.timed(), 0);
}

#[test]
fn a_second_process_reuses_the_choice_without_timing() {
    let dir = scratch("reuse");
    let tuner = Autotuner::in_dir(&dir).with_progress(quiet);
    assert_eq!(run(&tuner, &candidates()).unwrap(), 1);
    child("reuse", &dir, &[]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tile_autotune_off_times_nothing_and_writes_nothing() {
    let dir = scratch("off");
    child("off", &dir, &[("TILE_AUTOTUNE", "off")]);
    let tuner = Autotuner::off();
    assert!(!tuner.is_on());
    assert_eq!(run(&tuner, &candidates()).unwrap(), 0);
    assert_eq!(tuner.timed(), 0);
}

#[test]
fn a_corrupt_choice_is_ignored_and_replaced() {
    let dir = scratch("corrupt");
    let first = Autotuner::in_dir(&dir).with_progress(quiet);
    assert_eq!(run(&first, &candidates()).unwrap(), 1);
    let file = choice_file(&first);
    let good = std::fs::read_to_string(&file).unwrap();
    // The choice flipped to the slow candidate without fixing the checksum.
    std::fs::write(&file, good.replace("R=1\n", "R=96\n")).unwrap();
    let second = Autotuner::in_dir(&dir).with_progress(quiet);
    assert_eq!(run(&second, &candidates()).unwrap(), 1);
    assert_eq!(second.timed(), 2, "tuned again");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), good);
    // Garbage is no choice either.
    std::fs::write(&file, [0xff, 0, 1]).unwrap();
    let third = Autotuner::in_dir(&dir).with_progress(quiet);
    assert_eq!(run(&third, &candidates()).unwrap(), 1);
    assert_eq!(third.timed(), 2);
    // Cleared, the choice is made again.
    autotune::clear(Some(&dir)).unwrap();
    assert!(!file.exists());
    let fourth = Autotuner::in_dir(&dir).with_progress(quiet);
    assert_eq!(run(&fourth, &candidates()).unwrap(), 1);
    assert_eq!(fourth.timed(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The kernels whose choice the autotuner reported, in order.
static CHOSEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn record_choice(progress: &Progress<'_>) {
    if let Progress::Chose { kernel, label, .. } = progress {
        CHOSEN.lock().unwrap().push(format!("{kernel} {label}"));
    }
}

#[test]
fn candidates_of_two_kernels_with_one_specialization_stay_apart() {
    let dir = scratch("two-kernels");
    let grid = [(N / 256) as u32, 1, 1];
    let candidates = [
        Candidate {
            spec: copy_slowly::<256>::kernel_spec(),
            grid,
        },
        Candidate {
            spec: copy_once::<256>::kernel_spec(),
            grid,
        },
    ];
    let first = Autotuner::in_dir(&dir).with_progress(record_choice);
    assert_eq!(run(&first, &candidates).unwrap(), 1);
    assert_eq!(*CHOSEN.lock().unwrap(), ["copy_once B=256"]);
    // Another autotuner reads the choice from disk: the second candidate,
    // not the first one whose specialization is written the same.
    let second = Autotuner::in_dir(&dir).with_progress(quiet);
    assert_eq!(run(&second, &candidates).unwrap(), 1);
    assert_eq!(second.timed(), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn candidates_that_disagree_are_an_error_and_leave_the_arguments_alone() {
    let dir = scratch("disagree");
    let tuner = Autotuner::in_dir(&dir).with_progress(quiet);
    let grid = [(N / 256) as u32, 1, 1];
    let mixed = [
        candidates()[1],
        Candidate {
            spec: twice::<256>::kernel_spec(),
            grid,
        },
    ];
    let dev = Device::cpu();
    let x = dev.tensor_from_slice(&vec![1.5f32; N], &[N]).unwrap();
    let mut out: Tensor<f32> = dev.zeros(&[N]).unwrap();
    let error = tuner
        .launch(
            &dev,
            &[N as i64],
            &mixed,
            &mut [LaunchArg::from(&x), LaunchArg::from(&mut out)],
        )
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.starts_with("autotuning: kernel `copy_after_rounds` on device cpu ")
            && message.ends_with(
                ": twice B=256 and B=256,R=1 disagree: argument 1 differs at element 0 (row-major): 1.5 against 3"
            ),
        "{message}"
    );
    assert!(!dir.exists(), "no choice is recorded");
    assert_eq!(out.to_vec().unwrap(), vec![0.0; N], "the output as it was");
    assert!(Autotuner::off().launch(&dev, &[1], &[], &mut []).is_err());
}

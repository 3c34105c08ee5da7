//! Autotuning: of several compiled specializations of a kernel, launch the
//! fastest for the problem at hand, found by timing them once per device and
//! key and remembered on disk.
//!
//! [`Autotuner::launch`] takes the candidates (each a specialization's
//! [`KernelSpec`] with the grid it covers the problem with), a key (the
//! problem sizes the choice depends on) and the arguments. The first launch
//! for a device and key runs every candidate on a fresh copy of the
//! arguments, checks that their outputs agree, times each (the median of
//! several launches), records the fastest and reports its progress; the
//! arguments are then restored and the chosen candidate launched on them
//! once. Later launches, in this process or a later one, reuse the choice
//! without timing.
//!
//! The choices live in `$TILE_AUTOTUNE_DIR`, else `$XDG_CACHE_HOME/tile/autotune`,
//! else `$HOME/.cache/tile/autotune` (`store.rs` has the format).
//! `TILE_AUTOTUNE=off` turns tuning off: the first candidate is launched,
//! nothing is timed, read or written. [`clear`] removes the recorded choices.

mod outputs;
mod store;

use crate::device::Device;
use crate::error::Error;
use crate::kernel::KernelSpec;
use crate::launch::{launch, LaunchArg};
use crate::stream::Stream;
use outputs::Saved;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use store::{Entry, Store};

/// One specialization the autotuner may choose: the kernel and the grid it
/// covers the problem with.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    /// The specialization (`kernel::<..>::kernel_spec()`).
    pub spec: KernelSpec,
    /// Its grid, one to three axes (missing axes are 1).
    pub grid: [u32; 3],
}

/// What the autotuner is doing, for its progress reports.
#[derive(Clone, Debug, PartialEq)]
pub enum Progress<'a> {
    /// Timing candidate `index` (from 0) of `count`, `label`.
    Timing {
        /// The candidate's kernel.
        kernel: &'a str,
        /// The key, as recorded.
        key: &'a str,
        /// The candidate's specialization.
        label: &'a str,
        /// Its position.
        index: usize,
        /// How many there are.
        count: usize,
    },
    /// Timed `label`: its median launch took `time`.
    Timed {
        /// The candidate's kernel.
        kernel: &'a str,
        /// The key, as recorded.
        key: &'a str,
        /// The candidate's specialization.
        label: &'a str,
        /// Its median launch.
        time: Duration,
    },
    /// Chose `label`, whose median launch took `time`.
    Chose {
        /// The candidate's kernel.
        kernel: &'a str,
        /// The key, as recorded.
        key: &'a str,
        /// The chosen specialization.
        label: &'a str,
        /// Its median launch.
        time: Duration,
    },
}

/// Chooses among specializations by timing them, once per device and key.
pub struct Autotuner {
    /// Whether candidates are timed at all.
    on: bool,
    store: Option<Store>,
    /// Choices made or read in this process: (kernel, device, key) to label.
    chosen: Mutex<HashMap<(String, String, String), String>>,
    /// The relative difference two candidates' float outputs may show.
    tolerance: f64,
    progress: fn(&Progress<'_>),
    /// Candidates timed by this autotuner so far.
    timed: Mutex<usize>,
}

/// How candidate `index` is named in a recorded choice and in messages: its
/// specialization (`BM=128,BN=128`), preceded by its kernel's name where
/// that differs from the first candidate's, so that candidates of two
/// kernels with the same specialization stay apart.
fn choice_label(candidates: &[Candidate], index: usize) -> String {
    let spec = &candidates[index].spec;
    if spec.name() == candidates[0].spec.name() {
        spec.specialization().to_string()
    } else {
        format!("{} {}", spec.name(), spec.specialization())
    }
}

/// The default progress report: a line on standard error per step.
fn report(progress: &Progress<'_>) {
    match progress {
        Progress::Timing {
            kernel,
            key,
            label,
            index,
            count,
        } => eprintln!(
            "tile autotune: {kernel} [{key}]: timing {label} ({}/{count})",
            index + 1
        ),
        Progress::Timed {
            kernel,
            key,
            label,
            time,
        } => eprintln!("tile autotune: {kernel} [{key}]: {label} took {time:?} per launch"),
        Progress::Chose {
            kernel,
            key,
            label,
            time,
        } => eprintln!("tile autotune: {kernel} [{key}]: chose {label} ({time:?} per launch)"),
    }
}

/// Where choices are kept when `TILE_AUTOTUNE_DIR` does not say.
fn default_dir() -> Option<PathBuf> {
    let from = |var: &str| std::env::var_os(var).filter(|v| !v.is_empty());
    from("TILE_AUTOTUNE_DIR")
        .map(PathBuf::from)
        .or_else(|| from("XDG_CACHE_HOME").map(|d| Path::new(&d).join("tile/autotune")))
        .or_else(|| from("HOME").map(|d| Path::new(&d).join(".cache/tile/autotune")))
}

/// Whether `TILE_AUTOTUNE` turns tuning off.
fn disabled_by_env() -> bool {
    std::env::var("TILE_AUTOTUNE").is_ok_and(|v| v == "off")
}

/// Removes the choices recorded in `dir` (by default the directory
/// [`Autotuner::new`] uses); the next launch of each key tunes again.
pub fn clear(dir: Option<&Path>) -> Result<(), Error> {
    let Some(dir) = dir.map(Path::to_path_buf).or_else(default_dir) else {
        return Ok(());
    };
    Store::clear(&dir).map_err(|e| Error::Autotune(format!("cannot clear {}: {e}", dir.display())))
}

impl Default for Autotuner {
    fn default() -> Self {
        Autotuner::new()
    }
}

impl Autotuner {
    /// An autotuner with its choices in the default directory, or off when
    /// `TILE_AUTOTUNE=off` (see the module docs).
    pub fn new() -> Autotuner {
        if disabled_by_env() {
            return Autotuner::off();
        }
        Autotuner::with_store(default_dir().map(|d| Store::new(&d)))
    }

    /// An autotuner with its choices in `dir` (still off under
    /// `TILE_AUTOTUNE=off`).
    pub fn in_dir(dir: &Path) -> Autotuner {
        if disabled_by_env() {
            return Autotuner::off();
        }
        Autotuner::with_store(Some(Store::new(dir)))
    }

    /// An autotuner that tunes nothing: it launches the first candidate.
    pub fn off() -> Autotuner {
        Autotuner {
            on: false,
            ..Autotuner::with_store(None)
        }
    }

    fn with_store(store: Option<Store>) -> Autotuner {
        Autotuner {
            on: true,
            store,
            chosen: Mutex::new(HashMap::new()),
            tolerance: 1e-3,
            progress: report,
            timed: Mutex::new(0),
        }
    }

    /// Whether this autotuner times candidates at all.
    pub fn is_on(&self) -> bool {
        self.on
    }

    /// Float outputs of two candidates agree when they differ by at most
    /// `tolerance · (1 + |value|)` (default 1e-3); integers must be equal.
    pub fn with_tolerance(mut self, tolerance: f64) -> Autotuner {
        self.tolerance = tolerance.max(0.0);
        self
    }

    /// Reports progress through `progress` instead of standard error.
    pub fn with_progress(mut self, progress: fn(&Progress<'_>)) -> Autotuner {
        self.progress = progress;
        self
    }

    /// How many candidates this autotuner has timed.
    pub fn timed(&self) -> usize {
        *self.timed.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The file a choice for `kernel` on `device` (as the autotuner names
    /// it: the device, the code it runs and for the CPU its cores) and
    /// `key` is kept in, if choices are kept.
    pub fn file_of(&self, kernel: &str, device: &str, key: &[i64]) -> Option<PathBuf> {
        let store = self.store.as_ref()?;
        Some(store.file_of(kernel, device, &key_text(key)))
    }

    /// Launches the fastest of `candidates` for `key` on `device` with
    /// `args`, tuning first if this device and key have no choice yet; the
    /// index of the candidate launched.
    pub fn launch(
        &self,
        device: &Device,
        key: &[i64],
        candidates: &[Candidate],
        args: &mut [LaunchArg<'_>],
    ) -> Result<usize, Error> {
        let Some(first) = candidates.first() else {
            return Err(Error::Autotune(format!(
                "no candidates to choose from on device {device}"
            )));
        };
        if !self.is_on() {
            launch(device, &first.spec, first.grid, args)?;
            return Ok(0);
        }
        let kernel = first.spec.name();
        let device_id = device_identity(device, &first.spec)?;
        let key = key_text(key);
        let index = match self.known(kernel, &device_id, &key, candidates) {
            Some(index) => index,
            None => {
                let index = self.tune(device, &device_id, &key, candidates, args)?;
                self.remember(kernel, &device_id, &key, &choice_label(candidates, index));
                index
            }
        };
        let chosen = &candidates[index];
        launch(device, &chosen.spec, chosen.grid, args)?;
        Ok(index)
    }

    /// The candidate chosen before, in this process or on disk.
    fn known(
        &self,
        kernel: &str,
        device: &str,
        key: &str,
        candidates: &[Candidate],
    ) -> Option<usize> {
        let id = (kernel.to_string(), device.to_string(), key.to_string());
        let mut chosen = self.chosen.lock().unwrap_or_else(|e| e.into_inner());
        let label = match chosen.get(&id) {
            Some(label) => label.clone(),
            None => {
                let label = self.store.as_ref()?.get(kernel, device, key)?;
                chosen.insert(id, label.clone());
                label
            }
        };
        (0..candidates.len()).position(|index| choice_label(candidates, index) == label)
    }

    /// Records a choice in this process and, best effort, on disk.
    fn remember(&self, kernel: &str, device: &str, key: &str, label: &str) {
        let id = (kernel.to_string(), device.to_string(), key.to_string());
        self.chosen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, label.to_string());
        if let Some(store) = &self.store {
            let entry = Entry {
                kernel: kernel.to_string(),
                device: device.to_string(),
                key: key.to_string(),
                choice: label.to_string(),
            };
            if let Err(e) = store.put(&entry) {
                tracing::warn!(kernel, error = %e, "the autotuner could not record its choice");
            }
        }
    }

    /// Times every candidate on a fresh copy of the arguments, checks that
    /// their outputs agree with the first's, and returns the fastest; the
    /// arguments are restored whatever happens.
    fn tune(
        &self,
        device: &Device,
        device_id: &str,
        key: &str,
        candidates: &[Candidate],
        args: &mut [LaunchArg<'_>],
    ) -> Result<usize, Error> {
        let saved = Saved::take(args);
        let timed = self.time_all(device, device_id, key, candidates, args, &saved);
        saved.restore(args);
        let (index, time) = timed?;
        (self.progress)(&Progress::Chose {
            kernel: candidates[index].spec.name(),
            key,
            label: candidates[index].spec.specialization(),
            time,
        });
        Ok(index)
    }

    /// The fastest candidate and its median launch, each candidate run from
    /// `saved` and its outputs compared with the first's.
    fn time_all(
        &self,
        device: &Device,
        device_id: &str,
        key: &str,
        candidates: &[Candidate],
        args: &mut [LaunchArg<'_>],
        saved: &Saved,
    ) -> Result<(usize, Duration), Error> {
        let group = candidates[0].spec.name();
        let mut first_outputs = None;
        let mut best: Option<(usize, Duration)> = None;
        for (index, candidate) in candidates.iter().enumerate() {
            let (kernel, label) = (candidate.spec.name(), candidate.spec.specialization());
            (self.progress)(&Progress::Timing {
                kernel,
                key,
                label,
                index,
                count: candidates.len(),
            });
            saved.restore(args);
            launch(device, &candidate.spec, candidate.grid, args)?;
            let outputs = Saved::outputs(args)?;
            match &first_outputs {
                None => first_outputs = Some(outputs),
                Some(first) => outputs::agree(first, &outputs, self.tolerance).map_err(|why| {
                    Error::Autotune(format!(
                        "kernel `{group}` on device {device_id}: {} and {} disagree: {why}",
                        choice_label(candidates, index),
                        choice_label(candidates, 0)
                    ))
                })?,
            }
            let stream = device.stream()?;
            let time = median_launch(&stream, |s| {
                crate::launch_on(s, &candidate.spec, candidate.grid, args)
            })?;
            *self.timed.lock().unwrap_or_else(|e| e.into_inner()) += 1;
            (self.progress)(&Progress::Timed {
                kernel,
                key,
                label,
                time,
            });
            if best.is_none_or(|(_, t)| time < t) {
                best = Some((index, time));
            }
        }
        Ok(best.expect("at least one candidate"))
    }
}

/// The median time of `launch` on `stream`, measured between events
/// recorded around it (on a GPU, on the device): at least 5 launches and
/// 20 ms, at most 100 launches.
fn median_launch(
    stream: &Stream,
    mut launch: impl FnMut(&Stream) -> Result<(), Error>,
) -> Result<Duration, Error> {
    let started = Instant::now();
    let mut times = Vec::new();
    while times.len() < 100 && (times.len() < 5 || started.elapsed() < Duration::from_millis(20)) {
        let start = stream.record()?;
        launch(stream)?;
        let end = stream.record()?;
        stream.synchronize()?;
        times.push(Duration::from_secs_f64(
            f64::from(end.elapsed_ms(&start)?) / 1e3,
        ));
    }
    times.sort();
    Ok(times[times.len() / 2])
}

/// The key as recorded: its values, comma-separated.
fn key_text(key: &[i64]) -> String {
    key.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
}

/// The device as choices are kept per device: its name, the code it runs
/// `spec` with, and for the CPU its cores.
fn device_identity(device: &Device, spec: &KernelSpec) -> Result<String, Error> {
    let code = device.kernel_code(spec)?;
    Ok(match device.kind() {
        crate::DeviceKind::Cpu => {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            format!("{device} {code} {cores} cores")
        }
        _ => format!("{device} {code}"),
    })
}

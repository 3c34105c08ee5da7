//! How the expansion runs, and what the proc macro reads of it from its
//! environment (docs/guide.md, "Environment variables"):
//!
//! | variable | effect |
//! |----------|--------|
//! | `TILE_DUMP` | where every stage is written |
//! | `TILE_TARGETS` | the targets of kernels whose attribute names none |
//! | `TILE_DEV_TARGETS` | the same in dev builds (debug assertions on), when `TILE_TARGETS` is unset |
//! | `TILE_CACHE` | `off` turns the kernel cache off (`on`, the default, keeps it) |
//! | `TILE_CACHE_DIR` | the kernel cache's directory (default: `tile-cache` in the target directory) |
//! | `TILE_CACHE_SIZE` | the cache's bound: bytes, or with a `K`, `M` or `G` suffix (default 2G) |
//!
//! and, from the compiler's command line (`invocation.rs`), whether the
//! build is a dev build and whether it produces code at all.

use crate::attr::EnvTargets;
use crate::invocation::Invocation;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::OnceLock;
use tile_codegen::cache::{self, Cache, CacheError};

/// How to expand: read from the environment by the proc macro, set
/// directly by tests.
#[derive(Clone, Debug, Default)]
pub struct ExpandOptions {
    /// `TILE_DUMP`: where to write every stage.
    pub dump_dir: Option<PathBuf>,
    /// The targets when the attribute names none, and the variable that
    /// named them (`TILE_TARGETS`, or `TILE_DEV_TARGETS` in a dev build).
    pub env_targets: Option<EnvTargets>,
    /// The kernel cache; its absence is no error.
    pub cache: CacheChoice,
    /// The most threads compiling one specialization's targets at once
    /// (`None`: as many as the build's jobserver or the cores allow).
    pub max_threads: Option<NonZeroUsize>,
    /// The build produces no code (`cargo check`, `cargo clippy`, rustdoc,
    /// rust-analyzer): the kernels go through the front end, the passes and
    /// the checks that need no LLVM (`tile_codegen::driver::check_only`), and
    /// embed no images; nothing is dumped.
    pub check_only: bool,
}

/// Whether the expansion uses the kernel cache.
#[derive(Clone, Debug, Default)]
pub enum CacheChoice {
    /// No cache: every target is compiled.
    #[default]
    Off,
    /// This cache.
    On(Cache),
    /// A setting that is not valid, and why: a compile error at each kernel.
    Invalid(String),
}

impl ExpandOptions {
    /// The options of a proc-macro run, from the environment and from the
    /// command line of the compiler it runs in (`invocation.rs`): whether
    /// the crate being compiled is a dev build (debug assertions on), for
    /// `TILE_DEV_TARGETS`, and whether the build produces code.
    pub fn from_env() -> ExpandOptions {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let invocation = Invocation::current();
        let env_targets = match var("TILE_TARGETS") {
            Some(list) => Some(EnvTargets::tile_targets(list)),
            None => var("TILE_DEV_TARGETS")
                .filter(|_| invocation.debug_assertions())
                .map(|list| EnvTargets {
                    variable: "TILE_DEV_TARGETS",
                    list,
                }),
        };
        ExpandOptions {
            dump_dir: std::env::var_os("TILE_DUMP")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
            env_targets,
            cache: cache_from_env().clone(),
            max_threads: None,
            check_only: !invocation.produces_code(),
        }
    }
}

/// The kernel cache the environment asks for, opened once per process; a
/// cache that cannot be opened is off, with a note on standard error.
fn cache_from_env() -> &'static CacheChoice {
    static CHOICE: OnceLock<CacheChoice> = OnceLock::new();
    CHOICE.get_or_init(|| {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let setting = CacheSetting::parse(
            var("TILE_CACHE").as_deref(),
            var("TILE_CACHE_DIR").map(PathBuf::from),
            var("TILE_CACHE_SIZE").as_deref(),
        );
        match setting {
            Err(e) => CacheChoice::Invalid(e),
            Ok(None) => CacheChoice::Off,
            Ok(Some(setting)) => match setting.open() {
                Ok(cache) => CacheChoice::On(cache),
                Err(e) => {
                    note(&cache_off_note(&e));
                    CacheChoice::Off
                }
            },
        }
    })
}

/// The note of a cache that cannot be used, with what would help: another
/// directory where one may, else turning the cache off to silence it.
fn cache_off_note(error: &CacheError) -> String {
    let advice = if error.another_dir_may_help() {
        "set TILE_CACHE_DIR to a writable directory, or TILE_CACHE=off"
    } else {
        "set TILE_CACHE=off to build without it quietly"
    };
    format!("the tile kernel cache is off: {error} ({advice})")
}

/// Writes `message` to standard error, which cargo shows with the
/// crate's build output.
pub(crate) fn note(message: &str) {
    eprintln!("note: {message}");
}

/// The kernel cache's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
struct CacheSetting {
    /// `TILE_CACHE_DIR`, else the default.
    dir: Option<PathBuf>,
    /// `TILE_CACHE_SIZE`, else the default.
    max_bytes: u64,
}

impl CacheSetting {
    /// The setting of `TILE_CACHE`, `TILE_CACHE_DIR` and `TILE_CACHE_SIZE`;
    /// `None` when the cache is off.
    fn parse(
        mode: Option<&str>,
        dir: Option<PathBuf>,
        size: Option<&str>,
    ) -> Result<Option<CacheSetting>, String> {
        match mode {
            None | Some("on") => {}
            Some("off") => return Ok(None),
            Some(other) => return Err(format!("TILE_CACHE is `on` or `off`, found `{other}`")),
        }
        let max_bytes = match size {
            None => cache::DEFAULT_MAX_BYTES,
            Some(size) => parse_size(size).ok_or_else(|| {
                format!("TILE_CACHE_SIZE is a number of bytes with an optional K, M or G suffix (`500M`), found `{size}`")
            })?,
        };
        Ok(Some(CacheSetting { dir, max_bytes }))
    }

    /// The cache in its directory.
    fn open(&self) -> Result<Cache, CacheError> {
        let dir = match &self.dir {
            Some(dir) => dir.clone(),
            None => Cache::default_dir()?,
        };
        Cache::open(&dir, self.max_bytes)
    }
}

/// `123`, `500K`, `64M` or `2G` (powers of 1024) in bytes.
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, shift) = match text.char_indices().last()? {
        (at, 'K' | 'k') => (&text[..at], 10),
        (at, 'M' | 'm') => (&text[..at], 20),
        (at, 'G' | 'g') => (&text[..at], 30),
        _ => (text, 0),
    };
    digits.parse::<u64>().ok()?.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_settings_parse_or_say_what_is_wrong() {
        let default = CacheSetting {
            dir: None,
            max_bytes: cache::DEFAULT_MAX_BYTES,
        };
        assert_eq!(
            CacheSetting::parse(None, None, None),
            Ok(Some(default.clone()))
        );
        assert_eq!(
            CacheSetting::parse(Some("on"), None, None),
            Ok(Some(default))
        );
        assert_eq!(
            CacheSetting::parse(Some("off"), None, Some("junk")),
            Ok(None)
        );
        assert_eq!(
            CacheSetting::parse(None, Some("/c".into()), Some("500M")),
            Ok(Some(CacheSetting {
                dir: Some("/c".into()),
                max_bytes: 500 << 20
            }))
        );
        assert_eq!(
            CacheSetting::parse(Some("yes"), None, None),
            Err("TILE_CACHE is `on` or `off`, found `yes`".to_string())
        );
        let error = CacheSetting::parse(None, None, Some("2 GB")).unwrap_err();
        assert!(error.contains("found `2 GB`"), "{error}");
    }

    /// The note says what would help, by the kind of error.
    #[test]
    fn a_cache_that_cannot_be_used_is_a_note_with_the_advice_that_fits() {
        let unwritable = CacheError::Io {
            action: "create",
            path: "/ro/tile-cache/v1/entries".into(),
            source: std::sync::Arc::new(std::io::ErrorKind::PermissionDenied.into()),
        };
        assert_eq!(
            cache_off_note(&unwritable),
            "the tile kernel cache is off: cannot create /ro/tile-cache/v1/entries: permission denied \
             (set TILE_CACHE_DIR to a writable directory, or TILE_CACHE=off)"
        );
        let unidentified = CacheError::Compiler("its own code is in no file".into());
        assert_eq!(
            cache_off_note(&unidentified),
            "the tile kernel cache is off: cannot identify the compiler: its own code is in no \
             file (set TILE_CACHE=off to build without it quietly)"
        );
    }

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(parse_size("123"), Some(123));
        assert_eq!(parse_size("4k"), Some(4096));
        assert_eq!(parse_size("64M"), Some(64 << 20));
        assert_eq!(parse_size(" 2G "), Some(2 << 30));
        assert_eq!(parse_size("G"), None);
        assert_eq!(parse_size("-1"), None);
        assert_eq!(parse_size("1.5G"), None);
        assert_eq!(parse_size("99999999999G"), None, "overflow");
        assert_eq!(parse_size(""), None);
    }
}

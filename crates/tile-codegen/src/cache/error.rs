//! Why the kernel cache cannot be used: [`CacheError`].

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

/// Why the kernel cache could not be opened, or an entry stored or the
/// cache trimmed. A caller decides by the variant: another directory helps
/// with [`CacheError::Io`] and [`CacheError::NoTargetDir`], nothing but
/// turning the cache off with the others.
#[derive(Clone, Debug, thiserror::Error)]
pub enum CacheError {
    /// A file or directory of the cache could not be created, read or
    /// written (its [`io::ErrorKind`] says why: permissions, a read-only
    /// or full file system).
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done (`create`, `write in`, `read`).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        source: Arc<io::Error>,
    },
    /// The compiler's own file, whose digest keys every entry, could not
    /// be found or read.
    #[error("cannot identify the compiler: {0}")]
    Compiler(String),
    /// The default directory, in the cargo target directory the compiler
    /// was built in, does not exist: the compiler's file is in no target
    /// directory.
    #[error(
        "the compiler's file {} is in no cargo target directory (none of its parents holds a CACHEDIR.TAG)",
        .0.display()
    )]
    NoTargetDir(PathBuf),
}

impl CacheError {
    /// An I/O error while doing `action` on `path`.
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        CacheError::Io {
            action,
            path: path.into(),
            source: Arc::new(source),
        }
    }

    /// Whether a cache in another directory could work where this one
    /// does not.
    pub fn another_dir_may_help(&self) -> bool {
        matches!(self, CacheError::Io { .. } | CacheError::NoTargetDir(_))
    }
}

/// Two errors are equal when the same thing failed the same way (for I/O,
/// the same action on the same path, of the same [`io::ErrorKind`]).
impl PartialEq for CacheError {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (
                CacheError::Io {
                    action,
                    path,
                    source,
                },
                CacheError::Io {
                    action: other_action,
                    path: other_path,
                    source: other_source,
                },
            ) => {
                action == other_action && path == other_path && source.kind() == other_source.kind()
            }
            (CacheError::Compiler(a), CacheError::Compiler(b)) => a == b,
            (CacheError::NoTargetDir(a), CacheError::NoTargetDir(b)) => a == b,
            _ => false,
        }
    }
}

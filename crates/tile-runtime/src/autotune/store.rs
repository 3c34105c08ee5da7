//! The autotuner's choices on disk: one small text file per kernel, device
//! and key, named by a digest of the three, under a directory of the format's
//! version (`v1/`):
//!
//! ```text
//! tile-autotune 1
//! checksum 5f0c8e0a1b2c3d4e          FNV-1a 64 of the lines below
//! kernel matmul
//! device cpu x86_64-v3
//! key 1024,1024
//! choice BM=64,BN=64,BK=32
//! ```
//!
//! `kernel` is the first candidate's kernel; `choice` names the chosen
//! candidate by its specialization, preceded by its own kernel's name where
//! that is another (`choice matmul_tma BM=128,BN=128`).
//!
//! A file is written to a temporary name in the same directory and renamed
//! over the old one, so a reader sees the old file or the new one, never
//! part of one, and processes tuning at once leave one whole choice. A file
//! that does not read back exactly (another version, a wrong checksum,
//! another kernel, device or key under the same name) is no choice: the
//! kernel is tuned again and the file replaced.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The format's version: a directory and the first line of each file.
const VERSION: u32 = 1;

/// What one file records: the choice for a kernel on a device for a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Entry {
    pub(super) kernel: String,
    pub(super) device: String,
    pub(super) key: String,
    pub(super) choice: String,
}

/// The FNV-1a 64 digest of `bytes`.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Entry {
    /// The lines the checksum covers.
    fn body(&self) -> String {
        format!(
            "kernel {}\ndevice {}\nkey {}\nchoice {}\n",
            self.kernel, self.device, self.key, self.choice
        )
    }

    /// The file's name in the version's directory.
    fn file_name(kernel: &str, device: &str, key: &str) -> String {
        let digest = fnv1a(format!("{kernel}\n{device}\n{key}").as_bytes());
        format!("{digest:016x}.txt")
    }

    /// The whole file.
    fn encode(&self) -> String {
        let body = self.body();
        format!(
            "tile-autotune {VERSION}\nchecksum {:016x}\n{body}",
            fnv1a(body.as_bytes())
        )
    }

    /// The entry `text` holds, if it is a whole file of this version.
    fn decode(text: &str) -> Option<Entry> {
        let rest = text.strip_prefix(&format!("tile-autotune {VERSION}\n"))?;
        let (checksum, body) = rest.strip_prefix("checksum ")?.split_once('\n')?;
        if u64::from_str_radix(checksum, 16).ok()? != fnv1a(body.as_bytes()) {
            return None;
        }
        let mut lines = body.lines();
        let mut field = |name: &str| {
            lines
                .next()?
                .strip_prefix(name)?
                .strip_prefix(' ')
                .map(str::to_string)
        };
        let entry = Entry {
            kernel: field("kernel")?,
            device: field("device")?,
            key: field("key")?,
            choice: field("choice")?,
        };
        (entry.body() == body).then_some(entry)
    }
}

/// A directory of choices.
#[derive(Clone, Debug)]
pub(super) struct Store {
    dir: PathBuf,
}

impl Store {
    /// The choices under `root`.
    pub(super) fn new(root: &Path) -> Store {
        Store {
            dir: root.join(format!("v{VERSION}")),
        }
    }

    fn path(&self, kernel: &str, device: &str, key: &str) -> PathBuf {
        self.dir.join(Entry::file_name(kernel, device, key))
    }

    /// The recorded choice for `kernel` on `device` for `key`, if a whole
    /// file records one.
    pub(super) fn get(&self, kernel: &str, device: &str, key: &str) -> Option<String> {
        let text = fs::read_to_string(self.path(kernel, device, key)).ok()?;
        let entry = Entry::decode(&text)?;
        (entry.kernel == kernel && entry.device == device && entry.key == key)
            .then_some(entry.choice)
    }

    /// Records `entry`, atomically.
    pub(super) fn put(&self, entry: &Entry) -> std::io::Result<()> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        fs::create_dir_all(&self.dir)?;
        let path = self.path(&entry.kernel, &entry.device, &entry.key);
        let temporary = self.dir.join(format!(
            ".{}.{}.tmp",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let written = fs::File::create(&temporary).and_then(|mut file| {
            file.write_all(entry.encode().as_bytes())?;
            file.sync_all()
        });
        match written.and_then(|()| fs::rename(&temporary, &path)) {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = fs::remove_file(&temporary);
                Err(e)
            }
        }
    }

    /// Removes every recorded choice (of every version).
    pub(super) fn clear(root: &Path) -> std::io::Result<()> {
        match fs::remove_dir_all(root) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// The file that records `kernel` on `device` for `key` (for messages
    /// and tests).
    pub(super) fn file_of(&self, kernel: &str, device: &str, key: &str) -> PathBuf {
        self.path(kernel, device, key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry {
            kernel: "matmul".into(),
            device: "cpu x86_64-v3".into(),
            key: "1024,1024".into(),
            choice: "BM=64,BN=64,BK=32".into(),
        }
    }

    #[test]
    fn files_round_trip_and_any_change_is_refused() {
        let e = entry();
        let text = e.encode();
        assert_eq!(Entry::decode(&text), Some(e.clone()));
        // Every truncation and every changed byte is refused.
        for len in 0..text.len() {
            assert_eq!(Entry::decode(&text[..len]), None, "{len}");
        }
        let bytes = text.as_bytes();
        for i in 0..bytes.len() {
            let mut changed = bytes.to_vec();
            changed[i] ^= 0x01;
            if let Ok(changed) = String::from_utf8(changed) {
                assert_eq!(Entry::decode(&changed), None, "byte {i}");
            }
        }
        let other_version = text.replacen("tile-autotune 1", "tile-autotune 2", 1);
        assert_eq!(Entry::decode(&other_version), None);
    }
}

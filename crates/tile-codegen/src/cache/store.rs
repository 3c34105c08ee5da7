//! The cache's files: one per key, written atomically, checked when read,
//! and trimmed to a size bound, least recently used first.
//!
//! ```text
//! <dir>/v1/entries/<2 hex digits>/<30 hex digits>   an entry: the key's 32 digits
//! <dir>/v1/compilers/<32 hex digits>                remembered compiler digests
//! ```
//!
//! An entry is `MAGIC`, its key (16 bytes), the payload's length (8 bytes,
//! little-endian), the payload, and the digest of everything before it (16
//! bytes). A file that is shorter or longer, another key's, or whose digest
//! differs is refused, never returned: a write torn by a crash, a truncated
//! copy, flipped bits. Writers write a private temporary file beside the
//! entry and rename it into place, so that readers, and concurrent writers
//! of the same entry, only ever see whole files. A hit sets the entry's
//! modification time, which [`Store::trim`] evicts by.

use super::digest::Digest;
use super::error::CacheError;
use std::fs::{self, File};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// The first bytes of every entry: the format's name and version.
const MAGIC: &[u8; 8] = b"tilekc\0\x01";

/// The bytes around an entry's payload.
const FRAME_BYTES: usize = MAGIC.len() + 16 + 8 + 16;

/// A temporary file older than this was left by a writer that died.
const STALE_TEMPORARY: Duration = Duration::from_secs(3600);

/// A remembered compiler digest older than this is forgotten (the next
/// process of that compiler hashes it again), so that the digests of
/// compilers long replaced do not pile up.
const STALE_COMPILER: Duration = Duration::from_secs(7 * 24 * 3600);

/// An open cache directory with its size bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Store {
    dir: PathBuf,
    max_bytes: u64,
}

/// What a lookup found.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The entry's payload.
    Hit(Vec<u8>),
    /// No entry.
    Miss,
    /// An entry that cannot be used, and why: it is to be rebuilt.
    Unusable(String),
}

impl Store {
    /// Opens (creating it if needed) the cache in `dir`, holding at most
    /// `max_bytes` of entries; an error says why it cannot be written.
    pub fn open(dir: &Path, max_bytes: u64) -> Result<Store, CacheError> {
        let store = Store {
            dir: dir.to_path_buf(),
            max_bytes,
        };
        let entries = store.entries_dir();
        fs::create_dir_all(&entries).map_err(|e| CacheError::io("create", &entries, e))?;
        let probe = entries.join(format!("probe-{}", unique_suffix()));
        fs::write(&probe, b"").map_err(|e| CacheError::io("write in", &entries, e))?;
        let _ = fs::remove_file(&probe);
        Ok(store)
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The most bytes of entries [`Store::trim`] leaves.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// Where compiler digests are remembered.
    pub fn compilers_dir(&self) -> PathBuf {
        self.dir.join("v1").join("compilers")
    }

    fn entries_dir(&self) -> PathBuf {
        self.dir.join("v1").join("entries")
    }

    /// The file of `key`'s entry.
    pub fn path_of(&self, key: &Digest) -> PathBuf {
        let hex = key.to_string();
        self.entries_dir().join(&hex[..2]).join(&hex[2..])
    }

    /// The payload stored under `key`, checked.
    pub fn get(&self, key: &Digest) -> Lookup {
        let path = self.path_of(key);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                return Lookup::Miss
            }
            Err(e) => return Lookup::Unusable(format!("cannot read {}: {e}", path.display())),
        };
        match unframe(&bytes, key) {
            Ok(payload) => {
                // Recency for `trim`; a read-only cache keeps its times.
                let _ = File::options()
                    .append(true)
                    .open(&path)
                    .and_then(|f| f.set_modified(SystemTime::now()));
                Lookup::Hit(payload.to_vec())
            }
            Err(why) => Lookup::Unusable(format!("{}: {why}", path.display())),
        }
    }

    /// Stores `payload` under `key`, replacing any entry.
    pub fn put(&self, key: &Digest, payload: &[u8]) -> Result<(), CacheError> {
        let path = self.path_of(key);
        let parent = path.parent().expect("an entry is inside its shard");
        fs::create_dir_all(parent)
            .and_then(|()| write_atomically(&path, &frame(key, payload)))
            .map_err(|e| CacheError::io("write", &path, e))
    }

    /// Removes temporary files that writers left behind, compiler digests
    /// not written for a week and, while the entries hold more than the
    /// bound, the least recently used entries; returns how many entries
    /// were removed. Entries that another process removes meanwhile are
    /// skipped.
    pub fn trim(&self) -> Result<usize, CacheError> {
        let now = SystemTime::now();
        let compilers = fs::read_dir(self.compilers_dir()).into_iter().flatten();
        for memo in compilers.flatten() {
            let modified = memo.metadata().and_then(|m| m.modified());
            if modified.is_ok_and(|t| now.duration_since(t).unwrap_or_default() > STALE_COMPILER) {
                let _ = fs::remove_file(memo.path());
            }
        }
        let root = self.entries_dir();
        let mut entries: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        for shard in fs::read_dir(&root).map_err(|e| CacheError::io("list", &root, e))? {
            let Ok(shard) = shard else { continue };
            let Ok(files) = fs::read_dir(shard.path()) else {
                continue;
            };
            for file in files.flatten() {
                let Ok(meta) = file.metadata() else { continue };
                let modified = meta.modified().unwrap_or(now);
                let path = file.path();
                if path.extension().is_some_and(|e| e == "tmp") {
                    let age = now.duration_since(modified).unwrap_or_default();
                    if age > STALE_TEMPORARY {
                        let _ = fs::remove_file(&path);
                    }
                    continue;
                }
                entries.push((modified, meta.len(), path));
            }
        }
        let mut total: u64 = entries.iter().map(|(_, size, _)| size).sum();
        entries.sort();
        let mut removed = 0;
        for (_, size, path) in entries {
            if total <= self.max_bytes {
                break;
            }
            match fs::remove_file(&path) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(CacheError::io("remove", path, e)),
            }
            total -= size;
        }
        Ok(removed)
    }
}

/// `payload` framed as an entry of `key`.
fn frame(key: &Digest, payload: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(payload.len() + FRAME_BYTES);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&key.0);
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(payload);
    let checksum = Digest::of(&bytes);
    bytes.extend_from_slice(&checksum.0);
    bytes
}

/// The payload of an entry of `key`, or why the bytes are not one.
fn unframe<'a>(bytes: &'a [u8], key: &Digest) -> Result<&'a [u8], String> {
    if bytes.len() < FRAME_BYTES || &bytes[..MAGIC.len()] != MAGIC {
        return Err(format!(
            "not a cache entry of this format ({} bytes)",
            bytes.len()
        ));
    }
    let (body, checksum) = bytes.split_at(bytes.len() - 16);
    let length_at = MAGIC.len() + 16;
    let length = u64::from_le_bytes(body[length_at..length_at + 8].try_into().expect("8 bytes"));
    let payload = &body[length_at + 8..];
    if payload.len() as u64 != length {
        return Err(format!(
            "truncated or extended: the payload has {} bytes, its header says {length}",
            payload.len()
        ));
    }
    if Digest::of(body).0 != checksum {
        return Err("its checksum does not match its contents".to_string());
    }
    if body[MAGIC.len()..length_at] != key.0 {
        return Err("it holds another key's entry".to_string());
    }
    Ok(payload)
}

/// Writes `bytes` to `path` through a temporary file in the same directory
/// renamed into place: readers see the old file or the new one, whole.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.tmp", unique_suffix()));
    let temporary = path.with_file_name(name);
    let written = File::create(&temporary)
        .and_then(|mut file| file.write_all(bytes))
        .and_then(|()| fs::rename(&temporary, path));
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written
}

/// A name no other writer, in this process or another, uses at the same
/// time.
fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tile-store-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn an_entry_reads_back_and_a_damaged_one_is_refused() {
        let dir = scratch("damage");
        let store = Store::open(&dir, 1 << 20).unwrap();
        let key = Digest::of(b"key");
        assert_eq!(store.get(&key), Lookup::Miss);
        store.put(&key, b"payload").unwrap();
        assert_eq!(store.get(&key), Lookup::Hit(b"payload".to_vec()));
        let path = store.path_of(&key);
        let good = fs::read(&path).unwrap();
        let unusable = |bytes: &[u8]| {
            fs::write(&path, bytes).unwrap();
            match store.get(&key) {
                Lookup::Unusable(why) => why,
                other => panic!("{other:?}"),
            }
        };
        // Every flipped bit is caught, wherever it is.
        for at in 0..good.len() {
            let mut bad = good.clone();
            bad[at] ^= 0x10;
            unusable(&bad);
        }
        assert!(unusable(&good[..good.len() - 1]).contains("truncated"));
        assert!(unusable(&good[..20]).contains("not a cache entry"));
        assert!(unusable(b"").contains("not a cache entry"));
        assert!(unusable(&[good.as_slice(), b"x"].concat()).contains("truncated"));
        // A whole entry of another key, copied over this one.
        let other = Digest::of(b"other");
        assert!(unusable(&frame(&other, b"payload")).contains("another key"));
        // Put replaces the damaged file.
        store.put(&key, b"payload").unwrap();
        assert_eq!(store.get(&key), Lookup::Hit(b"payload".to_vec()));
        let _ = fs::remove_dir_all(&dir);
    }

    /// Writers replacing one entry again and again while readers read it:
    /// every read finds no entry or one writer's whole payload.
    #[test]
    fn concurrent_writers_and_readers_see_whole_entries() {
        let dir = scratch("concurrent");
        let store = Store::open(&dir, 1 << 30).unwrap();
        let key = Digest::of(b"contended");
        // Each writer's payload is its own byte, 64 KiB of it: a torn file
        // would mix them or end early.
        let payload = |writer: u8| vec![writer; 64 << 10];
        std::thread::scope(|scope| {
            for writer in 0..4u8 {
                let store = &store;
                scope.spawn(move || {
                    for _ in 0..50 {
                        store.put(&key, &payload(writer)).unwrap();
                    }
                });
            }
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..200 {
                        match store.get(&key) {
                            Lookup::Miss => {}
                            Lookup::Hit(bytes) => {
                                assert!((0..4).any(|w| bytes == payload(w)), "a mixed payload")
                            }
                            Lookup::Unusable(why) => panic!("{why}"),
                        }
                    }
                });
            }
        });
        let shard = store.path_of(&key).parent().unwrap().to_path_buf();
        assert_eq!(
            fs::read_dir(shard).unwrap().count(),
            1,
            "no temporary file left"
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_unwritable_directory_is_an_error_not_a_panic() {
        let dir = scratch("unwritable");
        fs::create_dir_all(dir.parent().unwrap()).unwrap();
        // A file where the directory should be.
        fs::write(&dir, b"").unwrap();
        let error = Store::open(&dir.join("cache"), 1 << 20).unwrap_err();
        assert!(error.to_string().starts_with("cannot create"), "{error}");
        let _ = fs::remove_file(&dir);
    }

    #[test]
    fn trimming_removes_the_least_recently_used_entries() {
        let dir = scratch("trim");
        let payload = vec![7u8; 1000];
        let entry_bytes = (payload.len() + FRAME_BYTES) as u64;
        let store = Store::open(&dir, 3 * entry_bytes).unwrap();
        let keys: Vec<Digest> = (0..5u8).map(|i| Digest::of(&[i])).collect();
        let start = SystemTime::now() - Duration::from_secs(100);
        for (i, key) in keys.iter().enumerate() {
            store.put(key, &payload).unwrap();
            let file = File::options()
                .append(true)
                .open(store.path_of(key))
                .unwrap();
            file.set_modified(start + Duration::from_secs(i as u64))
                .unwrap();
        }
        // Reading the oldest makes it the most recently used.
        assert!(matches!(store.get(&keys[0]), Lookup::Hit(_)));
        // A temporary file left by a dead writer goes; a fresh one stays.
        let shard = store.path_of(&keys[0]).parent().unwrap().to_path_buf();
        let (stale, fresh) = (shard.join("x.1-1.tmp"), shard.join("x.1-2.tmp"));
        for path in [&stale, &fresh] {
            fs::write(path, b"partial").unwrap();
        }
        File::options()
            .append(true)
            .open(&stale)
            .unwrap()
            .set_modified(start - STALE_TEMPORARY)
            .unwrap();
        assert_eq!(store.trim(), Ok(2));
        let kept: Vec<bool> = keys
            .iter()
            .map(|k| matches!(store.get(k), Lookup::Hit(_)))
            .collect();
        assert_eq!(kept, [true, false, false, true, true]);
        assert!(!stale.exists() && fresh.exists());
        // Compiler digests: a week-old one goes, a recent one stays.
        fs::create_dir_all(store.compilers_dir()).unwrap();
        let (old, recent) = (
            store.compilers_dir().join("old"),
            store.compilers_dir().join("recent"),
        );
        for path in [&old, &recent] {
            fs::write(path, Digest::of(b"c").to_string()).unwrap();
        }
        File::options()
            .append(true)
            .open(&old)
            .unwrap()
            .set_modified(start - STALE_COMPILER)
            .unwrap();
        // Within the bound, no entry goes.
        assert_eq!(store.trim(), Ok(0));
        assert!(!old.exists() && recent.exists());
        let _ = fs::remove_dir_all(&dir);
    }
}

//! The compiler's own code, as the cache sees it: which file holds it (the
//! `#[tile_kernel]` proc macro's shared object, or the executable of a test
//! or bench that calls the pipeline), its identity, the identities of LLVM
//! and of the tools that make an image, and the cargo target directory the
//! file was built in (where the cache lives by default).
//!
//! The identity is a digest of that file's bytes: it changes whenever any
//! code compiled into the macro changes (this crate, `tile-thread`,
//! `tile-ir`, `tile-abi`, the front end, their dependencies, the Rust
//! compiler), with no list of sources to keep up to date, and two builds of
//! the same code in different target directories share their entries.
//! Hashing the file costs tens of milliseconds in an unoptimized build, so
//! the digest is remembered in the cache under the file's path, inode, size
//! and modification time: each build of the compiler is hashed once.
//! LLVM is linked dynamically, so its version is part of every key too
//! ([`llvm_version`]).

use super::digest::{Digest, Digester};
use super::error::CacheError;
use super::store::write_atomically;
use crate::tools::{self, Tool};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The file holding the compiler's code and the digest of its bytes.
#[derive(Clone, Debug)]
pub struct Compiler {
    /// The shared object or executable.
    pub object: PathBuf,
    /// The digest of its bytes.
    pub identity: Digest,
}

impl Compiler {
    /// The running compiler, hashed once per process; `memo_dir` is where
    /// digests of compiler files are remembered between processes.
    pub fn this(memo_dir: &Path) -> Result<&'static Compiler, CacheError> {
        static THIS: OnceLock<Result<Compiler, CacheError>> = OnceLock::new();
        THIS.get_or_init(|| {
            let (object, inode) = own_object()?;
            let identity = identity_of(&object, inode, memo_dir)?;
            Ok(Compiler { object, identity })
        })
        .as_ref()
        .map_err(Clone::clone)
    }
}

/// The file mapped into this process that holds this function's code, and
/// the inode it was mapped from.
fn own_object() -> Result<(PathBuf, u64), CacheError> {
    let maps = fs::read_to_string("/proc/self/maps").map_err(|e| {
        CacheError::Compiler(format!(
            "cannot read /proc/self/maps to find its own code: {e}"
        ))
    })?;
    let address = own_object as fn() -> Result<(PathBuf, u64), CacheError> as usize;
    mapping_at(&maps, address).ok_or_else(|| {
        CacheError::Compiler("its own code is in no file mapped into this process".to_string())
    })
}

/// The file and inode of the mapping of `maps` (`/proc/self/maps`'s format)
/// that contains `address`.
fn mapping_at(maps: &str, address: usize) -> Option<(PathBuf, u64)> {
    maps.lines().find_map(|line| {
        // start-end perms offset dev inode path (the path may hold spaces)
        let mut fields = line.splitn(6, ' ');
        let (range, _perms, _offset, _dev) = (
            fields.next()?,
            fields.next()?,
            fields.next()?,
            fields.next()?,
        );
        let inode: u64 = fields.next()?.parse().ok()?;
        let path = fields.next()?.trim_start();
        let (start, end) = range.split_once('-')?;
        let start = usize::from_str_radix(start, 16).ok()?;
        let end = usize::from_str_radix(end, 16).ok()?;
        (start <= address && address < end && path.starts_with('/'))
            .then(|| (PathBuf::from(path), inode))
    })
}

/// The digest of `object`'s bytes (mapped from `inode`), remembered in
/// `memo_dir` under its path, inode, size and modification time.
fn identity_of(object: &Path, inode: u64, memo_dir: &Path) -> Result<Digest, CacheError> {
    let meta = fs::metadata(object).map_err(|e| {
        CacheError::Compiler(format!("cannot read its file {}: {e}", object.display()))
    })?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.ino() != inode {
            return Err(CacheError::Compiler(format!(
                "its file {} was replaced while it runs",
                object.display()
            )));
        }
    }
    let mut stamp = Digester::new();
    stamp.field("path", object.as_os_str().as_encoded_bytes());
    stamp.field("inode", &inode.to_le_bytes());
    stamp.field("size", &meta.len().to_le_bytes());
    if let Ok(modified) = meta.modified() {
        stamp.field("modified", format!("{modified:?}").as_bytes());
    }
    let memo = memo_dir.join(stamp.finish().to_string());
    if let Some(digest) = fs::read_to_string(&memo).ok().and_then(|t| parse_hex(&t)) {
        return Ok(digest);
    }
    let digest = hash_file(object)?;
    // A memo that cannot be written only costs the next process a hash.
    let _ = fs::create_dir_all(memo_dir)
        .and_then(|()| write_atomically(&memo, digest.to_string().as_bytes()));
    Ok(digest)
}

fn hash_file(path: &Path) -> Result<Digest, CacheError> {
    let read_error =
        |e: std::io::Error| CacheError::Compiler(format!("cannot read {}: {e}", path.display()));
    let mut file = fs::File::open(path).map_err(read_error)?;
    let mut digester = Digester::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer).map_err(read_error)?;
        if n == 0 {
            return Ok(digester.finish());
        }
        digester.update(&buffer[..n]);
    }
}

/// A digest written by [`Digest`]'s `Display`, or `None`.
fn parse_hex(text: &str) -> Option<Digest> {
    let text = text.trim();
    if text.len() != 32 {
        return None;
    }
    let mut bytes = [0u8; 16];
    for (i, byte) in bytes.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(Digest(bytes))
}

/// The version of the LLVM library this process runs (`19.1.7`).
pub fn llvm_version() -> String {
    let (major, minor, patch) = inkwell::support::get_llvm_version();
    format!("{major}.{minor}.{patch}")
}

/// What `tool --version` prints, once per process, or why it could not run
/// (a missing tool fails the compilation that needs it, which is then not
/// cached).
pub fn tool_version(tool: Tool) -> &'static str {
    static VERSIONS: [OnceLock<String>; 2] = [const { OnceLock::new() }; 2];
    let slot = match tool {
        Tool::Ptxas => 0,
        Tool::LlvmObjdump => 1,
    };
    VERSIONS[slot].get_or_init(|| tools::version(tool).unwrap_or_else(|e| e.to_string()))
}

/// The cargo target directory the compiler was built in: the nearest
/// directory above its file that holds the `CACHEDIR.TAG` cargo writes into
/// every target directory.
pub fn target_dir_of(object: &Path) -> Option<PathBuf> {
    object
        .ancestors()
        .skip(1)
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map(Path::to_path_buf)
}

/// The cargo target directory of the running compiler, found without
/// hashing it.
pub fn own_target_dir() -> Result<PathBuf, CacheError> {
    let (object, _) = own_object()?;
    target_dir_of(&object).ok_or(CacheError::NoTargetDir(object))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mapping_that_holds_an_address_is_found() {
        let maps = "\
55649a00f000-55649a011000 r--p 00000000 fe:00 247030                     /usr/bin/cat
7f0000000000-7f0000100000 r-xp 00002000 fe:00 99                         /work/target/debug/deps/libtile macros.so
7f0000100000-7f0000200000 rw-p 00000000 00:00 0 
7ffd00000000-7ffd00001000 r-xp 00000000 00:00 0                          [vdso]
";
        assert_eq!(
            mapping_at(maps, 0x7f0000000010),
            Some((
                PathBuf::from("/work/target/debug/deps/libtile macros.so"),
                99
            ))
        );
        assert_eq!(mapping_at(maps, 0x7f0000100010), None, "anonymous");
        assert_eq!(mapping_at(maps, 0x7ffd00000000), None, "[vdso]");
        assert_eq!(mapping_at(maps, 0x1000), None);
    }

    #[test]
    fn this_process_is_identified_by_its_executable() {
        let memo = std::env::temp_dir().join(format!("tile-compiler-memo-{}", std::process::id()));
        let compiler = Compiler::this(&memo).expect("this test's executable");
        assert_eq!(
            compiler.object.canonicalize().unwrap(),
            std::env::current_exe().unwrap().canonicalize().unwrap()
        );
        assert_eq!(compiler.identity, hash_file(&compiler.object).unwrap());
        // The digest is remembered, and the remembered one is what is used:
        // a memo that says otherwise wins.
        let fresh = memo.join("fresh");
        let (object, inode) = own_object().unwrap();
        assert_eq!(identity_of(&object, inode, &fresh), Ok(compiler.identity));
        let memos: Vec<_> = fs::read_dir(&fresh)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(memos.len(), 1);
        let other = Digest::of(b"another compiler");
        fs::write(&memos[0], other.to_string()).unwrap();
        assert_eq!(identity_of(&object, inode, &fresh), Ok(other));
        // A file that is not the one mapped is refused.
        assert!(identity_of(&object, inode + 1, &fresh).is_err());
        // The test executable sits in cargo's target directory.
        let target = own_target_dir().unwrap();
        assert!(compiler.object.starts_with(&target), "{}", target.display());
        let _ = fs::remove_dir_all(&memo);
    }

    #[test]
    fn a_digest_reads_back_and_junk_does_not() {
        let digest = Digest::of(b"x");
        assert_eq!(parse_hex(&format!("{digest}\n")), Some(digest));
        assert_eq!(parse_hex("zz"), None);
        assert_eq!(parse_hex(&"g".repeat(32)), None);
    }
}

//! The kernel cache: what [`crate::driver::compile`] produces for each
//! kernel, specialization and target, kept on disk and addressed by the
//! digest of everything it depends on, so that a crate whose kernels did
//! not change rebuilds without running LLVM.
//!
//! A key ([`Cache::key`], inputs in [`KeyInputs`]) is computed from the
//! optimized tile IR, which the front end produces cheaply, before any LLVM
//! work; the value is the target's image with what the generated code
//! embeds beside it (bounds checks, shared memory) and, when `TILE_DUMP` is
//! on, the target's dump files. The files (`store.rs`, [`Store`]) are written
//! atomically, checked when read (a damaged entry is rebuilt, never used),
//! and trimmed to a size bound, least recently used first.
//!
//! By default the cache is `tile-cache` in the cargo target directory the
//! compiler was built in ([`Cache::default_dir`]), which `cargo clean -p`
//! of a user's crate leaves alone; docs/guide.md lists the environment
//! variables that move it, bound it or turn it off.

mod compiler;
mod digest;
mod error;
mod store;

pub use compiler::{llvm_version, tool_version, Compiler};
pub use digest::{Digest, Digester};
pub use error::CacheError;
pub use store::{Lookup, Store};

use crate::target::Target;
use crate::tools::Tool;
use crate::CodegenOptions;
use std::path::{Path, PathBuf};

/// The default bound on the cache's entries: 2 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 2 << 30;

/// The name of the cache's directory inside a cargo target directory.
pub const DIR_NAME: &str = "tile-cache";

/// An open kernel cache: its files and the identity of the compiler that
/// reads and writes them.
#[derive(Clone, Debug)]
pub struct Cache {
    store: Store,
    compiler: Digest,
}

/// Everything one target's output of one specialization depends on,
/// besides the compiler itself and LLVM (which [`Cache::key`] adds).
#[derive(Clone, Copy, Debug)]
pub struct KeyInputs<'a> {
    /// The tile IR after the pass pipeline, as text: the kernel's name,
    /// parameters and body with the specialization's constants folded in.
    pub ir: &'a str,
    /// The specialization's label (`BM=64,BN=64`): its constants again, and
    /// the name its dumps are written under.
    pub label: &'a str,
    /// The target.
    pub target: Target,
    /// Warps per program instance: GPU targets lower for it, host code does
    /// not depend on it (and its keys leave it out, as they leave out the
    /// stages).
    pub num_warps: u32,
    /// The options of code generation (optimization level, fast math).
    pub codegen: &'a CodegenOptions,
    /// The stages of software-pipelined loops the kernel asks for
    /// (`num_stages`), if it does: GPU targets lower for them.
    pub num_stages: Option<u32>,
    /// Whether the entry holds the target's `TILE_DUMP` files.
    pub dumps: bool,
}

impl Cache {
    /// Opens the cache in `dir` with a bound of `max_bytes`; an error says
    /// why it cannot be used (the directory cannot be written, or the
    /// compiler cannot be identified).
    pub fn open(dir: &Path, max_bytes: u64) -> Result<Cache, CacheError> {
        let store = Store::open(dir, max_bytes)?;
        let compiler = Compiler::this(&store.compilers_dir())?.identity;
        Ok(Cache { store, compiler })
    }

    /// `tile-cache` in the cargo target directory the running compiler was
    /// built in.
    pub fn default_dir() -> Result<PathBuf, CacheError> {
        compiler::own_target_dir().map(|dir| dir.join(DIR_NAME))
    }

    /// The cache's files.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The key of `inputs`' output. Besides the inputs it covers the
    /// compiler's identity (the digest of its code, [`Compiler`], which
    /// holds the lld that links AMDGPU code objects and host shared objects),
    /// the version of the LLVM library in the process (whose machine-code
    /// layer assembles AMDGPU objects), and, for entries with
    /// dumps, the tools that make dump files (`ptxas -v` for NVPTX,
    /// `llvm-objdump` for host levels). The list of targets is not in it: a
    /// target's output does not depend on the others'.
    pub fn key(&self, inputs: &KeyInputs<'_>) -> Digest {
        let mut key = Digester::new();
        key.field("compiler", &self.compiler.0);
        key.field("llvm", llvm_version().as_bytes());
        key.field("target", inputs.target.to_string().as_bytes());
        key.field("ir", inputs.ir.as_bytes());
        key.field("label", inputs.label.as_bytes());
        if inputs.target.is_gpu() {
            key.field("num_warps", &inputs.num_warps.to_le_bytes());
            key.field("num_stages", format!("{:?}", inputs.num_stages).as_bytes());
        }
        key.field("codegen", format!("{:?}", inputs.codegen).as_bytes());
        key.field("dumps", &[u8::from(inputs.dumps)]);
        let dump_tool = match inputs.target {
            Target::Nvptx(_) => Some(Tool::Ptxas),
            Target::Host(_) => Some(Tool::LlvmObjdump),
            Target::Amdgpu(_) => None,
        };
        if let Some(tool) = dump_tool.filter(|_| inputs.dumps) {
            key.field(tool.name(), tool_version(tool).as_bytes());
        }
        key.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::{Gfx, Sm};
    use tile_abi::HostIsa;

    #[test]
    fn every_input_that_changes_code_changes_the_key() {
        let dir = std::env::temp_dir().join(format!("tile-cache-key-{}", std::process::id()));
        let cache = Cache::open(&dir, 1 << 20).unwrap();
        let codegen = CodegenOptions::default();
        let fast = CodegenOptions {
            fast_math: true,
            ..CodegenOptions::default()
        };
        let base = KeyInputs {
            ir: "kernel @k() {}",
            label: "B=64",
            target: Target::Nvptx(Sm::Sm80),
            num_warps: 4,
            codegen: &codegen,
            num_stages: None,
            dumps: false,
        };
        let key = cache.key(&base);
        assert_eq!(key, cache.key(&base), "deterministic");
        let variants = [
            KeyInputs {
                ir: "kernel @k() { }",
                ..base
            },
            KeyInputs {
                label: "B=128",
                ..base
            },
            KeyInputs {
                target: Target::Nvptx(Sm::Sm90),
                ..base
            },
            KeyInputs {
                target: Target::Amdgpu(Gfx::Gfx90a),
                ..base
            },
            KeyInputs {
                num_warps: 8,
                ..base
            },
            KeyInputs {
                codegen: &fast,
                ..base
            },
            KeyInputs {
                num_stages: Some(2),
                ..base
            },
            KeyInputs {
                dumps: true,
                ..base
            },
        ];
        for variant in &variants {
            assert_ne!(cache.key(variant), key, "{variant:?}");
        }
        // Host code depends on neither warps nor stages.
        let host = KeyInputs {
            target: Target::Host(HostIsa::X86_64),
            ..base
        };
        let host_other = KeyInputs {
            num_warps: 8,
            num_stages: Some(2),
            ..host
        };
        assert_eq!(cache.key(&host), cache.key(&host_other));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

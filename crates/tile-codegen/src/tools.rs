//! What finishes what LLVM's code generation starts: the external tools `ptxas` (PTX to cubin,
//! and `ptxas -v`'s register report) and `llvm-objdump` (disassembly), and, inside this
//! process (`native.rs`, over `build/*.cpp`), LLVM's machine-code assembler (AMDGPU assembly
//! to object, as `llvm-mc` would) and lld's ELF linker (AMDGPU object to HSA code object, host
//! object to shared object, as `ld.lld` would).
//!
//! `scripts/setup.sh` installs both tools. Each is looked up, first to last:
//!
//! | tool           | environment override | then                                                        |
//! |----------------|----------------------|-------------------------------------------------------------|
//! | `ptxas`        | `TILE_PTXAS`         | `ptxas` on `PATH`, `<workspace>/.tools/bin/ptxas`             |
//! | `llvm-objdump` | `TILE_LLVM_OBJDUMP`  | `llvm-objdump-22` on `PATH`, `$LLVM_SYS_221_PREFIX/bin`, `/usr/lib/llvm-22/bin`, `llvm-objdump` on `PATH` |
//!
//! The workspace root is `$CARGO_WORKSPACE_DIR` if set, else the nearest directory above this
//! crate's manifest whose `Cargo.toml` has a `[workspace]` table.

use std::ffi::OsStr;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::native;
use crate::target::{self, Gfx, Sm, Target};

/// The LLVM install prefix used when `LLVM_SYS_221_PREFIX` is not set (Debian's `llvm-22-dev`).
pub const DEFAULT_LLVM_PREFIX: &str = "/usr/lib/llvm-22";

/// An external tool that tile runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tool {
    /// NVIDIA's PTX assembler, from the PyPI package `nvidia-cuda-nvcc`.
    Ptxas,
    /// LLVM's disassembler, from Debian's `llvm-22`.
    LlvmObjdump,
}

impl Tool {
    /// The tool's usual command name.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Ptxas => "ptxas",
            Tool::LlvmObjdump => "llvm-objdump",
        }
    }

    /// The environment variable that, when set, names the tool's executable.
    pub fn env_override(self) -> &'static str {
        match self {
            Tool::Ptxas => "TILE_PTXAS",
            Tool::LlvmObjdump => "TILE_LLVM_OBJDUMP",
        }
    }

    /// The places searched for the tool, in order (see the [module docs](self)).
    pub fn candidates(self) -> Vec<Candidate> {
        let mut out = Vec::new();
        if let Some(path) = std::env::var_os(self.env_override()) {
            out.push(Candidate::Path(PathBuf::from(path)));
        }
        match self {
            Tool::Ptxas => {
                out.push(Candidate::OnPath("ptxas".to_owned()));
                if let Some(root) = workspace_root() {
                    out.push(Candidate::Path(root.join(".tools/bin/ptxas")));
                }
            }
            Tool::LlvmObjdump => {
                let name = self.name();
                out.push(Candidate::OnPath(format!("{name}-22")));
                if let Some(prefix) = std::env::var_os("LLVM_SYS_221_PREFIX") {
                    out.push(Candidate::Path(Path::new(&prefix).join("bin").join(name)));
                }
                out.push(Candidate::Path(
                    Path::new(DEFAULT_LLVM_PREFIX).join("bin").join(name),
                ));
                out.push(Candidate::OnPath(name.to_owned()));
            }
        }
        out
    }

    /// Finds the tool's executable: the first of [`Tool::candidates`] that exists.
    pub fn find(self) -> Result<PathBuf, ToolError> {
        let candidates = self.candidates();
        candidates
            .iter()
            .find_map(Candidate::resolve)
            .ok_or_else(|| ToolError::NotFound {
                tool: self.name(),
                searched: candidates
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One place where a tool may be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Candidate {
    /// An executable at exactly this path.
    Path(PathBuf),
    /// A command name looked up in the directories of `PATH`.
    OnPath(String),
}

impl Candidate {
    /// The executable this candidate names, if it exists.
    pub fn resolve(&self) -> Option<PathBuf> {
        match self {
            Candidate::Path(path) => is_executable(path).then(|| path.clone()),
            Candidate::OnPath(name) => std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|dir| dir.join(name))
                    .find(|path| is_executable(path))
            }),
        }
    }
}

impl fmt::Display for Candidate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Candidate::Path(path) => write!(f, "{}", path.display()),
            Candidate::OnPath(name) => write!(f, "`{name}` on PATH"),
        }
    }
}

fn is_executable(path: &Path) -> bool {
    match fs::metadata(path) {
        #[cfg(unix)]
        Ok(meta) => {
            use std::os::unix::fs::PermissionsExt;
            meta.is_file() && meta.permissions().mode() & 0o111 != 0
        }
        #[cfg(not(unix))]
        Ok(meta) => meta.is_file(),
        Err(_) => false,
    }
}

/// The root of the tile workspace (where `.tools/` lives), if it can be found: see the
/// [module docs](self).
pub fn workspace_root() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CARGO_WORKSPACE_DIR") {
        return Some(PathBuf::from(dir));
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|dir| {
            fs::read_to_string(dir.join("Cargo.toml"))
                .map(|toml| toml.lines().any(|line| line.trim() == "[workspace]"))
                .unwrap_or(false)
        })
        .map(Path::to_path_buf)
}

/// An error from finding or running an external tool.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The tool is in none of the places searched.
    #[error("{tool} not found (searched: {searched}); run scripts/setup.sh to install it")]
    NotFound {
        /// The tool's name.
        tool: &'static str,
        /// The places searched, in order.
        searched: String,
    },
    /// An I/O error around running the tool (scratch files, starting the process).
    #[error("{tool}: {what}: {source}")]
    Io {
        /// The tool's name.
        tool: &'static str,
        /// What was being done.
        what: String,
        /// The underlying error.
        source: io::Error,
    },
    /// The tool ran and failed.
    #[error("{tool} failed ({status}): {command}\n{stderr}\n--- input ---\n{input}")]
    Failed {
        /// The tool's name.
        tool: &'static str,
        /// The command line that was run.
        command: String,
        /// How it exited.
        status: String,
        /// What it wrote to standard error (and standard output).
        stderr: String,
        /// The input it was given: the text itself, or a description of binary input.
        input: String,
    },
    /// The assembler or the linker, which run inside this process, failed.
    #[error("{what} failed:\n{messages}\n--- input ---\n{input}")]
    InProcess {
        /// Which of them.
        what: InProcess,
        /// What it reported.
        messages: String,
        /// The input it was given: the text itself, or a description of binary input.
        input: String,
    },
}

/// What [`ToolError::InProcess`] failed to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InProcess {
    /// Assembling AMDGPU assembly into an object (LLVM's machine-code layer).
    Assembler,
    /// Linking an object into a shared object (lld's ELF linker).
    Linker,
}

impl fmt::Display for InProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InProcess::Assembler => "LLVM's assembler",
            InProcess::Linker => "lld's ELF linker",
        })
    }
}

/// A scratch directory, removed with everything in it when dropped.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new(tool: &'static str) -> Result<Self, ToolError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!(
            "tile-codegen-{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir(&dir).map_err(|source| ToolError::Io {
            tool,
            what: format!("creating scratch directory {}", dir.display()),
            source,
        })?;
        Ok(ScratchDir(dir))
    }

    fn write(&self, tool: &'static str, name: &str, bytes: &[u8]) -> Result<PathBuf, ToolError> {
        let path = self.0.join(name);
        fs::write(&path, bytes).map_err(|source| ToolError::Io {
            tool,
            what: format!("writing {}", path.display()),
            source,
        })?;
        Ok(path)
    }

    fn read(&self, tool: &'static str, name: &str) -> Result<Vec<u8>, ToolError> {
        let path = self.0.join(name);
        fs::read(&path).map_err(|source| ToolError::Io {
            tool,
            what: format!("reading its output {}", path.display()),
            source,
        })
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // Best effort: a leftover scratch directory is harmless.
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Runs `tool` with `args` and returns its standard output and standard error; on failure the
/// error carries its output and `input`, a description of what it was given (made only when
/// needed).
fn run<I, S>(
    tool: Tool,
    args: I,
    input: impl FnOnce() -> String,
) -> Result<(String, String), ToolError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let program = tool.find()?;
    let mut command = Command::new(&program);
    command.args(args);
    let command_line = format!("{command:?}");
    let output = command.output().map_err(|source| ToolError::Io {
        tool: tool.name(),
        what: format!("running {}", program.display()),
        source,
    })?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if output.status.success() {
        return Ok((stdout, stderr));
    }
    if !stdout.trim().is_empty() {
        stderr.push_str(&stdout);
    }
    Err(ToolError::Failed {
        tool: tool.name(),
        command: command_line,
        status: output.status.to_string(),
        stderr,
        input: input(),
    })
}

fn numbered(text: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, line)| format!("{:5} | {line}\n", i + 1))
        .collect()
}

/// The version banner of `tool` (its `--version` output).
pub fn version(tool: Tool) -> Result<String, ToolError> {
    run(tool, ["--version"], String::new).map(|(stdout, _)| stdout)
}

/// Assembles PTX text for `sm` with `ptxas -arch=sm_XX` and returns the cubin (an ELF file).
///
/// On failure the error holds `ptxas`'s messages and the PTX, with line numbers.
pub fn assemble_ptx(ptx: &str, sm: Sm) -> Result<Vec<u8>, ToolError> {
    let tool = Tool::Ptxas;
    let dir = ScratchDir::new(tool.name())?;
    let input = dir.write(tool.name(), "kernel.ptx", ptx.as_bytes())?;
    let output = dir.0.join("kernel.cubin");
    let arch = format!("-arch={}", sm.name());
    let args = [
        OsStr::new(&arch),
        OsStr::new("-o"),
        output.as_os_str(),
        input.as_os_str(),
    ];
    run(tool, args, || numbered(ptx))?;
    dir.read(tool.name(), "kernel.cubin")
}

/// Assembles AMDGPU assembly text for `gfx` into an ELF object, inside this process, as
/// `llvm-mc -filetype=obj` would: the assembly LLVM's AMDGPU back end prints (kernel
/// descriptors and metadata included) holds everything its object file would, so one code
/// generation gives both.
///
/// On failure the error holds the assembler's messages and the assembly, with line numbers.
pub fn assemble_amdgpu(assembly: &str, gfx: Gfx) -> Result<Vec<u8>, ToolError> {
    target::initialize(&Target::Amdgpu(gfx));
    native::assemble("amdgcn-amd-amdhsa", gfx.name(), assembly).map_err(|messages| {
        ToolError::InProcess {
            what: InProcess::Assembler,
            messages,
            input: numbered(assembly),
        }
    })
}

/// Links an ELF object file into a shared object, inside this process, as `ld.lld -shared`
/// would: an HSA code object (`.hsaco`) for AMDGPU, a `.so` of host code for the CPU device.
/// lld reads and writes files, in a scratch directory.
pub fn link_shared_object(object: &[u8]) -> Result<Vec<u8>, ToolError> {
    const LINKER: &str = "lld";
    let dir = ScratchDir::new(LINKER)?;
    let input = dir.write(LINKER, "kernel.o", object)?;
    let output = dir.0.join("kernel.so");
    let path = |p: &Path| {
        p.to_str().map(str::to_owned).ok_or_else(|| ToolError::Io {
            tool: LINKER,
            what: format!("passing the path {} to lld", p.display()),
            source: io::Error::new(io::ErrorKind::InvalidInput, "not UTF-8"),
        })
    };
    let (input, output) = (path(&input)?, path(&output)?);
    let failed = |messages: String| ToolError::InProcess {
        what: InProcess::Linker,
        messages,
        input: format!("an object file of {} bytes", object.len()),
    };
    // One thread: a kernel's link is too small to share out.
    let args = [
        "-shared",
        "--threads=1",
        input.as_str(),
        "-o",
        output.as_str(),
    ];
    let linked = native::lld(&args).map_err(failed)?;
    if !linked.ok {
        return Err(failed(linked.messages));
    }
    dir.read(LINKER, "kernel.so")
}

/// Disassembles an ELF object file or code object (host or AMDGPU) with `llvm-objdump -d` and
/// returns the listing.
pub fn disassemble(object: &[u8]) -> Result<String, ToolError> {
    let tool = Tool::LlvmObjdump;
    let dir = ScratchDir::new(tool.name())?;
    let input = dir.write(tool.name(), "object.o", object)?;
    run(tool, [OsStr::new("-d"), input.as_os_str()], || {
        format!("an object file of {} bytes", object.len())
    })
    .map(|(stdout, _)| stdout)
}

/// The undefined dynamic symbols of a shared object (what the loader must find elsewhere), from
/// `llvm-objdump -T`, sorted.
pub fn undefined_dynamic_symbols(object: &[u8]) -> Result<Vec<String>, ToolError> {
    let tool = Tool::LlvmObjdump;
    let dir = ScratchDir::new(tool.name())?;
    let input = dir.write(tool.name(), "object.so", object)?;
    let (listing, _) = run(tool, [OsStr::new("-T"), input.as_os_str()], || {
        format!("a shared object of {} bytes", object.len())
    })?;
    let mut names: Vec<String> = listing
        .lines()
        .filter(|line| line.contains("*UND*"))
        .filter_map(|line| line.split_whitespace().last())
        .map(str::to_owned)
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// The resource usage `ptxas -v` reports for each kernel of `ptx` on `sm`: registers, spills,
/// stack and shared memory, one `ptxas info` block per kernel.
pub fn ptxas_resource_usage(ptx: &str, sm: Sm) -> Result<String, ToolError> {
    let tool = Tool::Ptxas;
    let dir = ScratchDir::new(tool.name())?;
    let input = dir.write(tool.name(), "kernel.ptx", ptx.as_bytes())?;
    let output = dir.0.join("kernel.cubin");
    let (_, stderr) = run(
        tool,
        [
            OsStr::new("-v"),
            OsStr::new(&format!("-arch={}", sm.name())),
            OsStr::new("-o"),
            output.as_os_str(),
            input.as_os_str(),
        ],
        || numbered(ptx),
    )?;
    Ok(stderr)
}

//! `TILE_DUMP`: the stages of one specialization written under
//! `<dir>/<kernel>/<specialization>/` (the list is in the module doc of
//! [`super`]). A target's files are made where it is compiled
//! ([`gpu_files`], [`host_files`]) and kept with its output, so that a
//! target whose output comes from the kernel cache writes them too.

use super::CompileError;
use crate::gpu::Emitted;
use crate::host::HostImage;
use crate::target::Target;
use crate::tools;
use std::path::{Path, PathBuf};

/// Where a specialization's stages go, if anywhere.
pub(super) struct Dump {
    dir: Option<PathBuf>,
}

impl Dump {
    /// The dump of `kernel`'s specialization `label` under `root`, its
    /// directory created; off without a root.
    pub(super) fn new(
        root: Option<&Path>,
        kernel: &str,
        label: &str,
    ) -> Result<Dump, CompileError> {
        let dir = root.map(|r| r.join(kernel).join(label));
        if let Some(dir) = &dir {
            std::fs::create_dir_all(dir)
                .map_err(|e| CompileError::Dump(format!("cannot create {}: {e}", dir.display())))?;
        }
        Ok(Dump { dir })
    }

    /// Whether stages are written.
    pub(super) fn is_on(&self) -> bool {
        self.dir.is_some()
    }

    /// Writes `text` as the file `name`.
    pub(super) fn text(&self, name: &str, text: &str) -> Result<(), CompileError> {
        self.file(name, text.as_bytes())
    }

    /// Writes `contents` as the file `name`.
    pub(super) fn file(&self, name: &str, contents: &[u8]) -> Result<(), CompileError> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let path = dir.join(name);
        std::fs::write(&path, contents)
            .map_err(|e| CompileError::Dump(format!("cannot write {}: {e}", path.display())))
    }
}

/// A dump file: its name and contents.
pub(super) type DumpFile = (String, Vec<u8>);

fn text_file(name: String, text: &str) -> DumpFile {
    (name, text.as_bytes().to_vec())
}

/// A GPU target's stages: LLVM IR before and after optimization, the
/// assembly, and for NVPTX the resource usage `ptxas -v` reports
/// (`ptxas_report`, when ptxas is installed).
pub(super) fn gpu_files(
    out: &Emitted,
    ptxas_report: Option<String>,
) -> Result<Vec<DumpFile>, CompileError> {
    let target = out.module.target;
    let mut files = vec![
        text_file(format!("{target}.ll"), &out.module.llvm_ir),
        text_file(format!("{target}.opt.ll"), &out.module.llvm_ir_opt),
    ];
    match target {
        Target::Nvptx(_) => {
            files.push(text_file(format!("{target}.ptx"), &out.assembly));
            if let Some(usage) = ptxas_report {
                files.push(text_file(format!("{target}.ptxas.txt"), &usage));
            }
        }
        _ => files.push(text_file(format!("{target}.s"), &out.assembly)),
    }
    Ok(files)
}

/// A host level's stages: LLVM IR before and after optimization, and the
/// shared object's disassembly.
pub(super) fn host_files(image: &HostImage) -> Result<Vec<DumpFile>, CompileError> {
    let isa = image.isa();
    let listing =
        tools::disassemble(image.shared_object()).map_err(|e| CompileError::Dump(e.to_string()))?;
    Ok(vec![
        text_file(format!("{isa}.ll"), image.llvm_ir()),
        text_file(format!("{isa}.opt.ll"), image.llvm_ir_opt()),
        text_file(format!("{isa}.s"), &listing),
    ])
}

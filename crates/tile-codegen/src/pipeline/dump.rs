//! `TILE_DUMP`: the stages of one specialization written under
//! `<dir>/<kernel>/<specialization>/` (the list is in the module doc of
//! [`super`]).

use super::PipelineError;
use crate::gpu::Emitted;
use crate::host::HostImage;
use crate::target::Target;
use crate::tools::{self, Tool};
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
    ) -> Result<Dump, PipelineError> {
        let dir = root.map(|r| r.join(kernel).join(label));
        if let Some(dir) = &dir {
            std::fs::create_dir_all(dir).map_err(|e| {
                PipelineError::Dump(format!("cannot create {}: {e}", dir.display()))
            })?;
        }
        Ok(Dump { dir })
    }

    /// Whether stages are written.
    pub(super) fn is_on(&self) -> bool {
        self.dir.is_some()
    }

    /// Writes `text` as the file `name`.
    pub(super) fn text(&self, name: &str, text: &str) -> Result<(), PipelineError> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let path = dir.join(name);
        std::fs::write(&path, text)
            .map_err(|e| PipelineError::Dump(format!("cannot write {}: {e}", path.display())))
    }

    /// A GPU target's stages: LLVM IR before and after optimization, the
    /// assembly, and for NVPTX the resource usage `ptxas -v` reports (when
    /// ptxas is installed).
    pub(super) fn gpu(&self, out: &Emitted) -> Result<(), PipelineError> {
        if !self.is_on() {
            return Ok(());
        }
        let target = out.module.target;
        self.text(&format!("{target}.ll"), &out.module.llvm_ir)?;
        self.text(&format!("{target}.opt.ll"), &out.module.llvm_ir_opt)?;
        match target {
            Target::Nvptx(sm) => {
                self.text(&format!("{target}.ptx"), &out.assembly)?;
                if Tool::Ptxas.find().is_ok() {
                    let usage = tools::ptxas_resource_usage(&out.assembly, sm)
                        .map_err(|e| PipelineError::Dump(e.to_string()))?;
                    self.text(&format!("{target}.ptxas.txt"), &usage)?;
                }
                Ok(())
            }
            _ => self.text(&format!("{target}.s"), &out.assembly),
        }
    }

    /// A host level's stages: LLVM IR before and after optimization, and the
    /// shared object's disassembly.
    pub(super) fn host(&self, image: &HostImage) -> Result<(), PipelineError> {
        if !self.is_on() {
            return Ok(());
        }
        let isa = image.isa();
        self.text(&format!("{isa}.ll"), image.llvm_ir())?;
        self.text(&format!("{isa}.opt.ll"), image.llvm_ir_opt())?;
        let listing = tools::disassemble(image.shared_object())
            .map_err(|e| PipelineError::Dump(e.to_string()))?;
        self.text(&format!("{isa}.s"), &listing)
    }
}

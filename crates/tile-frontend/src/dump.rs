//! The optimization pipeline run at expansion time, and stage dumps:
//! with `TILE_DUMP=<dir>`, each kernel × specialization writes
//! `<dir>/<kernel>/<specialization>/tile-ir.txt` (as lowered),
//! `tile-ir.opt.txt` (after the default pass pipeline); [`crate::backend`]
//! adds the thread-level program and the LLVM stages.

use std::path::Path;
use tile_ir::passes::PassManager;
use tile_ir::Function;

/// The text form of a function, as embedded and dumped.
pub fn ir_text(f: &Function) -> String {
    f.to_string()
}

/// Runs the default pass pipeline on `f`, writing the stages under
/// `dump_dir` when given. Errors are messages for a compile error.
pub fn optimize(f: &mut Function, label: &str, dump_dir: Option<&Path>) -> Result<(), String> {
    let stage_dir = dump_dir.map(|d| d.join(&f.name).join(label));
    if let Some(dir) = &stage_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("TILE_DUMP: cannot create {}: {e}", dir.display()))?;
        write(&dir.join("tile-ir.txt"), &ir_text(f))?;
    }
    PassManager::default_pipeline()
        .run(f, |_, _| {})
        .map_err(|e| format!("internal error in the tile IR pipeline: {e}"))?;
    if let Some(dir) = &stage_dir {
        write(&dir.join("tile-ir.opt.txt"), &ir_text(f))?;
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text)
        .map_err(|e| format!("TILE_DUMP: cannot write {}: {e}", path.display()))
}

//! A kernel's embedded tile IR compiled for one target inside the test
//! process, with the options the macro would give it
//! (`emulation_images::macro_options`): for tests of what the compiler
//! makes of a kernel (registers, spills, image sizes) on targets the build
//! does not embed.

use crate::emulation_images::macro_options;
use tile::meta::KernelInfo;
use tile_codegen::driver::{self, Compiled, RegisterUsage};
use tile_codegen::Target;

/// `info`'s specialization `label` compiled for `target`: the seconds it
/// took and the driver's output, or the error.
pub fn compile(info: &KernelInfo, label: &str, target: Target) -> Result<(f64, Compiled), String> {
    let spec = (info.specializations.iter())
        .find(|s| s.label == label)
        .ok_or_else(|| format!("{} has no specialization {label}", info.name))?;
    let mut func = tile::ir::text::parse_function(spec.ir).map_err(|e| e.to_string())?;
    let options = macro_options(info, spec, target, false);
    let start = std::time::Instant::now();
    let out = driver::compile(&mut func, spec.label, &options).map_err(|e| e.to_string())?;
    Ok((start.elapsed().as_secs_f64(), out))
}

/// The registers and spills of `info`'s specialization `label` on
/// `target`.
pub fn registers(info: &KernelInfo, label: &str, target: Target) -> Result<RegisterUsage, String> {
    let (_, out) = compile(info, label, target)?;
    let usage = out.registers.into_iter().find(|u| u.target == target);
    usage.ok_or_else(|| format!("{}: no register report for {target}", info.name))
}

//! The emulation images a test prepared, found by the key of the device
//! image (PTX text or code object) they were made with.

use std::path::PathBuf;
use tile_emu::EmulatedKernel;

/// The environment variable naming the directory of emulation images.
pub const IMAGES_ENV: &str = "TILE_STANDIN_IMAGES";

/// The environment variable that, set to `check`, makes launches be
/// checked (every refusal as usual) but not run: what a measurement of the
/// host's cost per launch wants (`benches/launch_overhead.rs`), where
/// emulating the kernel would dwarf it.
pub const LAUNCH_ENV: &str = "TILE_STANDIN_LAUNCH";

/// Whether launches run (unless [`LAUNCH_ENV`] is `check`); read once.
pub(crate) fn launches_run() -> bool {
    static RUN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *RUN.get_or_init(|| std::env::var(LAUNCH_ENV).map_or(true, |v| v != "check"))
}

/// The key of a device image's bytes (without a trailing NUL, which PTX
/// handed to a driver carries): 16 hex digits of their FNV-1a hash. The
/// emulation image made with it is `<key>.so` in [`IMAGES_ENV`].
pub fn image_key(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\0").unwrap_or(bytes);
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// Loads the emulation image made with the device image `bytes`, or says
/// why there is none.
pub(crate) fn load(bytes: &[u8]) -> Result<EmulatedKernel, String> {
    let dir = std::env::var_os(IMAGES_ENV)
        .map(PathBuf::from)
        .ok_or_else(|| format!("{IMAGES_ENV} is not set: no emulation images"))?;
    let path = dir.join(format!("{}.so", image_key(bytes)));
    let image = std::fs::read(&path).map_err(|e| {
        format!(
            "no emulation image for this device image ({}: {e})",
            path.display()
        )
    })?;
    // SAFETY: the directory holds images `tile_codegen::emulation::compile`
    // made, put there by the test that set the variable.
    unsafe { EmulatedKernel::load(&image) }.map_err(|e| e.to_string())
}

//! The kernel the call tests launch: the sample vector add, its device
//! image for a target and its emulation image, stored where the stand-ins
//! look.

use std::path::PathBuf;
use tile_codegen::driver::{self, Options};
use tile_codegen::{CodegenOptions, Target};

/// Warps per block: the target's own warps, 32 or 64 lanes each.
pub const WARPS: u32 = 4;
/// Elements per block.
pub const BLOCK: usize = 256;
/// Elements of the vectors.
pub const N: usize = 1000;

/// The sample vector add's device image for `target`, and its emulation
/// image.
pub fn vector_add(target: Target) -> (Vec<u8>, Vec<u8>) {
    let mut func = tile_ir::samples::vector_add(BLOCK).unwrap();
    driver::optimize(&mut func).unwrap();
    let options = Options {
        targets: vec![target],
        num_warps: WARPS,
        codegen: CodegenOptions::default(),
        dump_dir: None,
        cache: None,
        max_threads: None,
        target_warps: Vec::new(),
        target_stages: Vec::new(),
        num_stages: None,
    };
    let built = driver::emulate(&func, "BLOCK=256", target, &options).unwrap();
    (built.device.bytes, built.emulation.shared_object)
}

/// The threads of a block of the sample on `target`: 128 on NVIDIA, 256 on
/// CDNA's 64-lane wavefronts.
pub fn block_threads(target: Target) -> u32 {
    target.block_threads(WARPS)
}

/// An empty directory of emulation images, named by the stand-ins'
/// variable for this process.
pub fn images_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tile-standin-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::env::set_var(tile_standin::IMAGES_ENV, &dir);
    dir
}

/// Stores the emulation image of `device_image` in `dir`.
pub fn store(dir: &std::path::Path, device_image: &[u8], emulation: &[u8]) {
    let key = tile_standin::image_key(device_image);
    std::fs::write(dir.join(format!("{key}.so")), emulation).unwrap();
}

/// The inputs `x[i] = i`, `y[i] = i / 2`, and the sum the kernel must
/// produce.
pub fn inputs() -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let xs: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let ys: Vec<f32> = (0..N).map(|i| 0.5 * i as f32).collect();
    let sum = (0..N).map(|i| 1.5 * i as f32).collect();
    (xs, ys, sum)
}

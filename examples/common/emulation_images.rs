//! Emulation images of kernels' GPU images for the driver stand-ins
//! (`tile-standin`), which run a launch through the emulation image stored
//! under the key of the image the runtime loaded: each rebuilt from its
//! specialization's embedded tile IR, checked to equal the embedded image,
//! and written into a directory. It needs LLVM, so it runs where `tile`
//! builds.

use std::path::Path;
use tile::meta::{KernelInfo, SpecInfo};
use tile_codegen::driver::{self, Options};
use tile_codegen::{CodegenOptions, Target};

/// Writes the emulation image of every specialization's device image for
/// each of `targets` into `dir`, under the key the stand-ins look it up
/// by; returns how many.
pub fn write_images(dir: &Path, kernels: &[&KernelInfo], targets: &[Target]) -> usize {
    let mut written = 0;
    for info in kernels {
        for spec in info.specializations {
            for &target in targets {
                let name = target.to_string();
                let Some(embedded) = spec.images.iter().find(|i| i.target == name) else {
                    continue;
                };
                let func = tile::ir::text::parse_function(spec.ir).expect("the embedded tile IR");
                // A kernel compiled with `tma` says so in its images: the
                // tensor maps they take.
                let ptx = std::str::from_utf8(embedded.bytes).unwrap_or_default();
                let tma = !tile_abi::tma::maps_of_ptx(ptx)
                    .unwrap_or_default()
                    .is_empty();
                let options = macro_options(info, spec, target, tma);
                let built = driver::emulate(&func, spec.label, target, &options)
                    .unwrap_or_else(|e| panic!("{e}"));
                assert!(
                    built.device.bytes == embedded.bytes,
                    "{} ({}): the {name} image rebuilt from the embedded tile IR differs from the embedded one",
                    info.name,
                    spec.label
                );
                let key = tile_standin::image_key(embedded.bytes);
                std::fs::write(
                    dir.join(format!("{key}.so")),
                    &built.emulation.shared_object,
                )
                .expect("writing an image");
                written += 1;
            }
        }
    }
    written
}

/// The driver options the macro gives specialization `spec` of `info` on
/// `target` (`tma`: its images take tensor maps): its warps and stages
/// there and its math, with no dump and no cache.
pub fn macro_options(info: &KernelInfo, spec: &SpecInfo, target: Target, tma: bool) -> Options {
    options_with_settings_of(info, spec, target, &target.to_string(), tma)
}

/// [`macro_options`] for `target` with the warps and stages the kernel
/// asks for on the target named `settings` (a generic AMD processor built
/// with a member's settings).
pub fn options_with_settings_of(
    info: &KernelInfo,
    spec: &SpecInfo,
    target: Target,
    settings: &str,
    tma: bool,
) -> Options {
    Options {
        targets: vec![target],
        num_warps: info.spec_warps_on(spec, settings),
        codegen: CodegenOptions {
            tma,
            fast_math: info.fast_math,
            approx_math: info.approx_math,
            ..CodegenOptions::default()
        },
        dump_dir: None,
        cache: None,
        max_threads: None,
        target_warps: Vec::new(),
        target_stages: Vec::new(),
        num_stages: info.num_stages_on(settings),
    }
}

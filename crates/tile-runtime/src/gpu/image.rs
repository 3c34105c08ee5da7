//! The choices made before a GPU launch — pure functions, testable without
//! a GPU: which embedded image a device runs, and what a status record the
//! kernel left means.

use crate::error::Error;
use crate::kernel::{Image, ImageKind, KernelSpec};
use tile_abi::{FaultCode, Status};
use tile_ir::assertion::Assertion;

/// The error `status` reports for `spec` on `device`, if any.
pub(crate) fn status_error(status: &Status, spec: &KernelSpec, device: &str) -> Option<Error> {
    if status.is_ok() {
        return None;
    }
    let op = usize::try_from(status.check)
        .ok()
        .and_then(|i| spec.bounds_checks.get(i))
        .map_or_else(
            || {
                format!(
                    "an unknown check (the kernel has {})",
                    spec.bounds_checks.len()
                )
            },
            |op| op.to_string(),
        );
    let fault = match FaultCode::from_u32(status.code) {
        Some(FaultCode::NonPositiveStep) => {
            format!("the step {} of a loop is not positive", status.index[0])
        }
        // A layout view's check records its base, not a partition index.
        Some(FaultCode::OutsideTensor) if op.contains("lview_") => format!(
            "the layout view at base {} reaches outside the tensor's element space or past an edge tile's extent (use the masked form)",
            status.index[0]
        ),
        Some(FaultCode::OutsideTensor) => format!(
            "partition index {:?} reaches outside the tensor",
            status.index
        ),
        Some(FaultCode::IndexOutside) => format!(
            "index {:?} is outside the tensor (mask it off)",
            status.index
        ),
        Some(FaultCode::Assert) => assertion_failure(status, spec),
        Some(FaultCode::ViewWindow) => window_failure(&status.index),
        Some(FaultCode::TensorIndex) => format!(
            "tensor index {} is outside the tensor array of {} tensors",
            status.index[0], status.index[1]
        ),
        _ => format!(
            "status code {} with values {:?}, which GPU code does not write",
            status.code, status.index
        ),
    };
    Some(Error::DeviceCheck {
        kernel: spec.name.to_string(),
        device: device.to_string(),
        program: status.program,
        check: status.check,
        op,
        fault,
    })
}

/// What a failed window check says (its values: offsets, then extents).
fn window_failure(values: &[i64]) -> String {
    format!(
        "a partition view's window at a negative offset or of a negative extent (its offsets, then extents, first four: {values:?}): each must be at least 0"
    )
}

/// What a failed `device_assert!` says: its message with the values the
/// record carries (its number first), from the kernel's IR.
fn assertion_failure(status: &Status, spec: &KernelSpec) -> String {
    let [id, values @ ..] = status.index;
    let assertion = tile_ir::text::parse_function(spec.ir)
        .ok()
        .zip(u32::try_from(id).ok())
        .and_then(|(func, id)| Assertion::find(&func, id));
    match assertion {
        Some(a) => format!("assertion failed: {}", a.report(&values)),
        None => format!("assertion {id} failed, which the kernel's IR does not have"),
    }
}

/// The PTX image for a device of compute capability `major.minor`: the one
/// for the highest `sm_XY` not above it, an architecture-specific
/// `sm_XYa` (which runs on that architecture only) before its `sm_XY`.
pub(crate) fn choose_ptx(
    spec: &KernelSpec,
    device: &str,
    (major, minor): (u32, u32),
) -> Result<&'static Image, Error> {
    let capability = major * 10 + minor;
    spec.images
        .iter()
        .filter(|image| image.kind == ImageKind::Ptx)
        .filter_map(|image| Some((sm_number(image.target)?, image)))
        .filter(|&((sm, specific), _)| sm == capability || (sm < capability && !specific))
        .max_by_key(|&(sm, _)| sm)
        .map(|(_, image)| image)
        .ok_or_else(|| {
            no_image(
                spec,
                device,
                format!("compute capability {major}.{minor}"),
                ImageKind::Ptx,
            )
        })
}

/// The HSACO image for a device whose `gcnArchName` is `arch` (features
/// after a `:`, as in `gfx90a:sramecc+:xnack-`, are ignored): the image of
/// its own processor, else the one of its family's generic processor
/// (`gfx9-4-generic` on a gfx950, [`tile_abi::amd_generic`]).
pub(crate) fn choose_hsaco(
    spec: &KernelSpec,
    device: &str,
    arch: &str,
) -> Result<&'static Image, Error> {
    let gfx = arch.split(':').next().unwrap_or(arch);
    let hsaco = |target: &str| {
        spec.images
            .iter()
            .find(|image| image.kind == ImageKind::Hsaco && image.target == target)
    };
    hsaco(gfx)
        .or_else(|| tile_abi::amd_generic::family_of(gfx).and_then(hsaco))
        .ok_or_else(|| {
            no_image(
                spec,
                device,
                format!("architecture {gfx}"),
                ImageKind::Hsaco,
            )
        })
}

/// `(80, false)` for `sm_80`, `(90, true)` for the architecture-specific
/// `sm_90a`.
fn sm_number(target: &str) -> Option<(u32, bool)> {
    let number = target.strip_prefix("sm_")?;
    match number.strip_suffix('a') {
        Some(specific) => Some((specific.parse().ok()?, true)),
        None => Some((number.parse().ok()?, false)),
    }
}

fn no_image(spec: &KernelSpec, device: &str, wanted: String, kind: ImageKind) -> Error {
    let compiled: Vec<&str> = spec
        .images
        .iter()
        .filter(|image| image.kind == kind)
        .map(|image| image.target)
        .collect();
    Error::NoImage {
        kernel: spec.name.to_string(),
        device: device.to_string(),
        wanted,
        compiled: if compiled.is_empty() {
            "none".to_string()
        } else {
            compiled.join(", ")
        },
    }
}
/// An error unless `image`'s blocks are whole warps of its target (64-lane
/// wavefronts on CDNA, `gfx9*`; 32 lanes elsewhere), at most 1,024
/// threads: a launch runs every program instance with these threads.
pub(super) fn check_block_threads(image: &Image) -> Result<(), String> {
    let lanes = if image.target.starts_with("gfx9") {
        64
    } else {
        32
    };
    let threads = image.block_threads;
    if threads == 0 || threads > 1024 || !threads.is_multiple_of(lanes) {
        return Err(format!(
            "the {} image's blocks are {threads} threads; a block there holds 1 to {} warps of {lanes}",
            image.target,
            1024 / lanes
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(images: &'static [Image]) -> KernelSpec {
        KernelSpec {
            name: "vadd",
            specialization: "BLOCK=1024",
            ir: "kernel @vadd(%n: i32) {\n  %c = full false : tile<4xbool>\n  assert 0 \"n = {}\" %c, %n\n}",
            num_warps: 4,
            images,
            bounds_checks: &[
                "`%2 = load %1, %0` (a view of `x`)",
                "`out.store(..)` at src/vadd.rs:9:30 (`store %5, %4, %0`, a view of `out`)",
                "`%3 = lview_load %2` (a view of `x`)",
            ],
            host_checks: &[],
        }
    }

    const fn image(kind: ImageKind, target: &'static str) -> Image {
        Image {
            kind,
            target,
            bytes: b"",
            shared_memory_bytes: 0,
            block_threads: 128,
        }
    }

    static IMAGES: [Image; 6] = [
        image(ImageKind::Ptx, "sm_80"),
        image(ImageKind::Ptx, "sm_86"),
        image(ImageKind::Ptx, "sm_89"),
        image(ImageKind::Ptx, "sm_90"),
        image(ImageKind::Hsaco, "gfx90a"),
        image(ImageKind::Hsaco, "gfx942"),
    ];

    #[test]
    fn blocks_are_whole_warps_of_the_target() {
        let with = |target, block_threads| Image {
            block_threads,
            ..image(ImageKind::Hsaco, target)
        };
        assert_eq!(check_block_threads(&with("sm_80", 96)), Ok(()));
        assert_eq!(check_block_threads(&with("gfx1100", 96)), Ok(()));
        assert_eq!(check_block_threads(&with("gfx942", 256)), Ok(()));
        assert_eq!(
            check_block_threads(&with("gfx942", 96)).unwrap_err(),
            "the gfx942 image's blocks are 96 threads; a block there holds 1 to 16 warps of 64"
        );
        assert_eq!(
            check_block_threads(&with("sm_90", 2048)).unwrap_err(),
            "the sm_90 image's blocks are 2048 threads; a block there holds 1 to 32 warps of 32"
        );
        assert!(check_block_threads(&with("gfx90a", 0)).is_err());
    }

    #[test]
    fn ptx_is_the_highest_sm_not_above_the_capability() {
        let spec = spec(&IMAGES);
        let pick = |cc| choose_ptx(&spec, "cuda:0", cc).map(|i| i.target);
        assert_eq!(pick((8, 0)).unwrap(), "sm_80");
        assert_eq!(pick((8, 6)).unwrap(), "sm_86");
        assert_eq!(pick((8, 7)).unwrap(), "sm_86");
        assert_eq!(pick((8, 9)).unwrap(), "sm_89");
        assert_eq!(pick((9, 0)).unwrap(), "sm_90");
        assert_eq!(pick((12, 0)).unwrap(), "sm_90");
        assert_eq!(
            pick((7, 5)).unwrap_err().to_string(),
            "kernel `vadd` has no image for device cuda:0 (compute capability 7.5); compiled targets: sm_80, sm_86, sm_89, sm_90"
        );
        let empty = self::spec(&[]);
        assert_eq!(
            choose_ptx(&empty, "cuda:1", (9, 0)).unwrap_err().to_string(),
            "kernel `vadd` has no image for device cuda:1 (compute capability 9.0); compiled targets: none"
        );
    }

    /// `sm_90a`'s image (`wgmma`) runs on compute capability 9.0 alone,
    /// before `sm_90`'s; later devices take `sm_90`'s PTX.
    #[test]
    fn an_architecture_specific_image_runs_on_its_architecture_only() {
        static WITH_90A: [Image; 3] = [
            image(ImageKind::Ptx, "sm_80"),
            image(ImageKind::Ptx, "sm_90a"),
            image(ImageKind::Ptx, "sm_90"),
        ];
        let spec = spec(&WITH_90A);
        let pick = |cc| choose_ptx(&spec, "cuda:0", cc).map(|i| i.target);
        assert_eq!(pick((9, 0)).unwrap(), "sm_90a");
        assert_eq!(pick((10, 0)).unwrap(), "sm_90");
        assert_eq!(pick((8, 9)).unwrap(), "sm_80");
        let only_90a = self::spec(&WITH_90A[1..2]);
        assert!(choose_ptx(&only_90a, "cuda:0", (12, 0)).is_err());
    }

    /// Blackwell's architecture-specific images run on their own chip:
    /// sm_100a on 10.0 (B200), sm_103a on 10.3 (B300), sm_120a on 12.0
    /// (RTX 50); any other takes the highest plain PTX (DGX Spark's 12.1
    /// runs sm_90's).
    #[test]
    fn blackwell_takes_its_own_image_or_plain_ptx() {
        static BLACKWELL: [Image; 5] = [
            image(ImageKind::Ptx, "sm_90"),
            image(ImageKind::Ptx, "sm_90a"),
            image(ImageKind::Ptx, "sm_100a"),
            image(ImageKind::Ptx, "sm_103a"),
            image(ImageKind::Ptx, "sm_120a"),
        ];
        let spec = spec(&BLACKWELL);
        let pick = |cc| choose_ptx(&spec, "cuda:0", cc).map(|i| i.target);
        assert_eq!(pick((10, 0)).unwrap(), "sm_100a");
        assert_eq!(pick((10, 3)).unwrap(), "sm_103a");
        assert_eq!(pick((12, 0)).unwrap(), "sm_120a");
        assert_eq!(pick((12, 1)).unwrap(), "sm_90");
        assert_eq!(pick((9, 0)).unwrap(), "sm_90a");
    }

    #[test]
    fn hsaco_matches_the_gfx_name_exactly() {
        let spec = spec(&IMAGES);
        let pick = |arch| choose_hsaco(&spec, "hip:0", arch).map(|i| i.target);
        assert_eq!(pick("gfx90a:sramecc+:xnack-").unwrap(), "gfx90a");
        assert_eq!(pick("gfx942").unwrap(), "gfx942");
        assert_eq!(
            pick("gfx1100").unwrap_err().to_string(),
            "kernel `vadd` has no image for device hip:0 (architecture gfx1100); compiled targets: gfx90a, gfx942"
        );
        assert!(pick("gfx90").is_err());
    }

    /// A device without an image of its own processor takes its family's
    /// generic one; its own wins where both are there.
    #[test]
    fn hsaco_falls_back_to_the_familys_generic_image() {
        static WITH_GENERIC: [Image; 4] = [
            image(ImageKind::Hsaco, "gfx942"),
            image(ImageKind::Hsaco, "gfx9-4-generic"),
            image(ImageKind::Hsaco, "gfx1100"),
            image(ImageKind::Hsaco, "gfx12-generic"),
        ];
        let spec = spec(&WITH_GENERIC);
        let pick = |arch| choose_hsaco(&spec, "hip:0", arch).map(|i| i.target);
        assert_eq!(pick("gfx942:sramecc+:xnack-").unwrap(), "gfx942");
        assert_eq!(pick("gfx950:sramecc+:xnack-").unwrap(), "gfx9-4-generic");
        assert_eq!(pick("gfx1201").unwrap(), "gfx12-generic");
        assert_eq!(pick("gfx1100").unwrap(), "gfx1100");
        assert_eq!(
            pick("gfx1101").unwrap_err().to_string(),
            "kernel `vadd` has no image for device hip:0 (architecture gfx1101); compiled targets: gfx942, gfx9-4-generic, gfx1100, gfx12-generic"
        );
        let wave64 = Image {
            block_threads: 96,
            ..image(ImageKind::Hsaco, "gfx9-4-generic")
        };
        assert!(check_block_threads(&wave64).is_err());
    }

    #[test]
    fn a_zero_status_is_success_and_a_failed_check_names_op_and_index() {
        let spec = spec(&IMAGES);
        let ok = Status::default();
        assert_eq!(
            status_error(&ok, &spec, "cuda:0").map(|e| e.to_string()),
            None
        );
        let mut status = Status {
            code: FaultCode::OutsideTensor as u32,
            check: 1,
            index: [3, -1, 0, 0],
            program: [2, 0, 0],
            pad: 0,
        };
        assert_eq!(
            status_error(&status, &spec, "cuda:0").unwrap().to_string(),
            "kernel `vadd` failed on device cuda:0: program (2, 0, 0): check 1: `out.store(..)` at src/vadd.rs:9:30 (`store %5, %4, %0`, a view of `out`): partition index [3, -1, 0, 0] reaches outside the tensor"
        );
        status.check = 9;
        assert_eq!(
            status_error(&status, &spec, "hip:0").unwrap().to_string(),
            "kernel `vadd` failed on device hip:0: program (2, 0, 0): check 9: an unknown check (the kernel has 3): partition index [3, -1, 0, 0] reaches outside the tensor"
        );
        status.check = 2;
        assert_eq!(
            status_error(&status, &spec, "cuda:0").unwrap().to_string(),
            "kernel `vadd` failed on device cuda:0: program (2, 0, 0): check 2: `%3 = lview_load %2` (a view of `x`): the layout view at base 3 reaches outside the tensor's element space or past an edge tile's extent (use the masked form)"
        );
        status.code = FaultCode::NonPositiveStep as u32;
        status.index = [0; 4];
        status.check = 0;
        assert_eq!(
            status_error(&status, &spec, "cuda:0").unwrap().to_string(),
            "kernel `vadd` failed on device cuda:0: program (2, 0, 0): check 0: `%2 = load %1, %0` (a view of `x`): the step 0 of a loop is not positive"
        );
        status.code = FaultCode::Assert as u32;
        status.index = [0, -7, 0, 0];
        assert!(status_error(&status, &spec, "cuda:0")
            .unwrap()
            .to_string()
            .ends_with(": assertion failed: n = -7"));
        status.index = [1, -7, 0, 0];
        assert!(status_error(&status, &spec, "cuda:0")
            .unwrap()
            .to_string()
            .ends_with(": assertion 1 failed, which the kernel's IR does not have"));
        status.index = [0; 4];
        status.code = 4;
        assert!(status_error(&status, &spec, "cuda:0")
            .unwrap()
            .to_string()
            .ends_with("status code 4 with values [0, 0, 0, 0], which GPU code does not write"));
    }
}

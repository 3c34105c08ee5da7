//! The text of a compiled specialization's stages, as `#[tile_kernel]`
//! embeds it: what `kernel::<..>::ir()`, `thread_program(target)`,
//! `ptx(target)` and `asm(target)` return, for reading and for snapshot
//! tests (`insta::assert_snapshot!(kernel::<64>::ptx("sm_80")?)`).
//!
//! The tile IR and the PTX are always there (they are what runs). The
//! thread-level programs and the AMDGPU assembly are extra text, as large
//! as the images for the examples: `tile`'s `stage-texts` feature (on by
//! default) keeps them; without it [`__stage_text!`](crate::__stage_text)
//! drops them from the generated code and they are `None`.

/// `Some(text)`, or `None` without the `stage-texts` feature so that the
/// text stays out of the binary; for the code `#[tile_kernel]` generates.
#[cfg(feature = "stage-texts")]
#[doc(hidden)]
#[macro_export]
macro_rules! __stage_text {
    ($text:literal) => {
        ::core::option::Option::Some($text)
    };
}

/// `Some(text)`, or `None` without the `stage-texts` feature so that the
/// text stays out of the binary; for the code `#[tile_kernel]` generates.
#[cfg(not(feature = "stage-texts"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __stage_text {
    ($text:literal) => {
        ::core::option::Option::None
    };
}

use crate::meta::{KernelInfo, SpecInfo};
use std::fmt;

/// One target's stages as text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TargetText {
    /// The target, as the attribute names it (`sm_80`, `gfx942`,
    /// `x86_64-v3`).
    pub target: &'static str,
    /// The thread-level program the GPU image was compiled from (`None`
    /// for host code, and without `tile`'s `stage-texts` feature).
    pub thread_program: Option<&'static str>,
    /// The assembly: the PTX of an `sm_*` target (the same text as its
    /// image), the AMDGPU assembly of a `gfx*` one (`None` without `tile`'s
    /// `stage-texts` feature); `None` for host code, which is embedded as a
    /// shared object only.
    pub assembly: Option<&'static str>,
}

/// A stage that has a text per target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The thread-level program (GPU targets).
    ThreadProgram,
    /// PTX (`sm_*` targets).
    Ptx,
    /// Assembly (GPU targets).
    Assembly,
}

impl Stage {
    /// This stage's text in `text`, if it has one.
    fn of(self, text: &TargetText) -> Option<&'static str> {
        match self {
            Stage::ThreadProgram => text.thread_program,
            Stage::Ptx if text.target.starts_with("sm_") => text.assembly,
            Stage::Ptx => None,
            Stage::Assembly => text.assembly,
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::ThreadProgram => "thread-level program",
            Stage::Ptx => "PTX",
            Stage::Assembly => "assembly",
        })
    }
}

impl KernelInfo {
    /// The text of `stage` for `target` in `spec` (one of this kernel's
    /// specializations), or an error naming the targets that have it.
    pub fn stage(
        &self,
        spec: &SpecInfo,
        stage: Stage,
        target: &str,
    ) -> Result<&'static str, NoStage> {
        spec.texts
            .iter()
            .find(|t| t.target == target)
            .and_then(|t| stage.of(t))
            .ok_or_else(|| NoStage {
                kernel: self.name,
                specialization: spec.label,
                stage,
                target: target.to_string(),
                available: spec
                    .texts
                    .iter()
                    .filter(|t| stage.of(t).is_some())
                    .map(|t| t.target)
                    .collect(),
                compiled: spec.texts.iter().map(|t| t.target).collect(),
            })
    }
}

/// A stage asked for a target that has no text of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoStage {
    /// The kernel's name.
    pub kernel: &'static str,
    /// The specialization's label.
    pub specialization: &'static str,
    /// The stage asked for.
    pub stage: Stage,
    /// The target asked for.
    pub target: String,
    /// The targets that have this stage.
    pub available: Vec<&'static str>,
    /// Every target the specialization was compiled for.
    pub compiled: Vec<&'static str>,
}

impl fmt::Display for NoStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kernel, spec, stage, target) =
            (self.kernel, self.specialization, self.stage, &self.target);
        write!(
            f,
            "kernel `{kernel}` ({spec}) has no {stage} for `{target}`"
        )?;
        if !self.compiled.iter().any(|t| t == target) {
            let compiled = list(&self.compiled);
            return write!(f, ": it was not compiled for it (its targets: {compiled}; `targets = \"...\"` in the attribute or `TILE_TARGETS` choose them)");
        }
        let gpu = target.starts_with("sm_") || target.starts_with("gfx");
        if gpu && stage != Stage::Ptx {
            // Every GPU image has both texts unless they were left out.
            return write!(f, ": the kernel's crate was built with `tile`'s `stage-texts` feature off, which leaves thread-level programs and AMDGPU assembly out of the binary (the feature is on by default)");
        }
        if self.available.is_empty() {
            write!(f, "; none of its targets has one, a {stage} is embedded for GPU targets only (add one with `targets = \"...\"`)")?;
        } else {
            write!(f, "; the targets with one are: {}", list(&self.available))?;
        }
        if gpu {
            write!(f, "; a `gfx*` target's text is its `asm`")
        } else if stage == Stage::ThreadProgram {
            write!(
                f,
                "; host code is compiled from the tile IR (`ir()`), with no thread-level program"
            )
        } else {
            write!(
                f,
                "; host code is embedded as a shared object (`TILE_DUMP` writes its disassembly)"
            )
        }
    }
}

impl std::error::Error for NoStage {}

fn list(targets: &[&str]) -> String {
    if targets.is_empty() {
        "none".to_string()
    } else {
        targets.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXTS: [TargetText; 3] = [
        TargetText {
            target: "sm_80",
            thread_program: Some("thread sm_80"),
            assembly: Some("ptx sm_80"),
        },
        TargetText {
            target: "gfx942",
            thread_program: Some("thread gfx942"),
            assembly: Some("asm gfx942"),
        },
        TargetText {
            target: "x86_64-v3",
            thread_program: None,
            assembly: None,
        },
    ];

    const SPEC: SpecInfo = SpecInfo {
        label: "BLOCK=64",
        values: &[64],
        num_warps: None,
        ir: "ir",
        images: &[],
        texts: &TEXTS,
        bounds_checks: &[],
        host_checks: &[],
    };

    const INFO: KernelInfo = KernelInfo {
        name: "copy",
        const_params: &["BLOCK"],
        params: &[],
        num_warps: 4,
        target_warps: &[],
        num_stages: None,
        target_stages: &[],
        fast_math: false,
        approx_math: false,
        targets: &[],
        specializations: &[SPEC],
    };

    #[test]
    fn each_stage_comes_from_its_target() {
        let stage = |s, t| INFO.stage(&SPEC, s, t);
        assert_eq!(stage(Stage::ThreadProgram, "gfx942"), Ok("thread gfx942"));
        assert_eq!(stage(Stage::Ptx, "sm_80"), Ok("ptx sm_80"));
        assert_eq!(stage(Stage::Assembly, "sm_80"), Ok("ptx sm_80"));
        assert_eq!(stage(Stage::Assembly, "gfx942"), Ok("asm gfx942"));
    }

    #[test]
    fn missing_stages_name_the_targets_that_have_them() {
        let error = |s, t| INFO.stage(&SPEC, s, t).unwrap_err().to_string();
        assert_eq!(
            error(Stage::Ptx, "gfx942"),
            "kernel `copy` (BLOCK=64) has no PTX for `gfx942`; the targets with one are: sm_80; a `gfx*` target's text is its `asm`"
        );
        assert_eq!(
            error(Stage::ThreadProgram, "x86_64-v3"),
            "kernel `copy` (BLOCK=64) has no thread-level program for `x86_64-v3`; the targets with one are: sm_80, gfx942; host code is compiled from the tile IR (`ir()`), with no thread-level program"
        );
        assert_eq!(
            error(Stage::Assembly, "x86_64-v3"),
            "kernel `copy` (BLOCK=64) has no assembly for `x86_64-v3`; the targets with one are: sm_80, gfx942; host code is embedded as a shared object (`TILE_DUMP` writes its disassembly)"
        );
        assert_eq!(
            error(Stage::Ptx, "sm_90"),
            "kernel `copy` (BLOCK=64) has no PTX for `sm_90`: it was not compiled for it (its targets: sm_80, gfx942, x86_64-v3; `targets = \"...\"` in the attribute or `TILE_TARGETS` choose them)"
        );
    }

    #[test]
    fn texts_left_out_name_the_feature() {
        const LEFT_OUT: [TargetText; 1] = [TargetText {
            target: "sm_80",
            thread_program: None,
            assembly: Some("ptx sm_80"),
        }];
        let spec = SpecInfo {
            texts: &LEFT_OUT,
            ..SPEC
        };
        assert_eq!(INFO.stage(&spec, Stage::Ptx, "sm_80"), Ok("ptx sm_80"));
        let error = INFO
            .stage(&spec, Stage::ThreadProgram, "sm_80")
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "kernel `copy` (BLOCK=64) has no thread-level program for `sm_80`: the kernel's crate was built with `tile`'s `stage-texts` feature off, which leaves thread-level programs and AMDGPU assembly out of the binary (the feature is on by default)"
        );
    }

    #[test]
    fn a_kernel_without_gpu_targets_says_how_to_get_one() {
        let spec = SpecInfo {
            texts: &TEXTS[2..],
            ..SPEC
        };
        let error = INFO
            .stage(&spec, Stage::ThreadProgram, "x86_64-v3")
            .unwrap_err();
        assert!(error.available.is_empty());
        assert_eq!(
            error.to_string(),
            "kernel `copy` (BLOCK=64) has no thread-level program for `x86_64-v3`; none of its targets has one, a thread-level program is embedded for GPU targets only (add one with `targets = \"...\"`); host code is compiled from the tile IR (`ir()`), with no thread-level program"
        );
    }
}

//! The instruction-set levels host code is compiled for, and which of them
//! this CPU runs.

use std::fmt;

/// An instruction-set level of compiled host code (Linux shared objects).
///
/// Code is compiled for fixed levels rather than for the building machine's
/// own CPU, so that a binary runs on any CPU of its architecture: the CPU
/// device picks the best level the running CPU supports
/// ([`HostIsa::runs_here`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HostIsa {
    /// x86-64-v3: AVX2, FMA, BMI1/2, F16C, LZCNT, MOVBE (Haswell, Zen and
    /// later).
    X86_64V3,
    /// Baseline x86-64 (SSE2): every x86-64 CPU.
    X86_64,
    /// AArch64 with NEON (ARMv8-A): every 64-bit ARM CPU.
    Aarch64,
}

impl HostIsa {
    /// Every level, best first.
    pub const ALL: [HostIsa; 3] = [HostIsa::X86_64V3, HostIsa::X86_64, HostIsa::Aarch64];

    /// The name of images compiled for this level, e.g. `x86_64-v3`.
    pub fn name(self) -> &'static str {
        match self {
            HostIsa::X86_64V3 => "x86_64-v3",
            HostIsa::X86_64 => "x86_64",
            HostIsa::Aarch64 => "aarch64",
        }
    }

    /// The level named `name` (see [`HostIsa::name`]).
    pub fn from_name(name: &str) -> Option<HostIsa> {
        HostIsa::ALL.into_iter().find(|isa| isa.name() == name)
    }

    /// The LLVM target triple.
    pub fn llvm_triple(self) -> &'static str {
        match self {
            HostIsa::X86_64V3 | HostIsa::X86_64 => "x86_64-unknown-linux-gnu",
            HostIsa::Aarch64 => "aarch64-unknown-linux-gnu",
        }
    }

    /// The LLVM CPU name.
    pub fn llvm_cpu(self) -> &'static str {
        match self {
            HostIsa::X86_64V3 => "x86-64-v3",
            HostIsa::X86_64 => "x86-64",
            HostIsa::Aarch64 => "generic",
        }
    }

    /// The LLVM feature string added to the CPU's.
    pub fn llvm_features(self) -> &'static str {
        match self {
            HostIsa::X86_64V3 | HostIsa::X86_64 => "",
            HostIsa::Aarch64 => "+neon",
        }
    }

    /// The levels to compile for on the machine this code was built for:
    /// x86-64-v3 and baseline x86-64 on x86-64 Linux, AArch64 on AArch64
    /// Linux, none elsewhere (the CPU device then interprets).
    pub fn for_this_architecture() -> Vec<HostIsa> {
        if !cfg!(target_os = "linux") {
            return Vec::new();
        }
        HostIsa::ALL
            .into_iter()
            .filter(|isa| isa.architecture() == std::env::consts::ARCH)
            .collect()
    }

    /// The best level among [`HostIsa::for_this_architecture`] that this CPU
    /// runs.
    pub fn best_here() -> Option<HostIsa> {
        HostIsa::for_this_architecture()
            .into_iter()
            .find(|isa| isa.runs_here())
    }

    /// The architecture, as `std::env::consts::ARCH` names it.
    pub fn architecture(self) -> &'static str {
        match self {
            HostIsa::X86_64V3 | HostIsa::X86_64 => "x86_64",
            HostIsa::Aarch64 => "aarch64",
        }
    }

    /// Whether code of this level runs on this CPU (and operating system):
    /// the architecture matches and, for x86-64-v3, every feature of the
    /// level is detected.
    pub fn runs_here(self) -> bool {
        if !cfg!(target_os = "linux") || self.architecture() != std::env::consts::ARCH {
            return false;
        }
        match self {
            HostIsa::X86_64V3 => x86_64_v3_detected(),
            HostIsa::X86_64 | HostIsa::Aarch64 => true,
        }
    }
}

impl fmt::Display for HostIsa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(target_arch = "x86_64")]
fn x86_64_v3_detected() -> bool {
    use std::arch::is_x86_feature_detected as has;
    // x86-64-v2 ...
    has!("cmpxchg16b")
        && has!("popcnt")
        && has!("sse3")
        && has!("ssse3")
        && has!("sse4.1")
        && has!("sse4.2")
        // ... and v3.
        && has!("avx")
        && has!("avx2")
        && has!("bmi1")
        && has!("bmi2")
        && has!("f16c")
        && has!("fma")
        && has!("lzcnt")
        && has!("movbe")
        && has!("xsave")
}

#[cfg(not(target_arch = "x86_64"))]
fn x86_64_v3_detected() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for isa in HostIsa::ALL {
            assert_eq!(HostIsa::from_name(isa.name()), Some(isa));
        }
        assert_eq!(HostIsa::from_name("x86_64-v4"), None);
    }

    #[test]
    fn the_levels_of_this_architecture_include_one_that_runs_here() {
        let levels = HostIsa::for_this_architecture();
        if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
            assert_eq!(levels, [HostIsa::X86_64V3, HostIsa::X86_64]);
            assert!(HostIsa::X86_64.runs_here());
            assert!(!HostIsa::Aarch64.runs_here());
        }
        if !levels.is_empty() {
            assert!(HostIsa::best_here().is_some());
        }
    }
}

//! LLVM's generic AMD processors: one code object for a family of GPUs
//! (`gfx9-4-generic` for CDNA 3 and 4, `gfx11-generic` for RDNA 3,
//! `gfx12-generic` for RDNA 4), compiled for the instructions every member
//! has. The compiler builds them like any processor; the runtime loads
//! one on a device that has no image of its own processor.
//!
//! The families are LLVM's "Generic Processors" table (AMDGPUUsage); a
//! code object of one carries the family's machine and generic version in
//! its ELF flags (code object V6), which the ROCm loader checks against
//! the device.

/// Each generic processor and the processors its code runs on.
pub const FAMILIES: &[(&str, &[&str])] = &[
    ("gfx9-4-generic", &["gfx942", "gfx950"]),
    (
        "gfx11-generic",
        &[
            "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153",
        ],
    ),
    ("gfx12-generic", &["gfx1200", "gfx1201"]),
];

/// The generic processor whose code runs on `gfx` (a processor name
/// without features: `gfx950`), if one does.
pub fn family_of(gfx: &str) -> Option<&'static str> {
    FAMILIES
        .iter()
        .find(|(_, members)| members.contains(&gfx))
        .map(|(generic, _)| *generic)
}

/// The processors the code of generic processor `gfx` runs on (none when
/// `gfx` is not a generic processor).
pub fn members(gfx: &str) -> &'static [&'static str] {
    FAMILIES
        .iter()
        .find(|(generic, _)| *generic == gfx)
        .map_or(&[], |(_, members)| members)
}

/// A per-target setting (warps, stages) for the target named `target`, by
/// `own`, which gives a target's own: the target's, else, for a generic
/// processor, that of the first of its members that has one (its code runs
/// on them: `num_warps(gfx942 = 16)` applies to `gfx9-4-generic`).
pub fn setting<T>(target: &str, own: impl Fn(&str) -> Option<T>) -> Option<T> {
    own(target).or_else(|| members(target).iter().find_map(|member| own(member)))
}

/// Whether `gfx` names a generic processor.
pub fn is_generic(gfx: &str) -> bool {
    FAMILIES.iter().any(|(generic, _)| *generic == gfx)
}

/// Whether code compiled for processor `image` runs on a device of
/// processor `device`: the same processor, or the generic one of its
/// family.
pub fn runs_on(image: &str, device: &str) -> bool {
    image == device || family_of(device) == Some(image)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_runs_its_own_code_and_its_familys_generic_code() {
        assert_eq!(family_of("gfx950"), Some("gfx9-4-generic"));
        assert_eq!(family_of("gfx1151"), Some("gfx11-generic"));
        assert_eq!(family_of("gfx1201"), Some("gfx12-generic"));
        assert_eq!(family_of("gfx90a"), None);
        assert!(runs_on("gfx942", "gfx942"));
        assert!(runs_on("gfx9-4-generic", "gfx942"));
        assert!(runs_on("gfx12-generic", "gfx1200"));
        assert!(!runs_on("gfx12-generic", "gfx1100"));
        assert!(!runs_on("gfx942", "gfx950"));
        assert!(!runs_on("gfx9-4-generic", "gfx90a"));
        assert!(is_generic("gfx11-generic") && !is_generic("gfx1100"));
    }

    #[test]
    fn a_generic_processor_takes_a_members_setting_where_it_has_none() {
        let settings = [("gfx942", 16), ("gfx950", 8), ("gfx12-generic", 2)];
        let own = |t: &str| settings.iter().find(|(s, _)| *s == t).map(|&(_, n)| n);
        assert_eq!(setting("gfx9-4-generic", own), Some(16));
        assert_eq!(setting("gfx12-generic", own), Some(2));
        assert_eq!(setting("gfx11-generic", own), None);
        assert_eq!(setting("gfx90a", own), None);
    }
}

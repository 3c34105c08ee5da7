//! Target names, triples, CPUs and features.

use tile_abi::HostIsa;
use tile_codegen::{default_targets, parse_targets, Gfx, Sm, Target, TargetError};

#[test]
fn every_accepted_name_parses_and_displays_back() {
    for name in Target::accepted_names() {
        if name == tile_codegen::target::HOST {
            continue;
        }
        let target: Target = name.parse().expect(name);
        assert_eq!(target.to_string(), name);
    }
}

#[test]
fn parses_the_documented_names() {
    let cases = [
        ("sm_80", Target::Nvptx(Sm::Sm80)),
        ("sm_86", Target::Nvptx(Sm::Sm86)),
        ("sm_89", Target::Nvptx(Sm::Sm89)),
        ("sm_90", Target::Nvptx(Sm::Sm90)),
        ("sm_90a", Target::Nvptx(Sm::Sm90a)),
        ("gfx90a", Target::Amdgpu(Gfx::Gfx90a)),
        ("gfx942", Target::Amdgpu(Gfx::Gfx942)),
        ("gfx1100", Target::Amdgpu(Gfx::Gfx1100)),
        ("x86_64-v3", Target::Host(HostIsa::X86_64V3)),
        ("x86_64", Target::Host(HostIsa::X86_64)),
        ("aarch64", Target::Host(HostIsa::Aarch64)),
    ];
    for (name, expected) in cases {
        assert_eq!(name.parse::<Target>().expect(name), expected);
    }
}

#[test]
fn unknown_names_are_rejected_with_the_accepted_list() {
    for bad in ["", "sm_70", "sm80", "SM_80", "gfx900", "cuda", " host"] {
        let err = bad.parse::<Target>().expect_err(bad);
        assert!(matches!(err, TargetError::Unknown { .. }), "{err:?}");
        let message = err.to_string();
        assert!(message.contains(&format!("`{bad}`")), "{message}");
        for name in ["sm_80", "sm_90a", "gfx90a", "gfx942", "gfx1100", "host"] {
            assert!(message.contains(name), "{message} lacks {name}");
        }
    }
}

#[test]
fn triples_cpus_and_features() {
    let sm90 = Target::Nvptx(Sm::Sm90);
    assert_eq!(sm90.triple(), "nvptx64-nvidia-cuda");
    assert_eq!(sm90.cpu(), "sm_90");
    assert_eq!(sm90.features(), "+ptx78");
    assert_eq!(Target::Nvptx(Sm::Sm80).features(), "+ptx70");
    assert_eq!(Target::Nvptx(Sm::Sm90a).features(), "+ptx80");
    assert_eq!(Sm::Sm90a.number(), 90);

    let gfx942 = Target::Amdgpu(Gfx::Gfx942);
    assert_eq!(gfx942.triple(), "amdgcn-amd-amdhsa");
    assert_eq!(gfx942.cpu(), "gfx942");
    assert_eq!(gfx942.features(), "");

    let v3 = Target::Host(HostIsa::X86_64V3);
    assert_eq!(v3.triple(), "x86_64-unknown-linux-gnu");
    assert_eq!(v3.cpu(), "x86-64-v3");
    assert_eq!(Target::Host(HostIsa::Aarch64).features(), "+neon");
}

#[test]
fn host_in_a_list_stands_for_the_levels_of_this_architecture() {
    let levels: Vec<Target> = HostIsa::for_this_architecture()
        .into_iter()
        .map(Target::Host)
        .collect();
    let mut want = vec![Target::Nvptx(Sm::Sm90)];
    want.extend(&levels);
    assert_eq!(parse_targets(" sm_90, host,, x86_64 ").unwrap(), {
        let mut w = want.clone();
        if !w.contains(&Target::Host(HostIsa::X86_64)) {
            w.push(Target::Host(HostIsa::X86_64));
        }
        w
    });
    assert_eq!(parse_targets("host").unwrap(), levels);
    assert!("host".parse::<Target>().is_err());
    let err = parse_targets("sm_90, cuda").unwrap_err();
    assert!(
        err.to_string().starts_with("unknown target `cuda`"),
        "{err}"
    );
}

#[test]
fn ptx_versions_are_within_what_llvm_22_accepts() {
    // LLVM 22's NVPTX backend knows PTX ISA 3.2 to 9.0; each target asks for the oldest
    // version ptxas accepts for it (sm_103a's came after sm_120a's).
    let versions: Vec<(&str, u32)> = Sm::ALL
        .iter()
        .map(|sm| (sm.name(), sm.ptx_version()))
        .collect();
    assert!(
        versions.iter().all(|(_, v)| (32..=90).contains(v)),
        "{versions:?}"
    );
    assert_eq!(
        versions,
        [
            ("sm_75", 63),
            ("sm_80", 70),
            ("sm_86", 71),
            ("sm_87", 74),
            ("sm_89", 78),
            ("sm_90", 78),
            ("sm_90a", 80),
            ("sm_100a", 86),
            ("sm_103a", 88),
            ("sm_120a", 87),
        ]
    );
}

#[test]
fn default_targets_are_the_documented_gpus_and_the_host_levels() {
    let names: Vec<String> = default_targets().iter().map(Target::to_string).collect();
    let mut want: Vec<String> = [
        "sm_80",
        "sm_86",
        "sm_89",
        "sm_90",
        "gfx90a",
        "gfx942",
        "gfx9-4-generic",
        "gfx1100",
        "gfx12-generic",
    ]
    .map(String::from)
    .to_vec();
    want.extend(
        HostIsa::for_this_architecture()
            .iter()
            .map(|isa| isa.to_string()),
    );
    assert_eq!(names, want);
}

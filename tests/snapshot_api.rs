//! A user's snapshot test: a kernel's embedded stages (its tile IR, the
//! thread-level program and the PTX of a GPU target) pinned with insta, with
//! no environment variable and no dump directory. The snapshots are under
//! `tests/snapshots/`; `cargo insta review` shows a change to accept.

use tile::tile_kernel;

#[tile_kernel(configs(BLOCK = 64), targets = "sm_80, gfx942, host")]
fn scaled_add<const BLOCK: usize>(
    x: &Tensor<f32>,
    y: &Tensor<f32>,
    out: &mut Tensor<f32>,
    alpha: f32,
) {
    let pid = program_id(0);
    let (px, py) = (partition_view(x, [BLOCK]), partition_view(y, [BLOCK]));
    let sum = px.load_masked(pid) * alpha + py.load_masked(pid);
    partition_view(out, [BLOCK]).store_masked(sum, pid);
}

#[test]
fn the_tile_ir_is_a_snapshot() {
    insta::assert_snapshot!(scaled_add::<64>::ir());
}

#[test]
fn the_thread_program_of_a_gpu_target_is_a_snapshot() {
    insta::assert_snapshot!(scaled_add::<64>::thread_program("sm_80").unwrap());
}

#[test]
fn the_ptx_is_a_snapshot() {
    insta::assert_snapshot!(scaled_add::<64>::ptx("sm_80").unwrap());
}

#[test]
fn the_assembly_of_each_gpu_target_is_its_own_text() {
    let ptx = scaled_add::<64>::ptx("sm_80").unwrap();
    assert_eq!(scaled_add::<64>::asm("sm_80").unwrap(), ptx);
    // The PTX the launcher loads is the same text.
    let image = scaled_add::<64>::spec()
        .images
        .iter()
        .find(|i| i.target == "sm_80")
        .unwrap();
    assert_eq!(image.bytes, ptx.as_bytes());
    let amd = scaled_add::<64>::asm("gfx942").unwrap();
    assert!(
        amd.contains(".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\""),
        "{amd}"
    );
    assert!(amd.contains("s_endpgm"), "{amd}");
    // Each target's program has its own warps: the default 4 are 4 warps of
    // 32 lanes on sm_80 and 4 wavefronts of 64 lanes on gfx942, which the
    // lowering gives 8 warps of 32.
    let program = |target| scaled_add::<64>::thread_program(target).unwrap();
    assert!(program("sm_80").starts_with("kernel scaled_add warps 4 ("));
    assert!(program("gfx942").starts_with("kernel scaled_add warps 8 ("));
}

#[test]
fn a_stage_a_target_lacks_is_an_error_naming_the_targets_that_have_it() {
    let host = scaled_add::<64>::INFO.specializations[0]
        .texts
        .iter()
        .map(|t| t.target)
        .find(|t| !t.starts_with("sm_") && !t.starts_with("gfx"));
    if let Some(host) = host {
        let error = scaled_add::<64>::asm(host).unwrap_err().to_string();
        assert_eq!(
            error,
            format!("kernel `scaled_add` (BLOCK=64) has no assembly for `{host}`; the targets with one are: sm_80, gfx942; host code is embedded as a shared object (`TILE_DUMP` writes its disassembly)")
        );
    }
    let error = scaled_add::<64>::ptx("gfx942").unwrap_err().to_string();
    assert_eq!(
        error,
        "kernel `scaled_add` (BLOCK=64) has no PTX for `gfx942`; the targets with one are: sm_80; a `gfx*` target's text is its `asm`"
    );
    let error = scaled_add::<64>::ptx("sm_90").unwrap_err();
    assert!(
        error.to_string().starts_with("kernel `scaled_add` (BLOCK=64) has no PTX for `sm_90`: it was not compiled for it (its targets: sm_80, gfx942"),
        "{error}"
    );
}

//! Reviewed snapshots of the tensor-core paths: an f16 matmul with f32
//! accumulation, its thread program and its GPU text on each family of
//! matrix instruction — `mma.sync` on sm_80, `wgmma` on sm_90a and MFMA on
//! gfx942 (its assembly). A change to operand layouts, swizzles, the software
//! pipeline or the instruction selection shows here as a diff to review
//! (`cargo insta review`); the snapshots are under `tests/snapshots/`.
//!
//! The tile is 64×64×64 on 4 warps: the smallest that takes `wgmma` on sm_90a
//! (one warpgroup; K in 128-byte rows of f16), 4 wavefronts on gfx942, small
//! enough to read, with the K loop pipelined at the default stages as in the
//! examples' larger matmuls.

use tile::tile_kernel;

#[tile_kernel(targets = "sm_80, sm_90a, gfx942", configs(BM = 64, BN = 64, BK = 64))]
fn matmul_f16<const BM: usize, const BN: usize, const BK: usize>(
    a: &Tensor<f16, 2>,
    b: &Tensor<f16, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let (va, vb) = (partition_view(a, [BM, BK]), partition_view(b, [BK, BN]));
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(a.dim(1), BK) {
        acc = dot(va.load_masked(pid_m, kk), vb.load_masked(kk, pid_n), acc);
    }
    partition_view(c, [BM, BN]).store_masked(acc, pid_m, pid_n);
}

type Kernel = matmul_f16<64, 64, 64>;

/// The number of lines of `text` holding `needle`.
fn count(text: &str, needle: &str) -> usize {
    text.lines().filter(|l| l.contains(needle)).count()
}

#[test]
fn sm_80_thread_program() {
    insta::assert_snapshot!(Kernel::thread_program("sm_80").unwrap());
}

#[test]
fn sm_80_ptx_uses_mma_sync() {
    let ptx = Kernel::ptx("sm_80").unwrap();
    // 64×64 on 4 warps is 32×32 per warp: 2×4 m16n8k16 tiles per k16 step,
    // four steps per BK of 64.
    assert_eq!(
        count(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
        32,
        "{ptx}"
    );
    assert!(
        ptx.contains("cp.async"),
        "operands are copied asynchronously"
    );
    insta::assert_snapshot!(ptx);
}

#[test]
fn sm_90a_thread_program() {
    insta::assert_snapshot!(Kernel::thread_program("sm_90a").unwrap());
}

#[test]
fn sm_90a_ptx_uses_wgmma() {
    let ptx = Kernel::ptx("sm_90a").unwrap();
    assert!(ptx.contains("wgmma.mma_async"), "{ptx}");
    assert!(ptx.contains("wgmma.wait_group"), "{ptx}");
    insta::assert_snapshot!(ptx);
}

#[test]
fn gfx942_thread_program() {
    insta::assert_snapshot!(Kernel::thread_program("gfx942").unwrap());
}

#[test]
fn gfx942_assembly_uses_mfma() {
    let asm = Kernel::asm("gfx942").unwrap();
    assert!(asm.contains("v_mfma_f32_"), "{asm}");
    insta::assert_snapshot!(asm);
}

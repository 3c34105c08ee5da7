//! `TILE_DUMP`: every kernel × specialization writes its IR before and after
//! the pass pipeline; a dump that cannot be written is a compile error.

use quote::quote;
use tile_frontend::expand::{tile_kernel, ExpandOptions};

fn kernel() -> (proc_macro2::TokenStream, proc_macro2::TokenStream) {
    (
        quote!(configs(BLOCK = 64), configs(BLOCK = 128)),
        quote! {
            fn scale<const BLOCK: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
                let pid = program_id(0);
                let t = partition_view(x, [BLOCK]).load_masked(pid);
                let unused = t * 3.0;
                partition_view(out, [BLOCK]).store_masked(t * 2.0, pid);
            }
        },
    )
}

#[test]
fn dumps_every_specialization_before_and_after_passes() {
    let dir = std::env::temp_dir().join(format!("tile-dump-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (attr, item) = kernel();
    let options = ExpandOptions {
        dump_dir: Some(dir.clone()),
        ..ExpandOptions::default()
    };
    let out = tile_kernel(attr, item, &options).to_string();
    assert!(!out.contains("compile_error"), "{out}");
    for label in ["BLOCK=64", "BLOCK=128"] {
        let stage = dir.join("scale").join(label);
        let before =
            std::fs::read_to_string(stage.join("tile-ir.txt")).expect("tile-ir.txt written");
        let after = std::fs::read_to_string(stage.join("tile-ir.opt.txt"))
            .expect("tile-ir.opt.txt written");
        assert!(before.starts_with("kernel @scale("), "{before}");
        // DCE removed the unused multiplication by 3.
        assert!(before.contains("constant 3.0"), "{before}");
        assert!(!after.contains("constant 3.0"), "{after}");
        // The thread-level program of the GPU lowering (4 warps by default).
        let thread = std::fs::read_to_string(stage.join("thread.txt")).expect("thread.txt written");
        assert!(thread.starts_with("kernel scale warps 4 ("), "{thread}");
        assert!(thread.contains("ld.global"), "{thread}");
        // Every GPU kernel carries its launch bounds: 4 of the target's
        // warps, 32 lanes each on NVIDIA and 64 on CDNA.
        let ptx = std::fs::read_to_string(stage.join("sm_80.ptx")).expect("sm_80.ptx written");
        assert!(ptx.contains(".reqntid 128, 1, 1"), "{ptx}");
        let ll = std::fs::read_to_string(stage.join("gfx90a.ll")).expect("gfx90a.ll written");
        assert!(
            ll.contains("\"amdgpu-flat-work-group-size\"=\"256,256\""),
            "{ll}"
        );
        // The host back end's decisions.
        let plan = std::fs::read_to_string(stage.join("host-plan.txt")).expect("host-plan.txt");
        assert!(plan.starts_with("host plan of `scale`"), "{plan}");
        // The optimized IR is what the generated code embeds.
        assert!(
            out.contains(&format!("{after:?}")),
            "embedded IR differs from tile-ir.opt.txt"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unwritable_dump_is_a_compile_error() {
    let file = std::env::temp_dir().join(format!("tile-dump-file-{}", std::process::id()));
    std::fs::write(&file, "not a directory").expect("temp file");
    let (attr, item) = kernel();
    let options = ExpandOptions {
        dump_dir: Some(file.clone()),
        ..ExpandOptions::default()
    };
    let out = tile_kernel(attr, item, &options).to_string();
    assert!(
        out.contains("compile_error") && out.contains("TILE_DUMP: cannot create"),
        "{out}"
    );
    let _ = std::fs::remove_file(&file);
}

/// The math a kernel asks for: the attribute's flag.
#[derive(Clone, Copy, Debug)]
enum Math {
    Exact,
    Fast,
    Approx,
}

/// The PTX, the gfx942 assembly and the optimized host LLVM IR (x86-64, or
/// AArch64) of `exp`, `log` and a division over a tile, in `math`.
fn exp_code(math: Math) -> (String, String, String) {
    let dir = std::env::temp_dir().join(format!("tile-dump-{math:?}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let attr = match math {
        Math::Exact => quote!(targets = "sm_80,gfx942,host"),
        Math::Fast => quote!(targets = "sm_80,gfx942,host", fast_math),
        Math::Approx => quote!(targets = "sm_80,gfx942,host", approx_math),
    };
    let item = quote! {
        fn softplus(x: &Tensor<f32>, out: &mut Tensor<f32>) {
            let pid = program_id(0);
            let t = partition_view(x, [128]).load_masked(pid);
            partition_view(out, [128]).store_masked((t.exp() + 1.0).log() / t, pid);
        }
    };
    let options = ExpandOptions {
        dump_dir: Some(dir.clone()),
        ..ExpandOptions::default()
    };
    let out = tile_kernel(attr, item, &options).to_string();
    assert!(!out.contains("compile_error"), "{out}");
    let read = |file: &str| {
        std::fs::read_to_string(dir.join("softplus/default").join(file))
            .unwrap_or_else(|e| panic!("{file} dumped: {e}"))
    };
    let (ptx, gcn) = (read("sm_80.ptx"), read("gfx942.s"));
    let host = match std::env::consts::ARCH {
        "aarch64" => read("aarch64.opt.ll"),
        _ => read("x86_64.opt.ll"),
    };
    let _ = std::fs::remove_dir_all(&dir);
    (ptx, gcn, host)
}

/// Lines of double-precision arithmetic in PTX and in LLVM IR.
fn f64_lines(ptx: &str, ir: &str) -> (usize, usize) {
    let in_ptx = ptx.lines().filter(|l| l.contains(".f64")).count();
    let in_ir = ir
        .lines()
        .filter(|l| l.contains(" double") && !l.trim_start().starts_with("declare"))
        .count();
    (in_ptx, in_ir)
}

#[test]
fn fast_math_computes_f32_math_in_f32() {
    let (ptx, _, host) = exp_code(Math::Exact);
    let (in_ptx, in_ir) = f64_lines(&ptx, &host);
    assert!(in_ptx > 0, "the exact library computes in f64");
    assert!(in_ir > 0, "the exact host library computes in f64");
    let (ptx, _, host) = exp_code(Math::Fast);
    assert_eq!(f64_lines(&ptx, &host), (0, 0), "{ptx}\n{host}");
    assert!(
        !ptx.contains(".approx"),
        "the fast library is arithmetic: {ptx}"
    );
}

#[test]
fn approx_math_takes_the_gpus_own_instructions() {
    let (ptx, gcn, host) = exp_code(Math::Approx);
    for instruction in ["ex2.approx.f32", "lg2.approx.f32", "div.approx.f32"] {
        assert!(ptx.contains(instruction), "{instruction} in {ptx}");
    }
    for instruction in ["v_exp_f32", "v_log_f32", "v_rcp_f32"] {
        assert!(gcn.contains(instruction), "{instruction} in {gcn}");
    }
    // The host keeps the fast library: f32 arithmetic, no double.
    assert_eq!(f64_lines(&ptx, &host), (0, 0), "{host}");
    let (ptx, gcn, _) = exp_code(Math::Fast);
    assert!(!ptx.contains("ex2.approx") && !gcn.contains("v_exp_f32"));
}

#[test]
fn loads_bounded_by_whole_tiles_are_proven_in_the_dumped_program() {
    let dir = std::env::temp_dir().join(format!("tile-dump-proof-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let attr = quote!(configs(BM = 4, BK = 32), targets = "sm_80");
    let item = quote! {
        fn row_sums<const BM: usize, const BK: usize>(x: &Tensor<f32, 2>, out: &mut Tensor<f32>) {
            let pid = program_id(0);
            let vx = partition_view(x, [BM, BK]);
            let mut acc = full([BM], 0.0f32);
            if pid < x.dim(0) / BM as i32 {
                for k in 0..x.dim(1) / BK as i32 {
                    acc = acc + vx.load(pid, k).sum(1);
                }
            }
            partition_view(out, [BM]).store_masked(acc, pid);
        }
    };
    let options = ExpandOptions {
        dump_dir: Some(dir.clone()),
        ..ExpandOptions::default()
    };
    let out = tile_kernel(attr, item, &options).to_string();
    assert!(!out.contains("compile_error"), "{out}");
    let thread = std::fs::read_to_string(dir.join("row_sums/BM=4,BK=32/thread.txt"))
        .expect("thread.txt written");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(thread.contains("// bounds: proven"), "{thread}");
    assert!(!thread.contains("check.bounds"), "{thread}");
}

#[test]
fn tensor_dots_dump_the_mma_program_beside_the_portable_one() {
    let dir = std::env::temp_dir().join(format!("tile-dump-mma-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let attr = quote!(targets = "sm_80");
    let item = quote! {
        fn mm(a: &Tensor<f16, 2>, b: &Tensor<f16, 2>, c: &mut Tensor<f32, 2>) {
            let acc = dot(
                partition_view(a, [32, 16]).load(0, 0),
                partition_view(b, [16, 32]).load(0, 0),
                zeros::<f32>([32, 32]),
            );
            let exact = dot_ieee(
                partition_view(a, [32, 16]).load(0, 0),
                partition_view(b, [16, 32]).load(0, 0),
                acc,
            );
            partition_view(c, [32, 32]).store(exact, 0, 0);
        }
    };
    let options = ExpandOptions {
        dump_dir: Some(dir.clone()),
        ..ExpandOptions::default()
    };
    let out = tile_kernel(attr, item, &options).to_string();
    assert!(!out.contains("compile_error"), "{out}");
    let read = |file: &str| {
        std::fs::read_to_string(dir.join("mm/default").join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"))
    };
    let ir = read("tile-ir.txt");
    assert!(
        ir.contains("= dot tensor %") && ir.contains("= dot ieee %"),
        "{ir}"
    );
    // The `tensor` dot: two mma per warp (4 warps, 2×2 of them, on 32×32).
    let mma = read("thread.mma_sync.txt");
    assert_eq!(mma.matches("mma.m16n8k16.f16 ").count(), 2, "{mma}");
    assert!(!read("thread.txt").contains("mma."));
    let ptx = read("sm_80.ptx");
    assert_eq!(
        ptx.matches("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
            .count(),
        2,
        "{ptx}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The dumped sm_80 thread program of a row softmax, with or without
/// `fast_math`.
fn softmax_program(fast_math: bool) -> String {
    let dir =
        std::env::temp_dir().join(format!("tile-dump-sums-{fast_math}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let attr = if fast_math {
        quote!(targets = "sm_80", fast_math)
    } else {
        quote!(targets = "sm_80")
    };
    let item = quote! {
        fn softmax(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
            let pid = program_id(0);
            let t = partition_view(x, [2, 256]).load_masked_with(Padding::NegInf, pid, 0);
            let e = (t - t.max_along_keepdim(1)).exp();
            partition_view(out, [2, 256]).store_masked(e / e.sum_keepdim(1), pid, 0);
        }
    };
    let options = ExpandOptions {
        dump_dir: Some(dir.clone()),
        ..ExpandOptions::default()
    };
    let out = tile_kernel(attr, item, &options).to_string();
    assert!(!out.contains("compile_error"), "{out}");
    let program = std::fs::read_to_string(dir.join("softmax/default/thread.txt"))
        .unwrap_or_else(|e| panic!("thread.txt dumped: {e}"));
    let _ = std::fs::remove_dir_all(&dir);
    program
}

#[test]
fn fast_math_sums_rows_as_trees() {
    // In order, the sum stages its operand and folds each row from shared
    // memory in a loop; under `fast_math` it is a tree like the max, whose
    // only shared memory holds the 4 warps' totals of each row.
    let count = |program: &str, what: &str| program.matches(what).count();
    let (in_order, any_order) = (softmax_program(false), softmax_program(true));
    assert_eq!(count(&in_order, "shared @s0: f32[512]"), 1, "{in_order}");
    assert!(count(&in_order, " for ") > 0, "{in_order}");
    assert_eq!(count(&any_order, " for "), 0, "{any_order}");
    assert_eq!(
        count(&any_order, "shfl.bfly"),
        2 * count(&in_order, "shfl.bfly"),
        "{any_order}"
    );
}

//! Every sample kernel, for several specializations and warp counts, lowered
//! and emitted for every GPU target: LLVM verifies each module, `ptxas
//! -arch=<sm>` assembles every PTX with no error, LLVM's assembler (in this
//! process, as `llvm-mc` would) assembles every AMDGPU assembly into the
//! object LLVM would have generated from the module (the same code object,
//! byte for byte), which lld (in this process too) links into a code object
//! that `llvm-objdump` disassembles. A tool's failure shows its message and
//! the offending text.

use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use tile_codegen::gpu::{emit, Emitted};
use tile_codegen::tools::{self, Tool};
use tile_codegen::CodegenOptions;
use tile_codegen::{Gfx, Machine, Sm, Target};
use tile_ir::{samples, DType, DotPrecision, Function, UnaryOp};
use tile_thread::lower::{lower, LowerOptions};

/// The sample kernels with their specializations and warp counts.
fn kernels() -> Vec<(Function, u32)> {
    vec![
        (samples::vector_add(1024).unwrap(), 4),
        (samples::vector_add(100).unwrap(), 1),
        (samples::softmax(4, 256).unwrap(), 4),
        (samples::softmax(1, 40).unwrap(), 2),
        (samples::layernorm(2, 384).unwrap(), 4),
        (samples::matmul(32, 32, 16, DType::F32).unwrap(), 4),
        (samples::matmul(64, 64, 32, DType::F16).unwrap(), 8),
        (samples::matmul(16, 8, 3, DType::BF16).unwrap(), 2),
        (samples::matmul(32, 32, 16, DType::BF16).unwrap(), 4),
        (samples::transpose(32, 32).unwrap(), 4),
        (samples::transpose(5, 7).unwrap(), 1),
    ]
}

fn require(tool: Tool) {
    if let Err(e) = tool.find() {
        panic!("{e}\n(these tests need {tool}: run scripts/setup.sh first)");
    }
}

fn emitted(func: &Function, warps: u32, target: Target) -> Emitted {
    let options = LowerOptions::warps(warps).with_tensor_cores(target.tensor_cores());
    let program = lower(func, &options).unwrap_or_else(|e| panic!("{}: {e}", func.name));
    emit(&program, target, &CodegenOptions::default())
        .unwrap_or_else(|e| panic!("{} for {target}: {e}", func.name))
}

#[test]
fn every_sample_assembles_with_ptxas_for_every_sm() {
    require(Tool::Ptxas);
    for (func, warps) in kernels() {
        for sm in Sm::ALL.into_iter().filter(|sm| sm.number() >= 80) {
            let out = emitted(&func, warps, Target::Nvptx(sm));
            assert!(
                out.assembly.contains(&format!(".entry {}", func.name)),
                "{} is not a kernel in the PTX for {sm}",
                func.name
            );
            let bounds = format!(".reqntid {}, 1, 1", 32 * warps);
            assert!(
                out.assembly.contains(&bounds),
                "{} for {sm} lacks `{bounds}`",
                func.name
            );
            let cubin = tools::assemble_ptx(&out.assembly, sm)
                .unwrap_or_else(|e| panic!("{} for {sm}: {e}", func.name));
            assert_eq!(&cubin[..4], b"\x7fELF", "{}: not a cubin", func.name);
        }
    }
}

/// The code objects of `out`'s optimized module read back from its text
/// (which need not generate `out`'s code: the text keeps no use-list
/// order), linked by lld: from its assembly assembled by LLVM's assembler, as
/// `emit` makes them, and from the object file LLVM generates itself.
fn both_ways(out: &Emitted, gfx: Gfx) -> (Vec<u8>, Vec<u8>) {
    let level = CodegenOptions::default().opt_level;
    let machine = Machine::new(Target::Amdgpu(gfx), level).unwrap_or_else(|e| panic!("{e}"));
    let ctx = Context::create();
    let read = || {
        let text = out.module.llvm_ir_opt.as_bytes();
        let text = MemoryBuffer::create_from_memory_range_copy(text, "opt");
        ctx.create_module_from_ir(text)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let assembly = machine
        .emit_assembly(&read())
        .unwrap_or_else(|e| panic!("{e}"));
    let mc = tools::assemble_amdgpu(&assembly, gfx).unwrap_or_else(|e| panic!("{e}"));
    let object = machine
        .emit_object(&read())
        .unwrap_or_else(|e| panic!("{e}"));
    let link = |o: &[u8]| tools::link_shared_object(o).unwrap_or_else(|e| panic!("{e}"));
    (link(&mc), link(&object))
}

/// The sections of an ELF64 little-endian file that a loader reads (those
/// with `SHF_ALLOC`), by name, with their bytes (a section of no bits by its
/// name and size).
fn loaded_sections(elf: &[u8]) -> Vec<(String, &[u8])> {
    const SHF_ALLOC: usize = 0x2;
    const SHT_NOBITS: u32 = 8;
    let u16_at = |at: usize| u16::from_le_bytes([elf[at], elf[at + 1]]) as usize;
    let u64_at = |at: usize| u64::from_le_bytes(elf[at..at + 8].try_into().unwrap()) as usize;
    let (table, size, count) = (u64_at(0x28), u16_at(0x3a), u16_at(0x3c));
    let header = |i: usize| table + i * size;
    let names = u64_at(header(u16_at(0x3e)) + 0x18);
    (0..count)
        .map(header)
        .filter(|&h| u64_at(h + 0x08) & SHF_ALLOC != 0)
        .map(|h| {
            let at = names + u32::from_le_bytes(elf[h..h + 4].try_into().unwrap()) as usize;
            let end = elf[at..].iter().position(|&b| b == 0).unwrap();
            let name = String::from_utf8_lossy(&elf[at..at + end]).into_owned();
            let kind = u32::from_le_bytes(elf[h + 4..h + 8].try_into().unwrap());
            if kind == SHT_NOBITS {
                // Memory the loader zeroes: only its size is in the file.
                (format!("{name} ({} bytes)", u64_at(h + 0x20)), &elf[..0])
            } else {
                (name, &elf[u64_at(h + 0x18)..][..u64_at(h + 0x20)])
            }
        })
        .collect()
}

/// The code object from the assembler's object loads exactly as the one from
/// LLVM's own: every section a loader reads is equal, byte for byte. (The
/// static symbol tables differ: the assembler keeps the local symbols of
/// each kernel's resource counts, which the loader never reads.)
fn same_code_object(mc: &[u8], direct: &[u8], gfx: Gfx, kernel: &str) {
    let (mc, direct) = (loaded_sections(mc), loaded_sections(direct));
    let names = |sections: &[(String, &[u8])]| -> Vec<String> {
        sections.iter().map(|(name, _)| name.clone()).collect()
    };
    assert_eq!(names(&mc), names(&direct), "{kernel} for {gfx}: sections");
    for ((name, a), (_, b)) in mc.iter().zip(&direct) {
        assert!(a == b, "{kernel} for {gfx}: {name} differs");
    }
}

#[test]
fn every_sample_links_into_a_code_object_for_every_gfx() {
    require(Tool::LlvmObjdump);
    for (func, warps) in kernels() {
        for gfx in Gfx::ALL {
            let out = emitted(&func, warps, Target::Amdgpu(gfx));
            let hsaco = out.code_object.as_ref().expect("a code object");
            let (mc, direct) = both_ways(&out, gfx);
            same_code_object(&mc, &direct, gfx, &func.name);
            assert_eq!(
                &hsaco[..4],
                b"\x7fELF",
                "{}: not an ELF code object",
                func.name
            );
            let listing =
                tools::disassemble(hsaco).unwrap_or_else(|e| panic!("{}: {e}", func.name));
            assert!(
                listing.contains(&format!("<{}>:", func.name)) && listing.contains("s_endpgm"),
                "{} for {gfx}: no kernel in\n{listing}",
                func.name
            );
            let bounds = format!(".max_flat_workgroup_size: {}", 32 * warps);
            assert!(
                out.assembly.contains(&bounds),
                "{} for {gfx} lacks `{bounds}`",
                func.name
            );
            // Barriers fence the workgroup, not the system: no L2 writeback
            // or invalidation.
            for cache in ["buffer_wbl2", "buffer_invl2", "buffer_wbinvl1"] {
                assert!(!listing.contains(cache), "{} for {gfx}: {cache}", func.name);
            }
        }
    }
}

/// The assembler runs in this process, many times in one: each run gives the
/// same object. (Destroying its streamer before its parser once made a few
/// runs in a hundred differ.)
#[test]
fn assembling_again_gives_the_same_object() {
    let func = samples::transpose(32, 32).unwrap();
    for gfx in [Gfx::Gfx90a, Gfx::Gfx1100] {
        let out = emitted(&func, 4, Target::Amdgpu(gfx));
        let first = tools::assemble_amdgpu(&out.assembly, gfx).unwrap_or_else(|e| panic!("{e}"));
        for run in 1..200 {
            let again =
                tools::assemble_amdgpu(&out.assembly, gfx).unwrap_or_else(|e| panic!("{e}"));
            assert!(again == first, "{gfx}: run {run} differs from the first");
        }
    }
}

/// The layernorm of the examples, built for its block of threads, keeps
/// every value in registers on CDNA: no scratch, no spills.
#[test]
fn layernorm_does_not_spill_on_cdna() {
    require(Tool::LlvmObjdump);
    let func = samples::layernorm(2, 384).unwrap();
    for gfx in [Gfx::Gfx90a, Gfx::Gfx942] {
        let out = emitted(&func, 4, Target::Amdgpu(gfx));
        for zero in [
            ".private_segment_fixed_size: 0",
            ".vgpr_spill_count: 0",
            ".sgpr_spill_count: 0",
        ] {
            assert!(
                out.assembly.contains(zero),
                "layernorm for {gfx} lacks `{zero}`"
            );
        }
        let hsaco = out.code_object.expect("a code object");
        let listing = tools::disassemble(&hsaco).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            !listing.contains("scratch_"),
            "layernorm for {gfx} uses scratch"
        );
    }
}

#[test]
fn wide_accesses_become_vector_instructions_and_read_only_inputs_use_the_nc_path() {
    let func = samples::vector_add(1024).unwrap();
    let ptx = emitted(&func, 4, Target::Nvptx(Sm::Sm80)).assembly;
    assert!(
        ptx.contains("ld.global.nc.v4.f32") || ptx.contains("ld.global.nc.v4.b32"),
        "{ptx}"
    );
    assert!(
        ptx.contains("st.global.v4.f32") || ptx.contains("st.global.v4.b32"),
        "{ptx}"
    );
}

#[test]
fn reductions_use_shuffles_and_barriers() {
    let func = samples::softmax(4, 256).unwrap();
    let ptx = emitted(&func, 4, Target::Nvptx(Sm::Sm80)).assembly;
    assert!(
        ptx.contains("shfl.sync.bfly.b32")
            || ptx.contains("shfl.sync.down.b32")
            || ptx.contains("shfl.sync.idx.b32"),
        "{ptx}"
    );
    // AMD's butterflies within 32 lanes take their pattern as an
    // immediate: DPP `quad_perm` for lanes 1 and 2 apart, `ds_swizzle_b32`
    // beyond; no lane computes a `ds_bpermute` address.
    let asm = emitted(&func, 4, Target::Amdgpu(Gfx::Gfx90a)).assembly;
    assert!(asm.contains("ds_swizzle_b32"), "{asm}");
    assert!(asm.contains("quad_perm:"), "{asm}");
    assert!(!asm.contains("ds_bpermute_b32"), "{asm}");
}

#[test]
fn tensor_dots_issue_mma_sync_from_sm_80_on() {
    require(Tool::Ptxas);
    for (dtype, warps, mmas) in [(DType::F16, 8, 8), (DType::BF16, 4, 2)] {
        let (bm, bk) = if dtype == DType::F16 {
            (64, 32)
        } else {
            (32, 16)
        };
        let func = samples::matmul(bm, bm, bk, dtype).unwrap();
        let instruction = format!("mma.sync.aligned.m16n8k16.row.col.f32.{dtype}.{dtype}.f32");
        let ptx = emitted(&func, warps, Target::Nvptx(Sm::Sm80)).assembly;
        assert_eq!(ptx.matches(&instruction).count(), mmas, "{dtype}:\n{ptx}");
        let usage = tools::ptxas_resource_usage(&ptx, Sm::Sm80).unwrap();
        assert!(usage.contains("0 bytes spill stores"), "{dtype}: {usage}");
        let old = emitted(&func, warps, Target::Nvptx(Sm::Sm75)).assembly;
        assert!(!old.contains("mma.sync"), "sm_75 has no m16n8k16");
    }
}

/// Precision `tf32` on f32 operands: sm_80's `mma.sync.m16n8k8.tf32`, A
/// through `ldmatrix` of 32-bit elements (`.x4`, never `.trans`), B element
/// by element. 64×64 on 4 warps is 8 blocks of 16×8 a warp per k-step, 4
/// k-steps per K tile of 32. Without precision `tf32` the same matmul has
/// no `mma`.
#[test]
fn tf32_dots_issue_mma_sync_m16n8k8() {
    require(Tool::Ptxas);
    let func = samples::matmul_with(64, 64, 32, DType::F32, DotPrecision::Tf32).unwrap();
    let ptx = emitted(&func, 4, Target::Nvptx(Sm::Sm80)).assembly;
    let instruction = "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32";
    assert_eq!(ptx.matches(instruction).count(), 32, "{ptx}");
    assert!(
        ptx.contains("ldmatrix.sync.aligned.m8n8.x4.shared.b16"),
        "{ptx}"
    );
    assert!(!ptx.contains(".trans"), "{ptx}");
    let usage = tools::ptxas_resource_usage(&ptx, Sm::Sm80).unwrap();
    assert!(usage.contains("0 bytes spill stores"), "{usage}");
    let ieee = samples::matmul(64, 64, 32, DType::F32).unwrap();
    let ptx = emitted(&ieee, 4, Target::Nvptx(Sm::Sm80)).assembly;
    assert!(!ptx.contains("mma.sync"), "an ieee dot is an FMA chain");
}

/// FP8 `tensor` dots on sm_89, sm_90 and sm_90a: `mma.sync.m16n8k32` of
/// `e4m3` or `e5m2` as inline PTX, in a module of PTX 8.4 that `ptxas`
/// assembles without spills; A through `ldmatrix.x4` (never `.trans`).
/// 64×64×64 on 4 warps is 8 blocks of 16×8 a warp per k-step, 2 k-steps.
/// sm_80 has no FP8 form: the same dot runs on f16's `m16n8k16`, its
/// operands cast exactly (twice the k-steps), and the module keeps its
/// oldest PTX version.
#[test]
fn fp8_dots_issue_mma_sync_m16n8k32() {
    require(Tool::Ptxas);
    for dtype in [DType::F8E4M3, DType::F8E5M2] {
        let func = samples::matmul(64, 64, 64, dtype).unwrap();
        let t = if dtype == DType::F8E4M3 {
            "e4m3"
        } else {
            "e5m2"
        };
        let instruction = format!("mma.sync.aligned.m16n8k32.row.col.f32.{t}.{t}.f32");
        for sm in [Sm::Sm89, Sm::Sm90, Sm::Sm90a] {
            let ptx = emitted(&func, 4, Target::Nvptx(sm)).assembly;
            assert_eq!(ptx.matches(&instruction).count(), 16, "{sm} {dtype}");
            assert!(ptx.contains(".version 8.4"), "{sm} {dtype}");
            assert!(
                ptx.contains("ldmatrix.sync.aligned.m8n8.x4.shared.b16"),
                "{sm} {dtype}"
            );
            assert!(!ptx.contains(".trans"), "{sm} {dtype}");
            let usage = tools::ptxas_resource_usage(&ptx, sm).unwrap();
            assert!(usage.contains("0 bytes spill stores"), "{sm}: {usage}");
        }
        let ptx = emitted(&func, 4, Target::Nvptx(Sm::Sm80)).assembly;
        assert!(!ptx.contains(&instruction), "sm_80 has no FP8 mma");
        let f16 = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32";
        assert_eq!(ptx.matches(f16).count(), 32, "sm_80 {dtype}");
        assert!(ptx.contains(".version 7.0"), "sm_80 keeps PTX 7.0");
        let usage = tools::ptxas_resource_usage(&ptx, Sm::Sm80).unwrap();
        assert!(usage.contains("0 bytes spill stores"), "sm_80: {usage}");
    }
}

/// On sm_90a tensor dots whose tiles `wgmma` fits are its inline PTX,
/// which `ptxas` accepts, with their fences and groups: 128×128×64 on 8
/// warps is two warpgroups, each two 64×64 blocks and four k-steps per K
/// tile (two with a K tile of 32, A under the 64-byte swizzle); the
/// pipelined loop fences the proxy once per iteration.
#[test]
fn tensor_dots_issue_wgmma_on_sm_90a() {
    require(Tool::Ptxas);
    for (dtype, bk, wgmmas) in [
        (DType::F16, 64, 8),
        (DType::BF16, 64, 8),
        (DType::F16, 32, 4),
    ] {
        let func = samples::matmul(128, 128, bk, dtype).unwrap();
        let ptx = emitted(&func, 8, Target::Nvptx(Sm::Sm90a)).assembly;
        let instruction = format!("wgmma.mma_async.sync.aligned.m64n64k16.f32.{dtype}.{dtype}");
        assert_eq!(
            ptx.matches(&instruction).count(),
            wgmmas,
            "{dtype}, K tile {bk}:
{ptx}"
        );
        for (other, count) in [
            ("wgmma.fence.sync.aligned;", 1),
            ("wgmma.commit_group.sync.aligned;", 1),
            ("wgmma.wait_group.sync.aligned 0;", 1),
            ("fence.proxy.async.shared::cta;", 1),
        ] {
            assert_eq!(ptx.matches(other).count(), count, "{dtype}: {other}");
        }
        assert!(!ptx.contains("mma.sync"), "{dtype}");
        let usage = tools::ptxas_resource_usage(&ptx, Sm::Sm90a).unwrap();
        assert!(usage.contains("0 bytes spill stores"), "{dtype}: {usage}");
    }
}

/// On gfx1100 (RDNA 3, wave32) and on gfx1200 and gfx1201 (RDNA 4) tensor
/// dots are `v_wmma` instructions in the linked code object, RDNA 4's
/// reading 4 registers of A and of B (8 16-bit elements) where RDNA 3's read
/// 8; CDNA has none (it has MFMA, below).
#[test]
fn tensor_dots_issue_wmma_on_rdna() {
    require(Tool::LlvmObjdump);
    for dtype in [DType::F16, DType::BF16] {
        let func = samples::matmul(64, 64, 32, dtype).unwrap();
        let listing = |gfx| {
            let out = emitted(&func, 4, Target::Amdgpu(gfx));
            tools::disassemble(out.code_object.as_ref().expect("a code object")).unwrap()
        };
        let instruction = format!("v_wmma_f32_16x16x16_{dtype}");
        // 2×2 warps, each 2×2 blocks, two k-steps.
        for gfx in [Gfx::Gfx1100, Gfx::Gfx1200, Gfx::Gfx1201] {
            let listing = listing(gfx);
            assert_eq!(listing.matches(&instruction).count(), 8, "{dtype} {gfx}");
            // `v_wmma_f32_16x16x16_f16 v[d:d+7], v[a:a+n], v[b:b+n], ...`
            let words = if gfx == Gfx::Gfx1100 { 8 } else { 4 };
            let wmma = listing.lines().find(|l| l.contains(&instruction)).unwrap();
            let operands: Vec<&str> = wmma
                .split(&instruction)
                .nth(1)
                .unwrap()
                .split(',')
                .collect();
            let count = |operand: &str| -> usize {
                let range = operand
                    .trim()
                    .trim_start_matches("v[")
                    .trim_end_matches(']');
                let (first, last) = range.split_once(':').unwrap();
                last.parse::<usize>().unwrap() - first.parse::<usize>().unwrap() + 1
            };
            assert_eq!(
                (count(operands[1]), count(operands[2])),
                (words, words),
                "{gfx}: {wmma}"
            );
        }
        assert!(!listing(Gfx::Gfx942).contains("v_wmma"));
    }
}

/// On gfx90a, gfx942 and gfx950 (CDNA, wave64) tensor dots are `v_mfma`
/// instructions in the linked code object (gfx90a spells them
/// `v_mfma_f32_32x32x8f16`, `..bf16_1k`; gfx942 `v_mfma_f32_32x32x8_f16`,
/// `.._bf16`; gfx950 has its own of twice the `K`,
/// `v_mfma_f32_32x32x16_f16` and `v_mfma_f32_16x16x32_f16`), with no
/// scratch: the metadata's private segment is empty.
#[test]
fn tensor_dots_issue_mfma_on_cdna() {
    require(Tool::LlvmObjdump);
    // 64×64×32 on 8 warps: 2×2 waves, each one 32×32 block, four k-steps
    // (gfx950: two); 32×32×16 on 4 warps: 2×1 waves, each two 16×16
    // blocks, one k-step; 32×32×32 on 4 warps on gfx950: the same blocks,
    // one k-step of 32.
    let cdna3 = [
        ((64, 64, 32), 8, "32x32x8", 4),
        ((32, 32, 16), 4, "16x16x16", 2),
    ];
    let cdna4 = [
        ((64, 64, 32), 8, "32x32x16", 2),
        ((32, 32, 32), 4, "16x16x32", 2),
        ((32, 32, 16), 4, "16x16x16", 2),
    ];
    for (gfx, cases) in [
        (Gfx::Gfx90a, &cdna3[..]),
        (Gfx::Gfx942, &cdna3[..]),
        (Gfx::Gfx950, &cdna4[..]),
    ] {
        for dtype in [DType::F16, DType::BF16] {
            for &((bm, bn, bk), warps, shape, mfmas) in cases {
                let what = format!("{dtype} {bm}x{bn}x{bk} on {gfx}");
                let func = samples::matmul(bm, bn, bk, dtype).unwrap();
                let out = emitted(&func, warps, Target::Amdgpu(gfx));
                let code = out.code_object.as_ref().expect("a code object");
                let listing = tools::disassemble(code).unwrap();
                let suffix = match (gfx, dtype) {
                    (Gfx::Gfx90a, DType::BF16) => "bf16_1k".to_string(),
                    (Gfx::Gfx90a, _) => dtype.to_string(),
                    _ => format!("_{dtype}"),
                };
                let instruction = format!("v_mfma_f32_{shape}{suffix} ");
                assert_eq!(listing.matches(&instruction).count(), mfmas, "{what}");
                assert_eq!(listing.matches("v_mfma").count(), mfmas, "{what}");
                assert!(!listing.contains("v_wmma"), "{what}");
                assert!(
                    out.assembly.contains(".private_segment_fixed_size: 0"),
                    "{what}: scratch"
                );
            }
        }
    }
}

/// FP8 dots (OCP E4M3 and E5M2) are the native FP8 instructions of
/// gfx950's MFMA and of RDNA 4's WMMA in the linked code objects, with no
/// f16 instruction beside them; gfx942 (FNUZ) widens them to f16.
#[test]
fn fp8_dots_issue_fp8_instructions_on_gfx950_and_rdna4() {
    require(Tool::LlvmObjdump);
    for (dtype, amd) in [(DType::F8E4M3, "fp8_fp8"), (DType::F8E5M2, "bf8_bf8")] {
        let func = samples::matmul(64, 64, 32, dtype).unwrap();
        let listing = |gfx, warps| {
            let out = emitted(&func, warps, Target::Amdgpu(gfx));
            tools::disassemble(out.code_object.as_ref().expect("a code object")).unwrap()
        };
        // 4 waves, each one 32×32 block, two k-steps of 16.
        let cdna4 = listing(Gfx::Gfx950, 8);
        let mfma = format!("v_mfma_f32_32x32x16_{amd} ");
        assert_eq!(cdna4.matches(&mfma).count(), 2, "{dtype}");
        assert_eq!(cdna4.matches("v_mfma").count(), 2, "{dtype}");
        // 4 warps on 4×4 blocks of 16×16, each 2×2 of them, two k-steps.
        let wmma = format!("v_wmma_f32_16x16x16_{amd} ");
        for gfx in [Gfx::Gfx1200, Gfx::Gfx1201] {
            let rdna4 = listing(gfx, 4);
            assert_eq!(rdna4.matches(&wmma).count(), 8, "{dtype} {gfx}");
            assert_eq!(rdna4.matches("v_wmma").count(), 8, "{dtype} {gfx}");
        }
        let cdna3 = listing(Gfx::Gfx942, 8);
        assert!(!cdna3.contains("fp8") && !cdna3.contains("bf8"), "{dtype}");
        assert_eq!(cdna3.matches("v_mfma_f32_32x32x8_f16 ").count(), 4);
    }
}

/// `TILE_DUMP` writes the MFMA program of gfx942 as `thread.mfma.txt`
/// and gfx950's as `thread.mfma950.txt`, next to the portable
/// `thread.txt`, and each target's assembly with its `v_mfma`s.
#[test]
fn the_dump_holds_the_mfma_program() {
    use tile_codegen::driver::{self, Options};
    let dir = std::env::temp_dir().join(format!("tile-mfma-dump-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut func = samples::matmul(64, 64, 32, DType::BF16).unwrap();
    let options = Options {
        targets: vec![Target::Amdgpu(Gfx::Gfx942), Target::Amdgpu(Gfx::Gfx950)],
        num_warps: 4,
        codegen: CodegenOptions::default(),
        dump_dir: Some(dir.clone()),
        num_stages: None,
        cache: None,
        max_threads: None,
        target_warps: Vec::new(),
        target_stages: Vec::new(),
    };
    driver::compile(&mut func, "default", &options).unwrap();
    let read = |file: &str| {
        std::fs::read_to_string(dir.join("matmul/default").join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"))
    };
    let mfma = read("thread.mfma.txt");
    // 4 wavefronts of 64 lanes, lowered as 8 warps of 32.
    assert!(mfma.starts_with("kernel matmul warps 8 ("), "{mfma}");
    // 2×2 waves, each one 32×32 block, four k-steps.
    assert_eq!(mfma.matches("mma.mfma32x32x8.bf16 ").count(), 4, "{mfma}");
    assert!(!read("thread.txt").contains("mma."));
    assert_eq!(
        read("gfx942.s").matches("v_mfma_f32_32x32x8_bf16").count(),
        4
    );
    // gfx950's program beside it: two k-steps of CDNA 4's 32×32×16.
    let mfma950 = read("thread.mfma950.txt");
    assert_eq!(
        mfma950.matches("mma.mfma32x32x16.bf16 ").count(),
        2,
        "{mfma950}"
    );
    assert_eq!(
        read("gfx950.s").matches("v_mfma_f32_32x32x16_bf16").count(),
        2
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_host_is_not_a_gpu_target() {
    let program = lower(&samples::vector_add(64).unwrap(), &LowerOptions::warps(1)).unwrap();
    let host = Target::Host(tile_abi::HostIsa::X86_64);
    let err = emit(&program, host, &CodegenOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`x86_64` is not a GPU target; thread-level programs are emitted for sm_* and gfx* targets"
    );
}

/// A pipelined `wgmma` loop whose operands the TMA copies: the kernel takes
/// a tensor map per operand by value (`.param .align 64 .b8 …[128]`, a
/// grid constant), one thread issues `cp.async.bulk.tensor.2d` boxes and
/// `mbarrier.arrive.expect_tx`, every thread spins on
/// `mbarrier.try_wait.parity`; `ptxas -arch=sm_90a` assembles it with no
/// spill.
#[test]
fn tma_copies_assemble_for_sm_90a() {
    require(Tool::Ptxas);
    let func = samples::matmul(128, 128, 64, DType::F16).unwrap();
    let options = LowerOptions::warps(8)
        .with_tensor_cores(Target::Nvptx(Sm::Sm90a).tensor_cores())
        .with_stages(3)
        .with_tma(true);
    let program = lower(&func, &options).unwrap();
    let ptx = emit(
        &program,
        Target::Nvptx(Sm::Sm90a),
        &CodegenOptions::default(),
    )
    .unwrap()
    .assembly;
    for needle in [
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
        "mbarrier.arrive.expect_tx.shared.b64",
        "mbarrier.try_wait.parity.shared.b64",
        "mbarrier.init.shared.b64",
        ".param .align 64 .b8 matmul_param_16[128]",
        ".param .align 64 .b8 matmul_param_17[128]",
    ] {
        assert!(ptx.contains(needle), "{needle}:\n{ptx}");
    }
    assert!(!ptx.contains("cp.async.cg"), "no cp.async is left");
    // The image says which maps it takes, and its entry takes them.
    assert_eq!(
        tile_abi::tma::maps_of_ptx(&ptx),
        Ok(vec![(0, 128), (1, 64)])
    );
    tile_abi::params::check_ptx_signature(&ptx, &func).unwrap();
    let usage = tools::ptxas_resource_usage(&ptx, Sm::Sm90a).unwrap();
    assert!(usage.contains("0 bytes spill stores"), "{usage}");
}

/// The TMA feeding `mma.sync` on sm_90, whose own PTX version (7.8)
/// predates the TMA's instructions: the image declares PTX 8.0 and
/// `ptxas -arch=sm_90` assembles it with no spill. A target without the TMA
/// refuses such a program with an error, not LLVM's abort.
#[test]
fn tma_copies_for_mma_sync_declare_ptx_8_on_sm_90() {
    require(Tool::Ptxas);
    let func = samples::matmul(128, 128, 64, DType::F16).unwrap();
    let lowered = |target: Target| {
        let options = LowerOptions::warps(8)
            .with_tensor_cores(target.tensor_cores())
            .with_stages(3)
            .with_tma(true);
        lower(&func, &options).unwrap()
    };
    let sm90 = Target::Nvptx(Sm::Sm90);
    let ptx = emit(&lowered(sm90), sm90, &CodegenOptions::default())
        .unwrap()
        .assembly;
    for needle in [
        ".version 8.0",
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
    ] {
        assert!(ptx.contains(needle), "{needle}:\n{ptx}");
    }
    assert!(!ptx.contains("cp.async.cg"), "no cp.async is left");
    let usage = tools::ptxas_resource_usage(&ptx, Sm::Sm90).unwrap();
    assert!(usage.contains("0 bytes spill stores"), "{usage}");

    let sm80 = Target::Nvptx(Sm::Sm80);
    let error = emit(&lowered(sm90), sm80, &CodegenOptions::default()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the LLVM emitter does not support the TMA's copies on sm_80, which has no TMA (sm_90 and later do)"
    );
}

/// Rows of `x` times the row vector `w`, 1024 columns at a time in a loop,
/// masked: a wide access's element-by-element path sits in the loop.
fn scale_rows() -> Function {
    tile_ir::text::parse_function(
        "kernel @scale_rows(%x: tensor<f32, 2>, %w: tensor<f32, 2>, %y: tensor<f32, 2>) {
  %row = program_id 0 : i32
  %cols = dim %x axis 1 : i32
  %block = constant 1024 : i32
  %one = constant 1 : i32
  %zero = constant 0 : i32
  %last = sub %block, %one : i32
  %padded = add %cols, %last : i32
  %blocks = div %padded, %block : i32
  %vx = partition_view %x [1, 1024] : view<f32, [1, 1024]>
  %vw = partition_view %w [1, 1024] : view<f32, [1, 1024]>
  %vy = partition_view %y [1, 1024] : view<f32, [1, 1024]>
  for %c = %zero to %blocks step %one {
    %a = load_masked %vx[%row, %c] pad(zero) : tile<1x1024xf32>
    %b = load_masked %vw[%zero, %c] pad(zero) : tile<1x1024xf32>
    %p = mul %a, %b : tile<1x1024xf32>
    store_masked %p, %vy[%row, %c]
    yield
  }
}",
    )
    .unwrap()
}

#[test]
fn a_loop_keeps_no_address_per_element_in_registers() {
    // Each thread's eight elements of x, w and y have a vector path and an
    // element-by-element one; LLVM's loop strength reduction made each
    // element's address of the latter an induction variable of the loop
    // (64 bits each: 96 registers) until the lowering hid their origin
    // (`opaque`: 53).
    require(Tool::Ptxas);
    let out = emitted(&scale_rows(), 4, Target::Nvptx(Sm::Sm80));
    let usage = tools::ptxas_resource_usage(&out.assembly, Sm::Sm80).unwrap();
    let registers = used_registers(&usage);
    assert!(registers <= 64, "{usage}");
}

/// The registers per thread of the first function `ptxas -v` reports in
/// `usage`.
fn used_registers(usage: &str) -> u32 {
    usage
        .split("Used ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no register count in {usage}"))
}

/// The exact f32 `cos` reduces huge arguments in a function of its own, a
/// loop over the chunks of 2/π: straight-line and inlined into `cos`, the
/// 50 chunks' products were computed ahead and live at once (LLVM 22), the
/// math functions spilled 1.5 KB on sm_80 and every kernel calling `cos`
/// took 255 registers.
#[test]
fn the_huge_trig_reduction_stays_out_of_line() {
    require(Tool::Ptxas);
    let func = samples::unary(UnaryOp::Cos, DType::F32, 256).unwrap();
    let ptx = emitted(&func, 4, Target::Nvptx(Sm::Sm80)).assembly;
    let huge = ptx
        .lines()
        .filter(|l| l.starts_with(".func") && l.contains("reduce_huge_$_f64("))
        .count();
    assert_eq!(huge, 1, "{ptx}");
    let usage = tools::ptxas_resource_usage(&ptx, Sm::Sm80).unwrap();
    let lines: Vec<&str> = usage.lines().collect();
    for (at, line) in lines.iter().enumerate() {
        if line.contains("Function properties for tile_$_math_$_") {
            assert!(lines[at + 1].contains(" 0 bytes spill stores"), "{usage}");
        }
    }
    let registers = used_registers(&usage);
    assert!(registers <= 96, "{usage}");
}

#[test]
fn the_exact_library_is_one_function_on_gpus() {
    // softmax(4, 256) on 4 warps: eight `exp`s per thread. ptxas (and
    // LLVM's AMDGPU back end) compiles the function (f32 in and out, f64
    // inside) once and the kernel calls it eight times.
    require(Tool::Ptxas);
    let func = samples::softmax(4, 256).unwrap();
    let ptx = emitted(&func, 4, Target::Nvptx(Sm::Sm80)).assembly;
    let defined = ptx
        .lines()
        .filter(|l| l.starts_with(".func") && l.contains("tile_$_math_$_exp_$_f32("))
        .count();
    let calls = ptx.matches("call.uni").count();
    assert_eq!((defined, calls), (1, 8), "{ptx}");
    // LLVM numbers call sequences process-wide; the image does not.
    let again = emitted(&func, 4, Target::Nvptx(Sm::Sm80)).assembly;
    assert_eq!(again, ptx, "the same kernel compiled twice");
    // Max is one `max.NaN.f32` each: no compare-and-select sequence.
    assert!(ptx.contains("max.NaN.f32"), "{ptx}");
    assert!(!ptx.contains("setp.geu.f32"), "{ptx}");
    let usage = tools::ptxas_resource_usage(&ptx, Sm::Sm80).unwrap();
    assert!(usage.contains("0 bytes spill stores"), "{usage}");
    // The AMDGPU calls need no stack: the kernel has no private segment.
    for gfx in [Gfx::Gfx942, Gfx::Gfx1100] {
        let amd = emitted(&func, 4, Target::Amdgpu(gfx)).assembly;
        assert_eq!(amd.matches("s_swappc_b64").count(), 8, "{gfx}:\n{amd}");
        assert!(
            amd.contains(".amdhsa_private_segment_fixed_size 0"),
            "{gfx}:\n{amd}"
        );
    }
}

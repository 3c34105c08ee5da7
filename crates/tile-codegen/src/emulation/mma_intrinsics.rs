//! The tensor-core intrinsics the emulation target models (`mma.sync`,
//! RDNA's WMMA, CDNA's MFMA) and the definitions that replace them: each
//! passes the lane's fragments to the runtime as one buffer of 32-bit
//! words ([`RuntimeCall::Mma`]), which steps the whole warp or wave.

use tile_abi::emulation::{RuntimeCall, RUNTIME_SYMBOL};
use tile_hw::mma::{Fragment, MmaKind};

/// A tensor-core intrinsic: its name, instruction, parameter types with
/// the 32-bit words each occupies (A and B registers, then C), its return
/// type (D, in C's words), and the parameters that follow C.
pub(super) struct MmaIntrinsic {
    /// The intrinsic's name, without `@`.
    pub(super) name: &'static str,
    kind: MmaKind,
    params: &'static [(&'static str, usize)],
    ret: &'static str,
    controls: Controls,
}

/// The parameters of a tensor-core intrinsic after its accumulators.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Controls {
    /// None.
    None,
    /// MFMA's three `i32`s: `cbsz`, `abid`, `blgp`.
    Mfma,
    /// A block-scaled `mma.sync`'s scales, each an `i32` register with
    /// two `i16` selectors: `sfa, byte-id-a, thread-id-a, sfb, byte-id-b,
    /// thread-id-b`.
    Scales,
    /// A scaled MFMA's six `i32`s: `cbsz` and `blgp` (the formats of A and
    /// B, which choose the instruction: its `kind` is the E4M3 form), then
    /// `op_sel_a, scale_a, op_sel_b, scale_b`.
    MfmaScales,
}

/// Every tensor-core intrinsic the emulation target models.
pub(super) const MMA_INTRINSICS: [MmaIntrinsic; 30] = [
    MmaIntrinsic {
        name: "llvm.nvvm.mma.m16n8k16.row.col.f32.f32",
        kind: MmaKind::F16M16N8K16,
        params: &[("<2 x half>", 1); 6],
        ret: "{ float, float, float, float }",
        controls: Controls::None,
    },
    MmaIntrinsic {
        name: "llvm.nvvm.mma.m16n8k16.row.col.bf16",
        kind: MmaKind::Bf16M16N8K16,
        params: &[("i32", 1); 6],
        ret: "{ float, float, float, float }",
        controls: Controls::None,
    },
    MmaIntrinsic {
        name: "llvm.nvvm.mma.m16n8k8.row.col.tf32",
        kind: MmaKind::Tf32M16N8K8,
        params: &[("i32", 1); 6],
        ret: "{ float, float, float, float }",
        controls: Controls::None,
    },
    MmaIntrinsic {
        name: "llvm.nvvm.mma.m16n8k32.row.col.f32.e4m3.e4m3.f32",
        kind: MmaKind::E4m3M16N8K32,
        params: &[("i32", 1); 6],
        ret: "{ float, float, float, float }",
        controls: Controls::None,
    },
    MmaIntrinsic {
        name: "llvm.nvvm.mma.m16n8k32.row.col.f32.e5m2.e5m2.f32",
        kind: MmaKind::E5m2M16N8K32,
        params: &[("i32", 1); 6],
        ret: "{ float, float, float, float }",
        controls: Controls::None,
    },
    MmaIntrinsic {
        name:
            "llvm.nvvm.mma.block.scale.m16n8k32.row.col.mxf8f6f4.scale.1x.f32.e4m3.e4m3.f32.ue8m0",
        kind: MmaKind::E4m3Ue8m0M16N8K32,
        params: &[("i32", 1); 6],
        ret: "{ float, float, float, float }",
        controls: Controls::Scales,
    },
    MmaIntrinsic {
        name:
            "llvm.nvvm.mma.block.scale.m16n8k32.row.col.mxf8f6f4.scale.1x.f32.e5m2.e5m2.f32.ue8m0",
        kind: MmaKind::E5m2Ue8m0M16N8K32,
        params: &[("i32", 1); 6],
        ret: "{ float, float, float, float }",
        controls: Controls::Scales,
    },
    MmaIntrinsic {
        name:
            "llvm.nvvm.mma.block.scale.m16n8k32.row.col.mxf8f6f4.scale.1x.f32.e2m3.e2m3.f32.ue8m0",
        kind: MmaKind::E2m3Ue8m0M16N8K32,
        params: &[("i32", 1); 6],
        ret: "{ float, float, float, float }",
        controls: Controls::Scales,
    },
    MmaIntrinsic {
        name:
            "llvm.nvvm.mma.block.scale.m16n8k32.row.col.mxf8f6f4.scale.1x.f32.e3m2.e3m2.f32.ue8m0",
        kind: MmaKind::E3m2Ue8m0M16N8K32,
        params: &[("i32", 1); 6],
        ret: "{ float, float, float, float }",
        controls: Controls::Scales,
    },
    MmaIntrinsic {
        name:
            "llvm.nvvm.mma.block.scale.m16n8k32.row.col.mxf8f6f4.scale.1x.f32.e2m1.e2m1.f32.ue8m0",
        kind: MmaKind::E2m1Ue8m0M16N8K32,
        params: &[("i32", 1); 6],
        ret: "{ float, float, float, float }",
        controls: Controls::Scales,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v8i32.v8i32",
        kind: MmaKind::MfmaE4m3Ue8m0M32N32K64,
        params: &[("<8 x i32>", 8), ("<8 x i32>", 8)],
        ret: "<16 x float>",
        controls: Controls::MfmaScales,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v8i32",
        kind: MmaKind::MfmaE4m3Ue8m0M16N16K128,
        params: &[("<8 x i32>", 8), ("<8 x i32>", 8)],
        ret: "<4 x float>",
        controls: Controls::MfmaScales,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16",
        kind: MmaKind::WmmaF16M16N16K16,
        params: &[("<16 x half>", 8), ("<16 x half>", 8)],
        ret: "<8 x float>",
        controls: Controls::None,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32.v16i16",
        kind: MmaKind::WmmaBf16M16N16K16,
        params: &[("<16 x i16>", 8), ("<16 x i16>", 8)],
        ret: "<8 x float>",
        controls: Controls::None,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v8f16",
        kind: MmaKind::Wmma12F16M16N16K16,
        params: &[("<8 x half>", 4), ("<8 x half>", 4)],
        ret: "<8 x float>",
        controls: Controls::None,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32.v8i16",
        kind: MmaKind::Wmma12Bf16M16N16K16,
        params: &[("<8 x i16>", 4), ("<8 x i16>", 4)],
        ret: "<8 x float>",
        controls: Controls::None,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.32x32x8f16",
        kind: MmaKind::MfmaF16M32N32K8,
        params: &[("<4 x half>", 2), ("<4 x half>", 2)],
        ret: "<16 x float>",
        controls: Controls::Mfma,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.32x32x8bf16.1k",
        kind: MmaKind::MfmaBf16M32N32K8,
        params: &[("<4 x i16>", 2), ("<4 x i16>", 2)],
        ret: "<16 x float>",
        controls: Controls::Mfma,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.16x16x16f16",
        kind: MmaKind::MfmaF16M16N16K16,
        params: &[("<4 x half>", 2), ("<4 x half>", 2)],
        ret: "<4 x float>",
        controls: Controls::Mfma,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.16x16x16bf16.1k",
        kind: MmaKind::MfmaBf16M16N16K16,
        params: &[("<4 x i16>", 2), ("<4 x i16>", 2)],
        ret: "<4 x float>",
        controls: Controls::Mfma,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.32x32x16.f16",
        kind: MmaKind::MfmaF16M32N32K16,
        params: &[("<8 x half>", 4), ("<8 x half>", 4)],
        ret: "<16 x float>",
        controls: Controls::Mfma,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.32x32x16.bf16",
        kind: MmaKind::MfmaBf16M32N32K16,
        params: &[("<8 x i16>", 4), ("<8 x i16>", 4)],
        ret: "<16 x float>",
        controls: Controls::Mfma,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.16x16x32.f16",
        kind: MmaKind::MfmaF16M16N16K32,
        params: &[("<8 x half>", 4), ("<8 x half>", 4)],
        ret: "<4 x float>",
        controls: Controls::Mfma,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.16x16x32.bf16",
        kind: MmaKind::MfmaBf16M16N16K32,
        params: &[("<8 x i16>", 4), ("<8 x i16>", 4)],
        ret: "<4 x float>",
        controls: Controls::Mfma,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.32x32x16.fp8.fp8",
        kind: MmaKind::MfmaE4m3M32N32K16,
        params: &[("i64", 2), ("i64", 2)],
        ret: "<16 x float>",
        controls: Controls::Mfma,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.32x32x16.bf8.bf8",
        kind: MmaKind::MfmaE5m2M32N32K16,
        params: &[("i64", 2), ("i64", 2)],
        ret: "<16 x float>",
        controls: Controls::Mfma,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.16x16x32.fp8.fp8",
        kind: MmaKind::MfmaE4m3M16N16K32,
        params: &[("i64", 2), ("i64", 2)],
        ret: "<4 x float>",
        controls: Controls::Mfma,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.16x16x32.bf8.bf8",
        kind: MmaKind::MfmaE5m2M16N16K32,
        params: &[("i64", 2), ("i64", 2)],
        ret: "<4 x float>",
        controls: Controls::Mfma,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.wmma.f32.16x16x16.fp8.fp8.v8f32.v2i32",
        kind: MmaKind::Wmma12E4m3M16N16K16,
        params: &[("<2 x i32>", 2), ("<2 x i32>", 2)],
        ret: "<8 x float>",
        controls: Controls::None,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.wmma.f32.16x16x16.bf8.bf8.v8f32.v2i32",
        kind: MmaKind::Wmma12E5m2M16N16K16,
        params: &[("<2 x i32>", 2), ("<2 x i32>", 2)],
        ret: "<8 x float>",
        controls: Controls::None,
    },
];

/// The definition of `name`, replacing the tensor-core intrinsic `m`: the
/// lane's registers (its operand parameters, then its accumulators: 4
/// `float`s for `mma.sync`, a vector for WMMA and MFMA, then a block-scaled
/// instruction's two scale registers) go to a stack buffer of the
/// instruction's words, whose address a [`RuntimeCall::Mma`] call passes
/// with MFMA's controls or the scales' selectors; D comes back in the
/// accumulators' words.
pub(super) fn mma_definition(name: &str, m: &MmaIntrinsic) -> String {
    let words = m.kind.words();
    let nc = m.kind.elements(Fragment::C);
    let mut params: Vec<(String, usize)> = m
        .params
        .iter()
        .map(|&(ty, w)| (ty.to_string(), w))
        .collect();
    if m.ret.starts_with('<') {
        params.push((m.ret.to_string(), nc));
    } else {
        params.extend(std::iter::repeat_n(("float".to_string(), 1), nc));
    }
    let mut body = format!("  %buf = alloca [{words} x i32], align 4\n");
    let mut at = 0;
    for (i, (ty, w)) in params.iter().enumerate() {
        let word_ty = if *w == 1 {
            "i32".to_string()
        } else {
            format!("<{w} x i32>")
        };
        body.push_str(&format!(
            "  %w{i} = bitcast {ty} %p{i} to {word_ty}\n  %a{i} = getelementptr inbounds [{words} x i32], ptr %buf, i64 0, i64 {at}\n  store {word_ty} %w{i}, ptr %a{i}, align 4\n"
        ));
        at += w;
    }
    let mut list: Vec<String> = params
        .iter()
        .enumerate()
        .map(|(i, (ty, _))| format!("{ty} %p{i}"))
        .collect();
    let controls = match m.controls {
        Controls::None => "0",
        Controls::Mfma => {
            // cbsz | abid << 8 | blgp << 16, for the runtime to check.
            list.extend((0..3).map(|j| format!("i32 %q{j}")));
            body.push_str("  %k0 = zext i32 %q0 to i64\n  %k1 = zext i32 %q1 to i64\n  %k2 = zext i32 %q2 to i64\n  %s1 = shl i64 %k1, 8\n  %s2 = shl i64 %k2, 16\n  %o1 = or i64 %k0, %s1\n  %ctl = or i64 %o1, %s2\n");
            "%ctl"
        }
        Controls::Scales => {
            // The scale registers after C; the selectors byte-id-a |
            // thread-id-a << 8 | byte-id-b << 16 | thread-id-b << 24, for
            // the runtime to check.
            for (j, word) in [(0, at), (3, at + 1)] {
                list.extend([
                    format!("i32 %q{j}"),
                    format!("i16 %q{}", j + 1),
                    format!("i16 %q{}", j + 2),
                ]);
                body.push_str(&format!(
                    "  %sa{j} = getelementptr inbounds [{words} x i32], ptr %buf, i64 0, i64 {word}\n  store i32 %q{j}, ptr %sa{j}, align 4\n"
                ));
            }
            for (j, shift) in [(1, 0), (2, 8), (4, 16), (5, 24)] {
                body.push_str(&format!(
                    "  %k{j} = zext i16 %q{j} to i64\n  %s{j} = shl i64 %k{j}, {shift}\n"
                ));
            }
            body.push_str(
                "  %o1 = or i64 %s1, %s2\n  %o2 = or i64 %s4, %s5\n  %ctl = or i64 %o1, %o2\n",
            );
            "%ctl"
        }
        Controls::MfmaScales => {
            list.extend((0..6).map(|j| format!("i32 %q{j}")));
            for (j, word) in [(3, at), (5, at + 1)] {
                body.push_str(&format!(
                    "  %sa{j} = getelementptr inbounds [{words} x i32], ptr %buf, i64 0, i64 {word}\n  store i32 %q{j}, ptr %sa{j}, align 4\n"
                ));
            }
            // The instruction: the E4M3 form's code plus `cbsz`; the
            // controls (cbsz ^ blgp) | (cbsz >> 1) << 4 | op_sel_a << 8 |
            // op_sel_b << 16, for the runtime to check.
            body.push_str(&format!(
                "  %k0 = zext i32 %q0 to i64\n  %kind = add i64 %k0, {}\n  %x01 = xor i32 %q0, %q1\n  %hi = lshr i32 %q0, 1\n  %hi4 = shl i32 %hi, 4\n  %o2 = shl i32 %q2, 8\n  %o4 = shl i32 %q4, 16\n  %m1 = or i32 %x01, %hi4\n  %m2 = or i32 %o2, %o4\n  %m3 = or i32 %m1, %m2\n  %ctl = zext i32 %m3 to i64\n",
                m.kind as u64
            ));
            "%ctl"
        }
    };
    let kind = match m.controls {
        Controls::MfmaScales => "%kind".to_string(),
        _ => (m.kind as u64).to_string(),
    };
    body.push_str(&format!(
        "  %addr = ptrtoint ptr %buf to i64\n  %f = load ptr, ptr @{RUNTIME_SYMBOL}\n  %r = call i64 %f(i32 {}, i64 %addr, i64 {kind}, i64 {controls}, i64 0)\n  %c = getelementptr inbounds [{words} x i32], ptr %buf, i64 0, i64 {}\n",
        RuntimeCall::Mma as u32,
        m.kind.c_word()
    ));
    let result = if m.ret.starts_with('<') {
        body.push_str(&format!("  %d = load {}, ptr %c, align 4\n", m.ret));
        "%d".to_string()
    } else {
        let mut acc = "poison".to_string();
        for j in 0..nc {
            body.push_str(&format!(
                "  %c{j} = getelementptr inbounds float, ptr %c, i64 {j}\n  %f{j} = load float, ptr %c{j}, align 4\n  %d{j} = insertvalue {} {acc}, float %f{j}, {j}\n",
                m.ret
            ));
            acc = format!("%d{j}");
        }
        acc
    };
    format!(
        "define internal {} @{name}({}) {{\n{body}  ret {} {result}\n}}\n",
        m.ret,
        list.join(", "),
        m.ret
    )
}

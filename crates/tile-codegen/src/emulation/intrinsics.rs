//! The GPU targets' intrinsics and what replaces each: a function of the
//! same type that calls the runtime's entry point with a [`RuntimeCall`].
//!
//! The replacement is made on the module's text, where an intrinsic is a
//! unique symbol (`@llvm.nvvm.read.ptx.sreg.tid.x(`): every call is redirected to
//! `@tile_emu.<name>`, the intrinsic's declaration is dropped, and the
//! definitions are appended. An intrinsic of the targets' namespaces that is
//! not in the table is an error: the emulation target must model every
//! instruction a GPU receives.

use crate::EmitError;
use tile_abi::emulation::{ApproxFn, RuntimeCall, ShuffleMode, RUNTIME_SYMBOL};
use tile_hw::ldmatrix::LdMatrix;
use tile_hw::mma::{Fragment, MmaKind};

/// One replaced intrinsic.
struct Replacement {
    /// The intrinsic's name, without `@`.
    intrinsic: String,
    /// The return type in LLVM IR (`i32`, `float`, `void`, `ptr
    /// addrspace(4)`).
    ret: &'static str,
    /// The parameter types (integers are zero-extended to the runtime's
    /// `u64` operands, floats' bits too, pointers converted to their
    /// address).
    params: &'static [&'static str],
    /// The op and its four operands.
    op: RuntimeCall,
    operands: [Operand; 4],
}

/// An operand of a runtime call.
#[derive(Clone, Copy)]
enum Operand {
    /// A constant.
    Const(u64),
    /// Parameter `i`, zero-extended.
    Param(usize),
    /// A shuffle's mode, with parameter `i` (the member mask) above bit 32.
    ModeAndMask(ShuffleMode, usize),
}

/// The axes of the intrinsics that read a thread, block or grid index.
const AXES: [(&str, u64); 3] = [("x", 0), ("y", 1), ("z", 2)];

/// Every intrinsic the emulation target models.
fn table() -> Vec<Replacement> {
    use Operand::{Const, ModeAndMask, Param};
    let index = |intrinsic: String, op: RuntimeCall, axis: u64| Replacement {
        intrinsic,
        ret: "i32",
        params: &[],
        op,
        operands: [Const(axis), Const(0), Const(0), Const(0)],
    };
    let mut table = Vec::new();
    for (name, axis) in AXES {
        for (sreg, op) in [
            ("tid", RuntimeCall::ThreadId),
            ("ctaid", RuntimeCall::BlockId),
            ("nctaid", RuntimeCall::GridDim),
            ("ntid", RuntimeCall::BlockDim),
        ] {
            table.push(index(
                format!("llvm.nvvm.read.ptx.sreg.{sreg}.{name}"),
                op,
                axis,
            ));
        }
        table.push(index(
            format!("llvm.amdgcn.workitem.id.{name}"),
            RuntimeCall::ThreadId,
            axis,
        ));
        table.push(index(
            format!("llvm.amdgcn.workgroup.id.{name}"),
            RuntimeCall::BlockId,
            axis,
        ));
    }
    for (barrier, params) in [
        ("llvm.nvvm.barrier.cta.sync.aligned.all", &["i32"][..]),
        ("llvm.amdgcn.s.barrier", &[]),
    ] {
        table.push(Replacement {
            intrinsic: barrier.to_string(),
            ret: "void",
            params,
            op: RuntimeCall::Barrier,
            operands: [Const(0), Const(0), Const(0), Const(0)],
        });
    }
    for (mode, code) in [
        ("up", ShuffleMode::Up),
        ("down", ShuffleMode::Down),
        ("bfly", ShuffleMode::Bfly),
        ("idx", ShuffleMode::Idx),
    ] {
        table.push(Replacement {
            intrinsic: format!("llvm.nvvm.shfl.sync.{mode}.i32"),
            ret: "i32",
            params: &["i32", "i32", "i32", "i32"],
            op: RuntimeCall::Shuffle,
            operands: [ModeAndMask(code, 0), Param(1), Param(2), Param(3)],
        });
    }
    table.push(Replacement {
        intrinsic: "llvm.nvvm.cp.async.cg.shared.global.16.s".into(),
        ret: "void",
        params: &["ptr addrspace(3)", "ptr addrspace(1)", "i32"],
        op: RuntimeCall::CopyAsync,
        operands: [Param(0), Param(1), Param(2), Const(0)],
    });
    table.push(Replacement {
        intrinsic: "llvm.nvvm.mbarrier.init.shared".into(),
        ret: "void",
        params: &["ptr addrspace(3)", "i32"],
        op: RuntimeCall::MbarrierInit,
        operands: [Param(0), Param(1), Const(0), Const(0)],
    });
    table.push(Replacement {
        intrinsic: "llvm.nvvm.cp.async.commit.group".into(),
        ret: "void",
        params: &[],
        op: RuntimeCall::CommitAsync,
        operands: [Const(0), Const(0), Const(0), Const(0)],
    });
    table.push(Replacement {
        intrinsic: "llvm.nvvm.cp.async.wait.group".into(),
        ret: "void",
        params: &["i32"],
        op: RuntimeCall::WaitAsync,
        operands: [Param(0), Const(0), Const(0), Const(0)],
    });
    table.push(Replacement {
        intrinsic: "llvm.amdgcn.ds.bpermute".into(),
        ret: "i32",
        params: &["i32", "i32"],
        op: RuntimeCall::Bpermute,
        operands: [Param(0), Param(1), Const(0), Const(0)],
    });
    for (intrinsic, params, f) in [
        ("llvm.nvvm.ex2.approx.f32", &["float"][..], ApproxFn::Exp2),
        ("llvm.nvvm.lg2.approx.f", &["float"], ApproxFn::Log2),
        ("llvm.nvvm.rsqrt.approx.f", &["float"], ApproxFn::Rsqrt),
        ("llvm.nvvm.div.approx.f", &["float", "float"], ApproxFn::Div),
        ("llvm.amdgcn.exp2.f32", &["float"], ApproxFn::Exp2),
        ("llvm.amdgcn.log.f32", &["float"], ApproxFn::Log2),
        ("llvm.amdgcn.rsq.f32", &["float"], ApproxFn::Rsqrt),
        ("llvm.amdgcn.rcp.f32", &["float"], ApproxFn::Rcp),
    ] {
        let divisor = if params.len() == 2 {
            Param(1)
        } else {
            Const(0)
        };
        table.push(Replacement {
            intrinsic: intrinsic.into(),
            ret: "float",
            params,
            op: RuntimeCall::ApproxMath,
            operands: [Const(f as u64), Param(0), divisor, Const(0)],
        });
    }
    table.push(Replacement {
        intrinsic: "llvm.amdgcn.dispatch.ptr".into(),
        ret: "ptr addrspace(4)",
        params: &[],
        op: RuntimeCall::DispatchPtr,
        operands: [Const(0), Const(0), Const(0), Const(0)],
    });
    table
}

/// A tensor-core intrinsic: its name, instruction, parameter types with
/// the 32-bit words each occupies (A and B registers, then C), its return
/// type (D, in C's words), and whether three `i32` controls follow C
/// (MFMA's `cbsz`, `abid`, `blgp`).
struct MmaIntrinsic {
    name: &'static str,
    kind: MmaKind,
    params: &'static [(&'static str, usize)],
    ret: &'static str,
    controls: bool,
}

/// Every tensor-core intrinsic the emulation target models.
const MMA_INTRINSICS: [MmaIntrinsic; 23] = [
    MmaIntrinsic {
        name: "llvm.nvvm.mma.m16n8k16.row.col.f32.f32",
        kind: MmaKind::F16M16N8K16,
        params: &[("<2 x half>", 1); 6],
        ret: "{ float, float, float, float }",
        controls: false,
    },
    MmaIntrinsic {
        name: "llvm.nvvm.mma.m16n8k16.row.col.bf16",
        kind: MmaKind::Bf16M16N8K16,
        params: &[("i32", 1); 6],
        ret: "{ float, float, float, float }",
        controls: false,
    },
    MmaIntrinsic {
        name: "llvm.nvvm.mma.m16n8k8.row.col.tf32",
        kind: MmaKind::Tf32M16N8K8,
        params: &[("i32", 1); 6],
        ret: "{ float, float, float, float }",
        controls: false,
    },
    MmaIntrinsic {
        name: "llvm.nvvm.mma.m16n8k32.row.col.f32.e4m3.e4m3.f32",
        kind: MmaKind::E4m3M16N8K32,
        params: &[("i32", 1); 6],
        ret: "{ float, float, float, float }",
        controls: false,
    },
    MmaIntrinsic {
        name: "llvm.nvvm.mma.m16n8k32.row.col.f32.e5m2.e5m2.f32",
        kind: MmaKind::E5m2M16N8K32,
        params: &[("i32", 1); 6],
        ret: "{ float, float, float, float }",
        controls: false,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16",
        kind: MmaKind::WmmaF16M16N16K16,
        params: &[("<16 x half>", 8), ("<16 x half>", 8)],
        ret: "<8 x float>",
        controls: false,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32.v16i16",
        kind: MmaKind::WmmaBf16M16N16K16,
        params: &[("<16 x i16>", 8), ("<16 x i16>", 8)],
        ret: "<8 x float>",
        controls: false,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v8f16",
        kind: MmaKind::Wmma12F16M16N16K16,
        params: &[("<8 x half>", 4), ("<8 x half>", 4)],
        ret: "<8 x float>",
        controls: false,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32.v8i16",
        kind: MmaKind::Wmma12Bf16M16N16K16,
        params: &[("<8 x i16>", 4), ("<8 x i16>", 4)],
        ret: "<8 x float>",
        controls: false,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.32x32x8f16",
        kind: MmaKind::MfmaF16M32N32K8,
        params: &[("<4 x half>", 2), ("<4 x half>", 2)],
        ret: "<16 x float>",
        controls: true,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.32x32x8bf16.1k",
        kind: MmaKind::MfmaBf16M32N32K8,
        params: &[("<4 x i16>", 2), ("<4 x i16>", 2)],
        ret: "<16 x float>",
        controls: true,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.16x16x16f16",
        kind: MmaKind::MfmaF16M16N16K16,
        params: &[("<4 x half>", 2), ("<4 x half>", 2)],
        ret: "<4 x float>",
        controls: true,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.16x16x16bf16.1k",
        kind: MmaKind::MfmaBf16M16N16K16,
        params: &[("<4 x i16>", 2), ("<4 x i16>", 2)],
        ret: "<4 x float>",
        controls: true,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.32x32x16.f16",
        kind: MmaKind::MfmaF16M32N32K16,
        params: &[("<8 x half>", 4), ("<8 x half>", 4)],
        ret: "<16 x float>",
        controls: true,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.32x32x16.bf16",
        kind: MmaKind::MfmaBf16M32N32K16,
        params: &[("<8 x i16>", 4), ("<8 x i16>", 4)],
        ret: "<16 x float>",
        controls: true,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.16x16x32.f16",
        kind: MmaKind::MfmaF16M16N16K32,
        params: &[("<8 x half>", 4), ("<8 x half>", 4)],
        ret: "<4 x float>",
        controls: true,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.16x16x32.bf16",
        kind: MmaKind::MfmaBf16M16N16K32,
        params: &[("<8 x i16>", 4), ("<8 x i16>", 4)],
        ret: "<4 x float>",
        controls: true,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.32x32x16.fp8.fp8",
        kind: MmaKind::MfmaE4m3M32N32K16,
        params: &[("i64", 2), ("i64", 2)],
        ret: "<16 x float>",
        controls: true,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.32x32x16.bf8.bf8",
        kind: MmaKind::MfmaE5m2M32N32K16,
        params: &[("i64", 2), ("i64", 2)],
        ret: "<16 x float>",
        controls: true,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.16x16x32.fp8.fp8",
        kind: MmaKind::MfmaE4m3M16N16K32,
        params: &[("i64", 2), ("i64", 2)],
        ret: "<4 x float>",
        controls: true,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.mfma.f32.16x16x32.bf8.bf8",
        kind: MmaKind::MfmaE5m2M16N16K32,
        params: &[("i64", 2), ("i64", 2)],
        ret: "<4 x float>",
        controls: true,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.wmma.f32.16x16x16.fp8.fp8.v8f32.v2i32",
        kind: MmaKind::Wmma12E4m3M16N16K16,
        params: &[("<2 x i32>", 2), ("<2 x i32>", 2)],
        ret: "<8 x float>",
        controls: false,
    },
    MmaIntrinsic {
        name: "llvm.amdgcn.wmma.f32.16x16x16.bf8.bf8.v8f32.v2i32",
        kind: MmaKind::Wmma12E5m2M16N16K16,
        params: &[("<2 x i32>", 2), ("<2 x i32>", 2)],
        ret: "<8 x float>",
        controls: false,
    },
];

/// The definition of `name`, replacing the tensor-core intrinsic `m`: the
/// lane's registers (its operand parameters, then its accumulators: 4
/// `float`s for `mma.sync`, a vector for WMMA and MFMA) go to a stack
/// buffer of the instruction's words, whose address a [`RuntimeCall::Mma`] call
/// passes with MFMA's controls; D comes back in the accumulators' words.
fn mma_definition(name: &str, m: &MmaIntrinsic) -> String {
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
    let controls = if m.controls {
        // cbsz | abid << 8 | blgp << 16, for the runtime to check.
        list.extend((0..3).map(|j| format!("i32 %q{j}")));
        body.push_str("  %k0 = zext i32 %q0 to i64\n  %k1 = zext i32 %q1 to i64\n  %k2 = zext i32 %q2 to i64\n  %s1 = shl i64 %k1, 8\n  %s2 = shl i64 %k2, 16\n  %o1 = or i64 %k0, %s1\n  %ctl = or i64 %o1, %s2\n");
        "%ctl"
    } else {
        "0"
    };
    body.push_str(&format!(
        "  %addr = ptrtoint ptr %buf to i64\n  %f = load ptr, ptr @{RUNTIME_SYMBOL}\n  %r = call i64 %f(i32 {}, i64 %addr, i64 {}, i64 {controls}, i64 0)\n  %c = getelementptr inbounds [{words} x i32], ptr %buf, i64 0, i64 {}\n",
        RuntimeCall::Mma as u32,
        m.kind as u64,
        words - nc
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

/// The `ldmatrix` intrinsic of `shape`, overloaded on the shared pointer.
fn ldmatrix_intrinsic(shape: LdMatrix) -> String {
    format!(
        "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x{}{}.b16.p3",
        shape.count,
        if shape.trans { ".trans" } else { "" }
    )
}

/// The definition of `name`, replacing the `ldmatrix` of `shape`: the lane
/// passes its row's address and a stack buffer for its registers with an
/// [`RuntimeCall::LdMatrix`] call, then returns the registers the runtime wrote.
fn ldmatrix_definition(name: &str, shape: LdMatrix) -> String {
    let count = usize::from(shape.count);
    let ret = if count == 1 {
        "i32".to_string()
    } else {
        format!("{{ {} }}", vec!["i32"; count].join(", "))
    };
    let mut body = format!(
        "  %buf = alloca [4 x i32], align 4\n  %addr = ptrtoint ptr addrspace(3) %p0 to i64\n  %out = ptrtoint ptr %buf to i64\n  %f = load ptr, ptr @{RUNTIME_SYMBOL}\n  %r = call i64 %f(i32 {}, i64 %addr, i64 {}, i64 %out, i64 0)\n",
        RuntimeCall::LdMatrix as u32,
        shape.code()
    );
    let mut acc = "poison".to_string();
    for j in 0..count {
        body.push_str(&format!(
            "  %a{j} = getelementptr inbounds [4 x i32], ptr %buf, i64 0, i64 {j}\n  %w{j} = load i32, ptr %a{j}\n"
        ));
        if count > 1 {
            body.push_str(&format!(
                "  %d{j} = insertvalue {ret} {acc}, i32 %w{j}, {j}\n"
            ));
            acc = format!("%d{j}");
        } else {
            acc = format!("%w{j}");
        }
    }
    format!("define internal {ret} @{name}(ptr addrspace(3) %p0) {{\n{body}  ret {ret} {acc}\n}}\n")
}

/// `text` (a GPU module) with every target intrinsic replaced, the
/// runtime's pointer and the replacements' definitions appended, and
/// AMDGPU's kernel calling convention dropped.
pub(super) fn replace(text: &str) -> Result<String, EmitError> {
    // A `bfloat` vector carries bits only (CDNA 4's bf16 MFMA operands,
    // made by one bitcast of `i16`s): as `i16`s, since the host's calling
    // convention would pass `bfloat` elements through `f32` conversions.
    let mut out = text
        .replace("define amdgpu_kernel ", "define ")
        .replace(" x bfloat>", " x i16>");
    let mut definitions = format!("@{RUNTIME_SYMBOL} = protected global ptr null\n");
    for r in table() {
        if let Some(name) = redirect(&mut out, &r.intrinsic) {
            definitions.push_str(&definition(&name, &r));
        }
    }
    for m in &MMA_INTRINSICS {
        if let Some(name) = redirect(&mut out, m.name) {
            definitions.push_str(&mma_definition(&name, m));
        }
    }
    for count in [1, 2, 4] {
        for trans in [false, true] {
            let shape = LdMatrix { count, trans };
            if let Some(name) = redirect(&mut out, &ldmatrix_intrinsic(shape)) {
                definitions.push_str(&ldmatrix_definition(&name, shape));
            }
        }
    }
    definitions.push_str(&super::asm::replace(&mut out)?);
    for namespace in ["@llvm.nvvm.", "@llvm.amdgcn."] {
        if let Some(at) = out.find(namespace) {
            let name: String = out[at + 1..]
                .chars()
                .take_while(|&c| c.is_ascii_alphanumeric() || c == '.' || c == '_')
                .collect();
            return Err(EmitError::Unsupported {
                what: format!("`{name}` on the emulation target"),
            });
        }
    }
    out.push('\n');
    out.push_str(&definitions);
    Ok(out)
}

/// Redirects every call of `intrinsic` in `text` to `tile_emu.<name>` and
/// drops its declaration; the new name, or `None` if nothing calls it.
fn redirect(text: &mut String, intrinsic: &str) -> Option<String> {
    let call = format!("@{intrinsic}(");
    if !text.contains(&call) {
        return None;
    }
    let name = format!("tile_emu.{}", intrinsic.trim_start_matches("llvm."));
    *text = text
        .lines()
        .filter(|line| !(line.starts_with("declare ") && line.contains(&call)))
        .collect::<Vec<_>>()
        .join("\n")
        .replace(&call, &format!("@{name}("));
    Some(name)
}

/// The definition of `name`, replacing `r`.
fn definition(name: &str, r: &Replacement) -> String {
    let params: Vec<String> = r
        .params
        .iter()
        .enumerate()
        .map(|(i, ty)| format!("{ty} %p{i}"))
        .collect();
    let mut body = String::new();
    for (i, ty) in r.params.iter().enumerate() {
        if *ty == "float" {
            body.push_str(&format!(
                "  %b{i} = bitcast float %p{i} to i32\n  %z{i} = zext i32 %b{i} to i64\n"
            ));
            continue;
        }
        let cast = if ty.starts_with("ptr") {
            "ptrtoint"
        } else {
            "zext"
        };
        body.push_str(&format!("  %z{i} = {cast} {ty} %p{i} to i64\n"));
    }
    let mut args = Vec::new();
    for (i, operand) in r.operands.iter().enumerate() {
        args.push(match *operand {
            Operand::Const(v) => format!("i64 {v}"),
            Operand::Param(p) => format!("i64 %z{p}"),
            Operand::ModeAndMask(mode, p) => {
                body.push_str(&format!("  %h{i} = shl i64 %z{p}, 32\n"));
                body.push_str(&format!("  %a{i} = or i64 %h{i}, {}\n", mode as u64));
                format!("i64 %a{i}")
            }
        });
    }
    body.push_str(&format!("  %f = load ptr, ptr @{RUNTIME_SYMBOL}\n"));
    body.push_str(&format!(
        "  %r = call i64 %f(i32 {}, {})\n",
        r.op as u32,
        args.join(", ")
    ));
    let ret = match r.ret {
        "void" => "  ret void\n".to_string(),
        "i32" => "  %t = trunc i64 %r to i32\n  ret i32 %t\n".to_string(),
        "float" => "  %t = trunc i64 %r to i32\n  %x = bitcast i32 %t to float\n  ret float %x\n"
            .to_string(),
        ptr => format!("  %t = inttoptr i64 %r to {ptr}\n  ret {ptr} %t\n"),
    };
    format!(
        "define internal {} @{name}({}) {{\n{body}{ret}}}\n",
        r.ret,
        params.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_redirected_and_declarations_replaced_by_definitions() {
        let text = "define void @k() {\n  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)\n  %s = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %t, i32 1, i32 31)\n  ret void\n}\ndeclare i32 @llvm.nvvm.read.ptx.sreg.tid.x() #0\ndeclare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32) #1\ndeclare i32 @llvm.nvvm.shfl.sync.bfly.i32(i32, i32, i32, i32) #1";
        let out = replace(text).unwrap();
        assert!(!out.contains("@llvm.nvvm"), "{out}");
        assert!(
            out.contains("call i32 @tile_emu.nvvm.read.ptx.sreg.tid.x()"),
            "{out}"
        );
        assert!(
            out.contains(
                "define internal void @tile_emu.nvvm.barrier.cta.sync.aligned.all(i32 %p0) {"
            ),
            "{out}"
        );
        assert!(out.contains(&format!(
            "call i64 %f(i32 {}, i64 0",
            RuntimeCall::Barrier as u32
        )));
        assert!(out.contains("%a0 = or i64 %h0, 2"), "{out}");
        let error = replace("call void @llvm.nvvm.wmma.m16n16k16.mma()").unwrap_err();
        assert_eq!(
            error.to_string(),
            "the LLVM emitter does not support `llvm.nvvm.wmma.m16n16k16.mma` on the emulation target"
        );
    }
}

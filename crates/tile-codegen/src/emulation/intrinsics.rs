//! The GPU targets' intrinsics and what replaces each: a function of the
//! same type that calls the runtime's entry point with a [`RuntimeCall`].
//!
//! The replacement is made on the module's text, where an intrinsic is a
//! unique symbol (`@llvm.nvvm.read.ptx.sreg.tid.x(`): every call is redirected to
//! `@tile_emu.<name>`, the intrinsic's declaration is dropped, and the
//! definitions are appended. An intrinsic of the targets' namespaces that is
//! not in the table is an error: the emulation target must model every
//! instruction a GPU receives.

use super::conversions;
use super::mma_intrinsics::{mma_definition, MMA_INTRINSICS};
use crate::{EmitError, Target};
use tile_abi::emulation::{ApproxFn, RuntimeCall, ShuffleMode, RUNTIME_SYMBOL};
use tile_hw::ldmatrix::LdMatrix;

/// One replaced intrinsic.
struct Replacement {
    /// The intrinsic's name, without `@`.
    intrinsic: String,
    /// The return type in LLVM IR (`i1`, `i32`, `i64`, `float`, `void`,
    /// `ptr addrspace(4)`).
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
        intrinsic: "llvm.nvvm.mbarrier.arrive.expect.tx.scope.cta.space.cta".into(),
        ret: "i64",
        params: &["ptr addrspace(3)", "i32"],
        op: RuntimeCall::MbarrierExpectTx,
        operands: [Param(0), Param(1), Const(0), Const(0)],
    });
    table.push(Replacement {
        intrinsic: "llvm.nvvm.mbarrier.try.wait.parity.scope.cta.space.cta".into(),
        ret: "i1",
        params: &["ptr addrspace(3)", "i32"],
        op: RuntimeCall::MbarrierTryWait,
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
    table.push(Replacement {
        intrinsic: "llvm.amdgcn.ds.swizzle".into(),
        ret: "i32",
        params: &["i32", "i32"],
        op: RuntimeCall::LanePermute,
        operands: [Param(1), Param(0), Const(0), Const(0)],
    });
    // LLVM turns a `ds_bpermute` whose address every lane shares into a
    // `v_readlane` of the value's type.
    for (ty, param) in [("i32", "i32"), ("f32", "float")] {
        table.push(Replacement {
            intrinsic: format!("llvm.amdgcn.readlane.{ty}"),
            ret: param,
            params: if ty == "i32" {
                &["i32", "i32"]
            } else {
                &["float", "i32"]
            },
            op: RuntimeCall::LanePermute,
            operands: [Param(1), Param(0), Const(2), Const(0)],
        });
    }
    table.push(Replacement {
        intrinsic: "llvm.amdgcn.update.dpp.i32".into(),
        ret: "i32",
        params: &["i32", "i32", "i32", "i32", "i32", "i1"],
        op: RuntimeCall::LanePermute,
        operands: [Param(2), Param(1), Const(1), Const(0)],
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
pub(super) fn replace(text: &str, target: Target) -> Result<String, EmitError> {
    let mut out = text.replace("define amdgpu_kernel ", "define ");
    if matches!(target, Target::Amdgpu(_)) {
        // An AMDGPU module's `bfloat` vectors carry bits only (CDNA 4's
        // bf16 MFMA operands, made by one bitcast of `i16`s; no AMDGPU
        // target computes in `bfloat`, `Target::adds_16_bit_floats`): as
        // `i16`s, since the host's calling convention would pass `bfloat`
        // elements through `f32` conversions.
        out = out.replace(" x bfloat>", " x i16>");
    }
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
    if let Some(name) = redirect(&mut out, conversions::E4M3X2_TO_F16X2) {
        definitions.push_str(&conversions::e4m3x2_to_f16x2(&name));
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
        "i1" => "  %t = icmp ne i64 %r, 0\n  ret i1 %t\n".to_string(),
        "i32" => "  %t = trunc i64 %r to i32\n  ret i32 %t\n".to_string(),
        "i64" => "  ret i64 %r\n".to_string(),
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
        let out = replace(text, Target::Nvptx(crate::Sm::Sm80)).unwrap();
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
        let error = replace(
            "call void @llvm.nvvm.wmma.m16n16k16.mma()",
            Target::Nvptx(crate::Sm::Sm80),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the LLVM emitter does not support `llvm.nvvm.wmma.m16n16k16.mma` on the emulation target"
        );
    }
}

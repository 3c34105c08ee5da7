//! The GPU module's inline PTX (`crate::gpu::asm`) and what replaces each
//! snippet: a function of the same type that calls the runtime's entry
//! point with a [`RuntimeCall`].
//!
//! A call of inline assembly prints as `asm [sideeffect] "<template>",
//! "<constraints>"(<args>)`; the two strings are read back into an [`Asm`]
//! and the callee replaced by its [`Asm::replacement`]. Inline assembly
//! that is not an [`Asm`] is an error: the emulation target must model
//! every instruction a GPU receives.
//!
//! A predicated global access becomes a branch around an ordinary load or
//! store of the same address space, bytes and alignment, which the
//! emulation's access checks then see like any other.

use crate::gpu::Asm;
use crate::EmitError;
use std::collections::BTreeMap;
use tile_abi::emulation::{RuntimeCall, RUNTIME_SYMBOL, WGMMA_REGISTER_A};

/// How a call of inline assembly starts in LLVM's printed IR, with side
/// effects and without.
const INLINE_ASM: [&str; 2] = ["asm sideeffect \"", "asm \""];

/// Where the next call of inline assembly in `text` starts, and the length
/// of its start.
fn next_inline_asm(text: &str) -> Option<(usize, usize)> {
    INLINE_ASM
        .iter()
        .filter_map(|start| text.find(start).map(|at| (at, start.len())))
        .min()
}

/// `text` with every call of inline assembly redirected; the definitions
/// of the replacements, to append to it.
pub(super) fn replace(text: &mut String) -> Result<String, EmitError> {
    let mut used = BTreeMap::new();
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some((at, len)) = next_inline_asm(rest) {
        out.push_str(&rest[..at]);
        let after = &rest[at + len..];
        let unreadable = || EmitError::Unsupported {
            what: format!(
                "inline assembly `{}` on the emulation target",
                after.lines().next().unwrap_or_default()
            ),
        };
        let (template, after) = after.split_once("\", \"").ok_or_else(unreadable)?;
        let (constraints, after) = after.split_once('"').ok_or_else(unreadable)?;
        let asm = Asm::parse(template, constraints).ok_or_else(unreadable)?;
        let name = asm.replacement();
        out.push('@');
        out.push_str(&name);
        used.insert(name, asm);
        rest = after;
    }
    out.push_str(rest);
    *text = out;
    Ok(used
        .iter()
        .map(|(name, &asm)| definition(name, asm))
        .collect())
}

/// The call of the runtime's entry point with `op` and `operands` (`i64`
/// values), its result in `%r`.
pub(super) fn runtime_call(op: RuntimeCall, operands: [&str; 4]) -> String {
    tagged_runtime_call(op, operands, "")
}

/// [`runtime_call`] whose locals end in `tag`, its result in `%r<tag>`:
/// for a second call in one definition.
pub(super) fn tagged_runtime_call(op: RuntimeCall, operands: [&str; 4], tag: &str) -> String {
    format!(
        "  %f{tag} = load ptr, ptr @{RUNTIME_SYMBOL}\n  %r{tag} = call i64 %f{tag}(i32 {}, i64 {}, i64 {}, i64 {}, i64 {})\n",
        op as u32, operands[0], operands[1], operands[2], operands[3]
    )
}

/// The definition of `name`, replacing `asm`: its `f32` values go through
/// a stack buffer whose address the runtime call passes (`wgmma`'s and FP8
/// `mma.sync`'s accumulators, which the runtime overwrites with D) or come
/// back as they went in (`wgmma.wait_group`'s).
fn definition(name: &str, asm: Asm) -> String {
    let values = asm.values();
    let mut params: Vec<String> = (0..values).map(|i| format!("float %v{i}")).collect();
    let mut body = String::new();
    let runtime = |body: &mut String, op: RuntimeCall, operands: [&str; 4]| {
        body.push_str(&runtime_call(op, operands));
    };
    let mut results: Vec<String> = (0..values).map(|i| format!("%v{i}")).collect();
    match asm {
        Asm::LoadGlobal { bits, .. } => return access_definition(name, bits, false),
        Asm::StoreGlobal { bits } => return access_definition(name, bits, true),
        Asm::LoadVector { words, .. } => return load_vector_definition(name, words),
        Asm::StoreVector { words } => return store_vector_definition(name, words),
        Asm::AddVectorF32 { words, gpu } => return add_vector_definition(name, words, gpu),
        Asm::CvtBf16 => return cvt_bf16_definition(name),
        Asm::Tcgen05(t) => return super::tcgen05::definition(name, t),
        Asm::Opaque { bits, .. } => {
            return format!(
                "define internal i{bits} @{name}(i{bits} %x) {{\n  ret i{bits} %x\n}}\n"
            )
        }
        Asm::Wgmma(kind) | Asm::WgmmaRegisterA(kind) => {
            // A's registers, if any, follow the accumulators in the buffer.
            let (words, a, code) = match asm {
                Asm::WgmmaRegisterA(_) => (4, "0", kind.code() | WGMMA_REGISTER_A),
                _ => (0, "%da", kind.code()),
            };
            if words == 0 {
                params.push("i64 %da".into());
            }
            params.extend((0..words).map(|j| format!("i32 %w{j}")));
            params.extend(["i64 %db".into(), "i32 %scale".into()]);
            let slots = values + words;
            body.push_str(&format!("  %buf = alloca [{slots} x i32], align 4\n"));
            for i in 0..slots {
                let value = match i.checked_sub(values) {
                    None => format!("float %v{i}"),
                    Some(j) => format!("i32 %w{j}"),
                };
                body.push_str(&format!(
                    "  %a{i} = getelementptr inbounds [{slots} x i32], ptr %buf, i64 0, i64 {i}\n  store {value}, ptr %a{i}, align 4\n"
                ));
            }
            body.push_str(&format!(
                "  %addr = ptrtoint ptr %buf to i64\n  %nz = icmp ne i32 %scale, 0\n  %s = zext i1 %nz to i64\n  %sh = shl i64 %s, 32\n  %code = or i64 %sh, {code}\n"
            ));
            runtime(&mut body, RuntimeCall::Wgmma, ["%addr", a, "%db", "%code"]);
            for (i, r) in results.iter_mut().enumerate() {
                body.push_str(&format!("  %d{i} = load float, ptr %a{i}, align 4\n"));
                *r = format!("%d{i}");
            }
        }
        Asm::WgmmaWait { pending, .. } => {
            let pending = pending.to_string();
            runtime(&mut body, RuntimeCall::WgmmaWait, [&pending, "0", "0", "0"]);
        }
        Asm::WgmmaFence => runtime(&mut body, RuntimeCall::WgmmaFence, ["0"; 4]),
        Asm::WgmmaCommit => runtime(&mut body, RuntimeCall::WgmmaCommit, ["0"; 4]),
        Asm::FenceProxyAsync => runtime(&mut body, RuntimeCall::FenceProxyAsync, ["0"; 4]),
        // Grids run one after another on the emulation target: the grids a
        // launch depends on are done before it starts.
        Asm::GridDepControl { .. } => {}
        Asm::TmaLoad2d => {
            params.extend([
                "i64 %dst".into(),
                "i64 %map".into(),
                "i32 %c0".into(),
                "i32 %c1".into(),
                "i64 %bar".into(),
            ]);
            body.push_str("  %x = zext i32 %c0 to i64\n  %y0 = zext i32 %c1 to i64\n  %y = shl i64 %y0, 32\n  %xy = or i64 %x, %y\n");
            runtime(
                &mut body,
                RuntimeCall::TmaLoad,
                ["%dst", "%map", "%xy", "%bar"],
            );
        }
    }
    if values == 0 {
        return format!(
            "define internal void @{name}({}) {{\n{body}  ret void\n}}\n",
            params.join(", ")
        );
    }
    let ret = format!("{{ {} }}", vec!["float"; values].join(", "));
    let mut acc = "poison".to_string();
    for (i, r) in results.iter().enumerate() {
        body.push_str(&format!(
            "  %s{i} = insertvalue {ret} {acc}, float {r}, {i}\n"
        ));
        acc = format!("%s{i}");
    }
    format!(
        "define internal {ret} @{name}({}) {{\n{body}  ret {ret} {acc}\n}}\n",
        params.join(", ")
    )
}

/// The definition of `name`, replacing a predicated global access: a
/// branch around the load (yielding `other` where the predicate is false)
/// or the store. A byte travels in a 16-bit register, as in PTX.
fn access_definition(name: &str, bits: u8, store: bool) -> String {
    let memory = format!("i{bits}");
    let register = format!("i{}", bits.max(16));
    let align = bits / 8;
    let (widen, narrow) = match bits {
        8 => (
            "  %v = zext i8 %m to i16\n",
            "  %m = trunc i16 %value to i8\n",
        ),
        _ => ("", ""),
    };
    let (loaded, stored) = match bits {
        8 => ("%v", "%m"),
        _ => ("%m", "%value"),
    };
    match store {
        true => format!(
            "define internal void @{name}(i1 %p, ptr addrspace(1) %at, {register} %value) {{\nentry:\n  br i1 %p, label %st, label %done\nst:\n{narrow}  store {memory} {stored}, ptr addrspace(1) %at, align {align}\n  br label %done\ndone:\n  ret void\n}}\n"
        ),
        false => format!(
            "define internal {register} @{name}(ptr addrspace(1) %at, i1 %p, {register} %other) {{\nentry:\n  br i1 %p, label %ld, label %done\nld:\n  %m = load {memory}, ptr addrspace(1) %at, align {align}\n{widen}  br label %done\ndone:\n  %r = phi {register} [ {loaded}, %ld ], [ %other, %entry ]\n  ret {register} %r\n}}\n"
        ),
    }
}

/// The definition replacing a vector `red.global.add.f32` of `words`
/// elements: each element's own relaxed atomic add at the scope asked
/// (`device` or `block`), which the access checks see as atomics.
fn add_vector_definition(name: &str, words: u8, gpu: bool) -> String {
    let scope = if gpu { "device" } else { "block" };
    let params: Vec<String> = (0..words).map(|i| format!("float %v{i}")).collect();
    let mut body = String::new();
    for i in 0..words {
        body.push_str(&format!(
            "  %a{i} = getelementptr inbounds float, ptr addrspace(1) %at, i64 {i}\n  %o{i} = atomicrmw fadd ptr addrspace(1) %a{i}, float %v{i} syncscope(\"{scope}\") monotonic, align 4\n"
        ));
    }
    format!(
        "define internal void @{name}(ptr addrspace(1) %at, {}) {{\n{body}  ret void\n}}\n",
        params.join(", ")
    )
}

/// The definition replacing `cvt.rn.bf16.f32`: the upper half of the
/// f32's bits rounded to nearest even on the lower half, a NaN PTX's
/// canonical bf16 NaN (`0x7fff`).
fn cvt_bf16_definition(name: &str) -> String {
    format!(
        "define internal i16 @{name}(float %x) {{\n  %bits = bitcast float %x to i32\n  %hi = lshr i32 %bits, 16\n  %lsb = and i32 %hi, 1\n  %r0 = add i32 %bits, 32767\n  %r1 = add i32 %r0, %lsb\n  %q = lshr i32 %r1, 16\n  %t = trunc i32 %q to i16\n  %nan = fcmp uno float %x, %x\n  %c = select i1 %nan, i16 32767, i16 %t\n  ret i16 %c\n}}\n"
    )
}

/// The definition replacing a predicated vector load of `words` 32-bit
/// words: a branch around one load of the vector, its words returned as the
/// snippet's structure.
fn load_vector_definition(name: &str, words: u8) -> String {
    let n = usize::from(words);
    let vector = format!("<{n} x i32>");
    let fields = vec!["i32"; n].join(", ");
    let params: Vec<String> = (0..n).map(|i| format!("i32 %o{i}")).collect();
    let mut body = format!(
        "define internal {{ {fields} }} @{name}(ptr addrspace(1) %at, i1 %p, {}) {{\nentry:\n  br i1 %p, label %ld, label %done\nld:\n  %m = load {vector}, ptr addrspace(1) %at, align {}\n",
        params.join(", "),
        4 * n
    );
    for i in 0..n {
        body.push_str(&format!("  %m{i} = extractelement {vector} %m, i32 {i}\n"));
    }
    body.push_str("  br label %done\ndone:\n");
    for i in 0..n {
        body.push_str(&format!(
            "  %r{i} = phi i32 [ %m{i}, %ld ], [ %o{i}, %entry ]\n"
        ));
    }
    let mut result = "undef".to_string();
    for i in 0..n {
        body.push_str(&format!(
            "  %s{i} = insertvalue {{ {fields} }} {result}, i32 %r{i}, {i}\n"
        ));
        result = format!("%s{i}");
    }
    body.push_str(&format!("  ret {{ {fields} }} {result}\n}}\n"));
    body
}

/// The definition replacing a predicated vector store of `words` 32-bit
/// words: a branch around one store of the vector.
fn store_vector_definition(name: &str, words: u8) -> String {
    let n = usize::from(words);
    let vector = format!("<{n} x i32>");
    let params: Vec<String> = (0..n).map(|i| format!("i32 %v{i}")).collect();
    let mut body = format!(
        "define internal void @{name}(i1 %p, ptr addrspace(1) %at, {}) {{\nentry:\n  br i1 %p, label %st, label %done\nst:\n",
        params.join(", ")
    );
    let mut vec = "undef".to_string();
    for i in 0..n {
        body.push_str(&format!(
            "  %w{i} = insertelement {vector} {vec}, i32 %v{i}, i32 {i}\n"
        ));
        vec = format!("%w{i}");
    }
    body.push_str(&format!(
        "  store {vector} {vec}, ptr addrspace(1) %at, align {}\n  br label %done\ndone:\n  ret void\n}}\n",
        4 * n
    ));
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use tile_hw::wgmma::WgmmaKind;
    use tile_ir::DType;

    #[test]
    fn inline_assembly_is_redirected_and_unknown_assembly_refused() {
        let wait = Asm::WgmmaWait {
            pending: 0,
            values: 2,
        };
        let mut text = format!(
            "  call void asm sideeffect \"{}\", \"{}\"()\n  %w = call {{ float, float }} asm sideeffect \"{}\", \"{}\"(float %x, float %y) #3\n",
            Asm::FenceProxyAsync.template(),
            Asm::FenceProxyAsync.constraints(),
            wait.template(),
            wait.constraints()
        );
        let definitions = replace(&mut text).unwrap();
        assert_eq!(
            text,
            "  call void @tile_emu.fence.proxy.async()\n  %w = call { float, float } @tile_emu.wgmma.wait.0.2(float %x, float %y) #3\n"
        );
        assert!(definitions.contains(&format!(
            "call i64 %f(i32 {}, i64 0,",
            RuntimeCall::FenceProxyAsync as u32
        )));
        assert!(definitions.contains(
            "define internal { float, float } @tile_emu.wgmma.wait.0.2(float %v0, float %v1) {"
        ));
        let kind = WgmmaKind::new(DType::BF16, 8).unwrap();
        let wgmma = Asm::Wgmma(kind);
        let mut text = format!(
            "call asm sideeffect \"{}\", \"{}\"(",
            wgmma.template(),
            wgmma.constraints()
        );
        let definitions = replace(&mut text).unwrap();
        assert_eq!(text, "call @tile_emu.wgmma.m64n8k16.bf16(");
        assert!(definitions.contains(&format!("%code = or i64 %sh, {}", kind.code())));
        // A load of read-only memory has no side effects; its replacement
        // is a branch around an ordinary load, which the access checks see.
        let load = Asm::LoadGlobal { bits: 8, nc: true };
        let mut text = format!(
            "%v = call i16 asm \"{}\", \"{}\"(ptr addrspace(1) %at, i1 %m, i16 0)",
            load.template(),
            load.constraints()
        );
        let definitions = replace(&mut text).unwrap();
        assert_eq!(
            text,
            "%v = call i16 @tile_ptx.ld.global.nc.b8(ptr addrspace(1) %at, i1 %m, i16 0)"
        );
        assert!(definitions.contains(
            "define internal i16 @tile_ptx.ld.global.nc.b8(ptr addrspace(1) %at, i1 %p, i16 %other)"
        ));
        assert!(definitions
            .contains("  %m = load i8, ptr addrspace(1) %at, align 1\n  %v = zext i8 %m to i16\n"));
        let mut unknown = "call void asm sideeffect \"trap;\", \"\"()".to_string();
        assert_eq!(
            replace(&mut unknown).unwrap_err().to_string(),
            "the LLVM emitter does not support inline assembly `trap;\", \"\"()` on the emulation target"
        );
    }
}

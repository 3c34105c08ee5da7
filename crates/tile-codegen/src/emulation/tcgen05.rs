//! What replaces each tensor-memory snippet (`crate::gpu::Tcgen05Asm`) on
//! the emulation target: a call of the runtime's entry point
//! (`tile_abi::emulation::RuntimeCall::TmemAlloc` and the five after it),
//! a load's or store's values through a stack buffer of the thread's; a
//! block-scaled product's scale addresses by `Tcgen05Scales` just before
//! its `Tcgen05Mma`.

use super::asm::{runtime_call, tagged_runtime_call};
use crate::gpu::Tcgen05Asm;
use tile_abi::emulation::{RuntimeCall, TCGEN05_TENSOR_A};
use tile_hw::tcgen05::Qualifier;

/// The IR computing a `tcgen05.mma`'s call word `%code` (its instruction
/// descriptor, accumulate flag and `flags`) and D's address `%d64`.
fn mma_code(flags: u64) -> String {
    format!(
        "  %d64 = zext i32 %d to i64\n  %i = zext i32 %idesc to i64\n  %nz = icmp ne i32 %acc, 0\n  %s = zext i1 %nz to i64\n  %sh = shl i64 %s, 32\n  %flags = or i64 %sh, {flags}\n  %code = or i64 %flags, %i\n"
    )
}

/// The definition of `name`, replacing `snippet`.
pub(super) fn definition(name: &str, snippet: Tcgen05Asm) -> String {
    let void = |params: &str, body: String| {
        format!("define internal void @{name}({params}) {{\n{body}  ret void\n}}\n")
    };
    let address = "  %a = zext i32 %t to i64\n";
    match snippet {
        Tcgen05Asm::Alloc { columns } => {
            let columns = columns.to_string();
            let call = runtime_call(RuntimeCall::TmemAlloc, ["%slot", &columns, "0", "0"]);
            void("i64 %slot", call)
        }
        Tcgen05Asm::Dealloc { columns } => {
            let columns = columns.to_string();
            let call = runtime_call(RuntimeCall::TmemDealloc, ["%a", &columns, "0", "0"]);
            void("i32 %t", format!("{address}{call}"))
        }
        Tcgen05Asm::Mma { qualifier } => {
            let code = mma_code(qualifier.code() << 33);
            let call = runtime_call(RuntimeCall::Tcgen05Mma, ["%d64", "%da", "%db", "%code"]);
            void(
                "i32 %d, i64 %da, i64 %db, i32 %idesc, i32 %acc",
                format!("{code}{call}"),
            )
        }
        Tcgen05Asm::MmaScaled => {
            let operands = ["%sa64", "%sb64", "0", "0"];
            let scales = tagged_runtime_call(RuntimeCall::Tcgen05Scales, operands, ".scales");
            let code = mma_code(Qualifier::Mxf8f6f4.code() << 33);
            let call = runtime_call(RuntimeCall::Tcgen05Mma, ["%d64", "%da", "%db", "%code"]);
            void(
                "i32 %d, i64 %da, i64 %db, i32 %idesc, i32 %sa, i32 %sb, i32 %acc",
                format!(
                    "  %sa64 = zext i32 %sa to i64\n  %sb64 = zext i32 %sb to i64\n{scales}{code}{call}"
                ),
            )
        }
        Tcgen05Asm::MmaTensorA => {
            let flags = (Qualifier::F16.code() << 33) | TCGEN05_TENSOR_A;
            let code = format!("{}  %ta = zext i32 %a to i64\n", mma_code(flags));
            let call = runtime_call(RuntimeCall::Tcgen05Mma, ["%d64", "%ta", "%db", "%code"]);
            void(
                "i32 %d, i32 %a, i64 %db, i32 %idesc, i32 %acc",
                format!("{code}{call}"),
            )
        }
        Tcgen05Asm::Commit => void(
            "i64 %bar",
            runtime_call(RuntimeCall::Tcgen05Commit, ["%bar", "0", "0", "0"]),
        ),
        Tcgen05Asm::Load { columns } | Tcgen05Asm::Store { columns } => {
            let n = usize::from(columns);
            let store = matches!(snippet, Tcgen05Asm::Store { .. });
            let mut body = format!("{address}  %buf = alloca [{n} x float], align 4\n");
            let slot = |i: usize| {
                format!(
                    "  %p{i} = getelementptr inbounds [{n} x float], ptr %buf, i64 0, i64 {i}\n"
                )
            };
            if store {
                for i in 0..n {
                    body.push_str(&slot(i));
                    body.push_str(&format!("  store float %v{i}, ptr %p{i}, align 4\n"));
                }
            }
            body.push_str("  %addr = ptrtoint ptr %buf to i64\n");
            let (op, count) = match store {
                true => (RuntimeCall::TmemStore, n.to_string()),
                false => (RuntimeCall::TmemLoad, n.to_string()),
            };
            body.push_str(&runtime_call(op, ["%a", "%addr", &count, "0"]));
            if store {
                let values: Vec<String> = (0..n).map(|i| format!("float %v{i}")).collect();
                return void(&format!("i32 %t, {}", values.join(", ")), body);
            }
            let ret = format!("{{ {} }}", vec!["float"; n].join(", "));
            let mut acc = "poison".to_string();
            for i in 0..n {
                body.push_str(&slot(i));
                body.push_str(&format!(
                    "  %l{i} = load float, ptr %p{i}, align 4\n  %s{i} = insertvalue {ret} {acc}, float %l{i}, {i}\n"
                ));
                acc = format!("%s{i}");
            }
            format!("define internal {ret} @{name}(i32 %t) {{\n{body}  ret {ret} {acc}\n}}\n")
        }
    }
}

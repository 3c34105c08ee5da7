//! The example kernels written in Rust syntax, lowered through the library:
//! their IR is snapshotted, and must equal what `tile_ir::samples` builds by
//! hand, up to the order of independent ops.

mod common;

use common::EXAMPLES;
use tile_ir::{DType, Function, Value, ValueDef};

fn lower(attr: &str, src: &str) -> Function {
    let item: syn::ItemFn = syn::parse_str(src).expect("example parses");
    let attr: proc_macro2::TokenStream = attr.parse().expect("attribute tokens");
    match tile_frontend::translate_kernel(attr, &item) {
        Ok(mut v) if v.len() == 1 => v.remove(0).1,
        Ok(v) => panic!("expected one specialization, found {}", v.len()),
        Err(e) => panic!("lowering failed: {e}"),
    }
}

/// The expression tree of a value: what it computes from the parameters,
/// independent of where its ops sit in their region.
fn tree(f: &Function, v: Value) -> String {
    match f.values[v].def {
        ValueDef::Param(i) => format!("%{}", f.params[i].name),
        ValueDef::RegionArg { index } => format!("arg{index}"),
        ValueDef::Result { op, index } => {
            let op = f.op(op);
            let operands: Vec<String> = op.operands.iter().map(|&o| tree(f, o)).collect();
            let regions: Vec<String> = op.regions.iter().map(|r| effects(f, r)).collect();
            format!(
                "{:?}#{index}({}){{{}}}",
                op.kind,
                operands.join(", "),
                regions.join(" | ")
            )
        }
    }
}

/// The trees of the ops of a region that have effects (stores, yields,
/// loops), in order.
fn effects(f: &Function, region: &tile_ir::Region) -> String {
    let mut out = Vec::new();
    for &id in &region.ops {
        let op = f.op(id);
        if op.kind.has_side_effects() {
            let operands: Vec<String> = op.operands.iter().map(|&o| tree(f, o)).collect();
            let regions: Vec<String> = op.regions.iter().map(|r| effects(f, r)).collect();
            out.push(format!(
                "{:?}({}){{{}}}",
                op.kind,
                operands.join(", "),
                regions.join(" | ")
            ));
        }
    }
    out.join(";\n")
}

fn canonical(f: &Function) -> String {
    let params: Vec<String> = f
        .params
        .iter()
        .map(|p| format!("{}: {}", p.name, f.ty(p.value)))
        .collect();
    format!(
        "kernel {}({})\n{}",
        f.name,
        params.join(", "),
        effects(f, &f.body)
    )
}

fn sample(name: &str) -> Function {
    use tile_ir::samples;
    let built = match name {
        "vector_add" => samples::vector_add(1024),
        "softmax" => samples::softmax(2, 128),
        "layernorm" => samples::layernorm(2, 128),
        "matmul" => samples::matmul(32, 32, 16, DType::F32),
        "transpose" => samples::transpose(32, 16),
        other => panic!("no sample {other}"),
    };
    built.expect("sample builds")
}

#[test]
fn examples_equal_the_hand_built_samples() {
    for (name, attr, src) in EXAMPLES {
        let ours = canonical(&lower(attr, src));
        let theirs = canonical(&sample(name));
        assert_eq!(
            ours, theirs,
            "{name}: the macro's IR differs from tile_ir::samples"
        );
    }
}

#[test]
fn example_ir_snapshots() {
    for (name, attr, src) in EXAMPLES {
        insta::assert_snapshot!(name, lower(attr, src).to_string());
    }
}

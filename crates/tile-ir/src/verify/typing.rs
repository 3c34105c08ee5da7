//! Type checks: value types, each op's rule, and region signatures.

use super::{Reporter, VerifyError};
use crate::dtype::DType;
use crate::function::{Function, OpId, Region};
use crate::names::ValueNames;
use crate::ops::OpKind;
use crate::rules;
use crate::types::Type;

pub(super) fn check(func: &Function, names: &ValueNames) -> Result<(), VerifyError> {
    let report = Reporter {
        func,
        names: Some(names),
    };
    for param in &func.params {
        rules::check_type(func.ty(param.value))
            .map_err(|m| report.at(format!("parameter %{}", param.name), m))?;
    }
    let mut result = Ok(());
    func.walk(&mut |op| {
        if result.is_ok() {
            result = check_op(func, op, &report);
        }
    });
    result
}

fn check_op(func: &Function, id: OpId, report: &Reporter) -> Result<(), VerifyError> {
    let op = func.op(id);
    for &value in op
        .results
        .iter()
        .chain(op.regions.iter().flat_map(|r| &r.args))
    {
        rules::check_type(func.ty(value)).map_err(|m| report.op(id, m))?;
    }
    let operand_types: Vec<&Type> = op.operands.iter().map(|&v| func.ty(v)).collect();
    let declared: Vec<&Type> = op.results.iter().map(|&v| func.ty(v)).collect();
    let inferred = rules::infer(&op.kind, &operand_types).map_err(|m| report.op(id, m))?;
    if let Some(inferred) = inferred {
        let inferred: Vec<&Type> = inferred.iter().collect();
        if inferred != declared {
            return Err(report.op(
                id,
                format!(
                    "the result types must be ({}), found ({})",
                    list(&inferred),
                    list(&declared)
                ),
            ));
        }
    }
    match op.kind {
        OpKind::For { .. } => {
            let region = &op.regions[0];
            let mut expected: Vec<&Type> = vec![operand_types[0]];
            expected.extend(&declared);
            let args: Vec<&Type> = region.args.iter().map(|&v| func.ty(v)).collect();
            if args != expected {
                return Err(report.op(
                    id,
                    format!(
                        "the loop region's arguments must be (induction variable, carried values) of types ({}), found ({})",
                        list(&expected),
                        list(&args)
                    ),
                ));
            }
            check_yield(func, id, region, &declared, "the loop body", report)
        }
        OpKind::While => {
            let cond = [&Type::Scalar(DType::Bool)];
            for (region, which, yields) in [
                (&op.regions[0], "the loop condition", &cond[..]),
                (&op.regions[1], "the loop body", &declared[..]),
            ] {
                let args: Vec<&Type> = region.args.iter().map(|&v| func.ty(v)).collect();
                if args != declared {
                    return Err(report.op(
                        id,
                        format!(
                            "the arguments of {which} must be the carried values, of types ({}), found ({})",
                            list(&declared),
                            list(&args)
                        ),
                    ));
                }
                check_yield(func, id, region, yields, which, report)?;
            }
            Ok(())
        }
        OpKind::ReduceWith { .. } | OpKind::ScanWith { .. } => {
            let region = &op.regions[0];
            let elements: Vec<Type> = operand_types
                .iter()
                .map(|t| Type::Scalar(t.dtype()))
                .collect();
            let expected: Vec<&Type> = elements.iter().chain(&elements).collect();
            let args: Vec<&Type> = region.args.iter().map(|&v| func.ty(v)).collect();
            if args != expected {
                return Err(report.op(
                    id,
                    format!(
                        "the combine function's arguments must be the accumulated values and the next elements, of types ({}), found ({})",
                        list(&expected),
                        list(&args)
                    ),
                ));
            }
            for &inner in &region.ops {
                let kind = &func.op(inner).kind;
                let allowed = matches!(
                    kind.family(),
                    crate::ops::OpFamily::Constant | crate::ops::OpFamily::Elementwise
                ) || *kind == OpKind::Yield;
                if !allowed {
                    return Err(report.op(
                        id,
                        format!(
                            "a combine function holds only constants and elementwise ops, found `{}`",
                            kind.name()
                        ),
                    ));
                }
            }
            let elements: Vec<&Type> = elements.iter().collect();
            check_yield(func, id, region, &elements, "the combine function", report)
        }
        OpKind::If => {
            for (region, which) in op
                .regions
                .iter()
                .zip(["the then branch", "the else branch"])
            {
                if !region.args.is_empty() {
                    return Err(report.op(id, format!("{which} takes no arguments")));
                }
                check_yield(func, id, region, &declared, which, report)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn check_yield(
    func: &Function,
    id: OpId,
    region: &Region,
    expected: &[&Type],
    which: &str,
    report: &Reporter,
) -> Result<(), VerifyError> {
    let Some(&last) = region.ops.last() else {
        return Err(report.op(id, format!("{which} must end with `yield`")));
    };
    let yielded: Vec<&Type> = func.op(last).operands.iter().map(|&v| func.ty(v)).collect();
    if yielded != expected {
        return Err(report.op(
            id,
            format!(
                "{which} must yield ({}), found ({})",
                list(expected),
                list(&yielded)
            ),
        ));
    }
    Ok(())
}

fn list(types: &[&Type]) -> String {
    types
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

//! The first check: every handle points into its arena and every op sits in
//! exactly one region, so that the later checks (and every later stage) may
//! walk and index the kernel without checking.

use super::{Reporter, VerifyError};
use crate::function::{Function, OpId, Region};
use std::collections::HashSet;

pub(super) fn check(func: &Function) -> Result<(), VerifyError> {
    let report = Reporter { func, names: None };
    for param in &func.params {
        if func.values.get(param.value).is_none() {
            return Err(report.at(
                format!("parameter %{}", param.name),
                "its value handle points past the value arena",
            ));
        }
    }
    let mut placed = HashSet::new();
    region(func, &func.body, &report, &mut placed)
}

fn region(
    func: &Function,
    region_: &Region,
    report: &Reporter,
    placed: &mut HashSet<OpId>,
) -> Result<(), VerifyError> {
    let values = func.values.len();
    if let Some(arg) = region_.args.iter().find(|a| a.index() >= values) {
        return Err(report.at(
            "a region",
            format!(
                "argument handle %?{} points past the value arena",
                arg.index()
            ),
        ));
    }
    for &id in &region_.ops {
        let Some(op) = func.ops.get(id) else {
            return Err(report.at(
                format!("op #{}", id.index()),
                "a region lists an op handle past the op arena",
            ));
        };
        // Placing each op once also rules out an op inside its own region.
        if !placed.insert(id) {
            return Err(report.op(id, "the op appears in more than one place"));
        }
        let dangling = op
            .operands
            .iter()
            .chain(&op.results)
            .find(|v| v.index() >= values);
        if let Some(value) = dangling {
            return Err(report.op(
                id,
                format!(
                    "value handle %?{} points past the value arena",
                    value.index()
                ),
            ));
        }
        for nested in &op.regions {
            region(func, nested, report, placed)?;
        }
    }
    Ok(())
}

//! Structural checks: handles, placement, definitions, dominance, regions.

use super::{Reporter, VerifyError};
use crate::function::{Function, OpId, Region, Value, ValueDef};
use crate::names::ValueNames;
use crate::ops::OpKind;
use crate::types::Type;
use std::collections::HashSet;

pub(super) fn check(func: &Function, names: &ValueNames) -> Result<(), VerifyError> {
    let report = Reporter {
        func,
        names: Some(names),
    };
    check_params(func, &report)?;
    let mut checker = Structure {
        func,
        report,
        scopes: vec![func.params.iter().map(|p| p.value).collect()],
    };
    checker.region(&func.body, None)
}

fn check_params(func: &Function, report: &Reporter) -> Result<(), VerifyError> {
    let mut seen = HashSet::new();
    for (index, param) in func.params.iter().enumerate() {
        let location = format!("parameter %{}", param.name);
        let mut chars = param.name.chars();
        let identifier = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !identifier {
            return Err(report.at(
                location,
                "a parameter name starts with a letter or `_` and continues with letters, digits or `_`",
            ));
        }
        if !seen.insert(param.name.as_str()) {
            return Err(report.at(location, "parameter names must be unique"));
        }
        let info = &func.values[param.value];
        if info.def != ValueDef::Param(index) {
            return Err(report.at(
                location,
                format!(
                    "its value is recorded as {:?}, not as parameter {index}",
                    info.def
                ),
            ));
        }
        if !matches!(
            info.ty,
            Type::Scalar(_) | Type::Tensor(_) | Type::Tensors(_)
        ) {
            return Err(report.at(
                location,
                format!(
                    "a parameter is a scalar, a tensor or a tensor array, found {}",
                    info.ty
                ),
            ));
        }
    }
    Ok(())
}

struct Structure<'f> {
    func: &'f Function,
    report: Reporter<'f>,
    /// Values visible at the current point, one set per open region.
    scopes: Vec<HashSet<Value>>,
}

impl Structure<'_> {
    /// Checks `region`, whose parent op is `parent` (`None` for the body).
    fn region(&mut self, region: &Region, parent: Option<OpId>) -> Result<(), VerifyError> {
        let mut scope = HashSet::new();
        for (index, &arg) in region.args.iter().enumerate() {
            let Some(info) = self.func.values.get(arg) else {
                return Err(self.at_parent(
                    parent,
                    format!("region argument {index} points past the value arena"),
                ));
            };
            if info.def != (ValueDef::RegionArg { index }) {
                return Err(self.at_parent(
                    parent,
                    format!("region argument {index} is recorded as {:?}", info.def),
                ));
            }
            if !scope.insert(arg) || self.visible(arg) {
                return Err(
                    self.at_parent(parent, format!("region argument {index} is defined twice"))
                );
            }
        }
        self.scopes.push(scope);
        let last = region.ops.len().checked_sub(1);
        for (position, &op) in region.ops.iter().enumerate() {
            self.op(op, parent.is_some() && Some(position) == last)?;
        }
        if parent.is_some() {
            let ends_with_yield = region
                .ops
                .last()
                .is_some_and(|&op| self.func.op(op).kind == OpKind::Yield);
            if !ends_with_yield {
                return Err(self.at_parent(parent, "a nested region must end with `yield`"));
            }
        }
        self.scopes.pop();
        Ok(())
    }

    fn op(&mut self, id: OpId, terminator_slot: bool) -> Result<(), VerifyError> {
        let op = self.func.op(id);
        if op.kind == OpKind::Yield && !terminator_slot {
            return Err(self.report.op(
                id,
                "`yield` may only end a region of `for`, `while`, `if` or a combine",
            ));
        }
        for (i, &operand) in op.operands.iter().enumerate() {
            if self.func.values.get(operand).is_none() {
                return Err(self
                    .report
                    .op(id, format!("operand {i} points past the value arena")));
            }
            if !self.visible(operand) {
                return Err(self.report.op(
                    id,
                    format!("operand {i} is used where its definition does not dominate (defined later, or inside a region that has ended)"),
                ));
            }
        }
        let expected_regions = match op.kind {
            OpKind::For { .. } | OpKind::ReduceWith { .. } | OpKind::ScanWith { .. } => 1,
            OpKind::While | OpKind::If => 2,
            _ => 0,
        };
        if op.regions.len() != expected_regions {
            return Err(self.report.op(
                id,
                format!(
                    "`{}` has {expected_regions} region(s), found {}",
                    op.kind.name(),
                    op.regions.len()
                ),
            ));
        }
        for region in &op.regions {
            self.region(region, Some(id))?;
        }
        for (index, &result) in op.results.iter().enumerate() {
            let Some(info) = self.func.values.get(result) else {
                return Err(self
                    .report
                    .op(id, format!("result {index} points past the value arena")));
            };
            if info.def != (ValueDef::Result { op: id, index }) {
                return Err(self
                    .report
                    .op(id, format!("result {index} is recorded as {:?}", info.def)));
            }
            if self.visible(result) {
                return Err(self
                    .report
                    .op(id, format!("result {index} is defined twice")));
            }
            if let Some(scope) = self.scopes.last_mut() {
                scope.insert(result);
            }
        }
        Ok(())
    }

    fn visible(&self, value: Value) -> bool {
        self.scopes.iter().any(|scope| scope.contains(&value))
    }

    fn at_parent(&self, parent: Option<OpId>, message: impl Into<String>) -> VerifyError {
        match parent {
            Some(op) => self.report.op(op, message),
            None => self.report.at("the kernel body", message),
        }
    }
}

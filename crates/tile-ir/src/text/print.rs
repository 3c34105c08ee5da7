//! The printer: `Display` for [`Function`] writes the text form.
//!
//! Values are named by [`ValueNames`], so printed names match every message
//! of the verifier and the interpreter. A function that breaks the structural
//! invariants (an op with too few operands, say) still prints, with `%?` for
//! a missing operand, but the text may not parse back.

use super::ops::print_line;
use super::syntax::{Operands, Stages, Syntax};
use crate::function::{Function, Op, OpId, Region, Value};
use crate::names::ValueNames;
use crate::ops::OpKind;
use crate::types::Type;
use std::fmt::{self, Write};

/// Prints the kernel in the text form (see `docs/ir.md`), two spaces of
/// indentation per nesting level, without a trailing newline.
impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let printer = Printer {
            func: self,
            names: ValueNames::new(self),
        };
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| format!("%{}: {}", p.name, self.ty(p.value)))
            .collect();
        writeln!(f, "kernel @{}({}) {{", self.name, params.join(", "))?;
        printer.region_ops(f, &self.body, 1)?;
        f.write_str("}")
    }
}

struct Printer<'f> {
    func: &'f Function,
    names: ValueNames,
}

impl Printer<'_> {
    /// `%a, %b, %c`
    fn list(&self, values: &[Value]) -> String {
        let names: Vec<String> = values.iter().map(|&v| self.names.name(v)).collect();
        names.join(", ")
    }

    /// The operand at `index`, or `%?` when the op has too few.
    fn operand(&self, op: &Op, index: usize) -> String {
        op.operands
            .get(index)
            .map_or_else(|| "%?".to_string(), |&v| self.names.name(v))
    }

    /// `: t1, t2` for an op with results, nothing otherwise.
    fn result_types(&self, op: &Op) -> String {
        if op.results.is_empty() {
            return String::new();
        }
        let types: Vec<String> = op
            .results
            .iter()
            .map(|&v| self.func.ty(v).to_string())
            .collect();
        format!(" : {}", types.join(", "))
    }

    fn region_ops(&self, f: &mut fmt::Formatter<'_>, region: &Region, depth: usize) -> fmt::Result {
        for &op in &region.ops {
            self.op(f, op, depth)?;
        }
        Ok(())
    }

    /// One op's line (and its regions' lines).
    fn op(&self, f: &mut fmt::Formatter<'_>, id: OpId, depth: usize) -> fmt::Result {
        let op = self.func.op(id);
        let indent = "  ".repeat(depth);
        f.write_str(&indent)?;
        if !op.results.is_empty() {
            write!(f, "{} = ", self.list(&op.results))?;
        }
        match &op.kind {
            OpKind::For { .. } => return self.for_op(f, op, depth),
            OpKind::While => return self.while_op(f, op, depth),
            OpKind::ReduceWith { .. } | OpKind::ScanWith { .. } => {
                return self.combine_op(f, op, depth)
            }
            OpKind::If => return self.if_op(f, op, depth),
            _ => f.write_str(&self.body(op))?,
        }
        writeln!(f, "{}{}", self.result_types(op), loc_suffix(op))
    }

    /// An op's line by its table's format, between the `=` and the result
    /// types (of a `reduce_with` or `scan_with`, up to `combine`).
    fn body(&self, op: &Op) -> String {
        let names: Vec<String> = op.operands.iter().map(|&v| self.names.name(v)).collect();
        let ranks: Vec<Option<usize>> = op
            .operands
            .iter()
            .map(|&v| match self.func.ty(v) {
                Type::Tensor(t) => Some(t.rank),
                _ => None,
            })
            .collect();
        print_line(
            &op.kind,
            &Operands {
                names: &names,
                ranks: &ranks,
            },
        )
    }

    /// `for %iv = %lo to %hi step %s iter(%a = %init, ...) : types {` ... `}`
    fn for_op(&self, f: &mut fmt::Formatter<'_>, op: &Op, depth: usize) -> fmt::Result {
        let empty = Region::default();
        let body = op.regions.first().unwrap_or(&empty);
        let arg = |index: usize| {
            body.args
                .get(index)
                .map_or_else(|| "%?".to_string(), |&v| self.names.name(v))
        };
        let mut line = format!(
            "for {} = {} to {} step {}",
            arg(0),
            self.operand(op, 0),
            self.operand(op, 1),
            self.operand(op, 2)
        );
        let inits = op.operands.get(3..).unwrap_or_default();
        if !inits.is_empty() {
            let pairs: Vec<String> = inits
                .iter()
                .enumerate()
                .map(|(i, &init)| format!("{} = {}", arg(i + 1), self.names.name(init)))
                .collect();
            write!(line, " iter({})", pairs.join(", "))?;
        }
        if let OpKind::For { stages } = &op.kind {
            let no_operands = Operands {
                names: &[],
                ranks: &[],
            };
            Stages::write(stages, &no_operands, &mut line);
        }
        writeln!(f, "{line}{}{} {{", self.result_types(op), loc_suffix(op))?;
        self.region_ops(f, body, depth + 1)?;
        writeln!(f, "{}}}", "  ".repeat(depth))
    }

    /// `while iter(%a = %init, ...) : types {` ... `} do(%b, ...) {` ...
    /// `}`: the condition region, then the body.
    fn while_op(&self, f: &mut fmt::Formatter<'_>, op: &Op, depth: usize) -> fmt::Result {
        let empty = Region::default();
        let cond = op.regions.first().unwrap_or(&empty);
        let body = op.regions.get(1).unwrap_or(&empty);
        let mut line = "while".to_string();
        if !op.operands.is_empty() {
            let pairs: Vec<String> = op
                .operands
                .iter()
                .enumerate()
                .map(|(i, &init)| {
                    let arg = cond
                        .args
                        .get(i)
                        .map_or_else(|| "%?".to_string(), |&v| self.names.name(v));
                    format!("{arg} = {}", self.names.name(init))
                })
                .collect();
            write!(line, " iter({})", pairs.join(", "))?;
        }
        writeln!(f, "{line}{}{} {{", self.result_types(op), loc_suffix(op))?;
        self.region_ops(f, cond, depth + 1)?;
        let indent = "  ".repeat(depth);
        if body.args.is_empty() {
            writeln!(f, "{indent}}} do {{")?;
        } else {
            writeln!(f, "{indent}}} do({}) {{", self.list(&body.args))?;
        }
        self.region_ops(f, body, depth + 1)?;
        writeln!(f, "{indent}}}")
    }

    /// `reduce_with %x, ... axis n [keepdim] combine(%a, ..., %b, ...) :
    /// types {` ... `}` (and `scan_with`, without `keepdim`).
    fn combine_op(&self, f: &mut fmt::Formatter<'_>, op: &Op, depth: usize) -> fmt::Result {
        let empty = Region::default();
        let region = op.regions.first().unwrap_or(&empty);
        writeln!(
            f,
            "{} combine({}){}{} {{",
            self.body(op),
            self.list(&region.args),
            self.result_types(op),
            loc_suffix(op)
        )?;
        self.region_ops(f, region, depth + 1)?;
        writeln!(f, "{}}}", "  ".repeat(depth))
    }

    /// `if %c : types {` ... `} else {` ... `}`
    fn if_op(&self, f: &mut fmt::Formatter<'_>, op: &Op, depth: usize) -> fmt::Result {
        writeln!(
            f,
            "if {}{}{} {{",
            self.operand(op, 0),
            self.result_types(op),
            loc_suffix(op)
        )?;
        let indent = "  ".repeat(depth);
        for (i, region) in op.regions.iter().enumerate() {
            if i > 0 {
                writeln!(f, "{indent}}} else {{")?;
            }
            self.region_ops(f, region, depth + 1)?;
        }
        writeln!(f, "{indent}}}")
    }
}

/// ` loc(...)` for an op with a location, nothing otherwise.
fn loc_suffix(op: &Op) -> String {
    op.loc
        .as_ref()
        .map_or_else(String::new, |loc| format!(" {}", loc.attribute()))
}

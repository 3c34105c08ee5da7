//! The printer: `Display` for [`Function`] writes the text form.
//!
//! Values are named by [`ValueNames`], so printed names match every message
//! of the verifier and the interpreter. A function that breaks the structural
//! invariants (an op with too few operands, say) still prints, with `%?` for
//! a missing operand, but the text may not parse back.

use crate::function::{Function, Op, OpId, Region, Value};
use crate::names::ValueNames;
use crate::ops::{OpKind, Padding};
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

    /// The operands from `index` on.
    fn operands_from(&self, op: &Op, index: usize) -> String {
        self.list(op.operands.get(index..).unwrap_or_default())
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
            kind => f.write_str(&self.body(op, kind))?,
        }
        writeln!(f, "{}{}", self.result_types(op), loc_suffix(op))
    }

    /// The text between the `=` and the result types of an op without
    /// regions.
    fn body(&self, op: &Op, kind: &OpKind) -> String {
        let name = kind.name();
        let x = self.operand(op, 0);
        let with_list = |head: String| {
            if op.operands.is_empty() {
                head
            } else {
                format!("{head} {}", self.list(&op.operands))
            }
        };
        match kind {
            OpKind::ProgramId { axis } | OpKind::NumPrograms { axis } => format!("{name} {axis}"),
            OpKind::Constant { value } | OpKind::Full { value, .. } => format!("{name} {value}"),
            OpKind::Iota { .. } => name.to_string(),
            OpKind::Unary(_)
            | OpKind::Binary(_)
            | OpKind::Select
            | OpKind::Fma
            | OpKind::DotScaled
            | OpKind::Yield => with_list(name.to_string()),
            OpKind::Dot { precision } => with_list(format!("dot {precision}")),
            OpKind::Cmp(pred) => with_list(format!("cmp {pred}")),
            OpKind::Cast { to } => format!("cast {x} to {to}"),
            OpKind::Bitcast { to } => format!("bitcast {x} to {to}"),
            OpKind::Broadcast { shape } | OpKind::Reshape { shape } | OpKind::Expand { shape } => {
                format!("{name} {x} to {shape}")
            }
            OpKind::Permute { perm: axes } | OpKind::Flip { axes } => {
                format!("{name} {x} {}", int_list(axes))
            }
            OpKind::Slice { start, stop, step } => {
                let ranges: Vec<String> = start
                    .iter()
                    .zip(stop)
                    .zip(step)
                    .map(|((a, b), c)| format!("{a}:{b}:{c}"))
                    .collect();
                format!("slice {x} [{}]", ranges.join(", "))
            }
            OpKind::Pad { low, high, value } => {
                format!(
                    "pad {x} low {} high {} value {value}",
                    int_list(low),
                    int_list(high)
                )
            }
            OpKind::Cat { axis } => format!("{} axis {axis}", with_list(name.to_string())),
            OpKind::Reduce {
                kind,
                axis,
                keepdim,
            } => {
                format!("reduce {kind} {x} axis {axis}{}", keepdim_suffix(*keepdim))
            }
            OpKind::ArgReduce {
                kind,
                axis,
                keepdim,
            } => {
                format!("arg {kind} {x} axis {axis}{}", keepdim_suffix(*keepdim))
            }
            OpKind::Scan { kind, axis } => format!("scan {kind} {x} axis {axis}"),
            OpKind::Dim { axis } => format!("dim {x} axis {axis}"),
            OpKind::PartitionView { shape } => {
                let rank = shape.rank();
                let clause = |name: &str, from: usize| {
                    op.operands
                        .get(from..from + rank)
                        .filter(|_| rank > 0)
                        .map_or(String::new(), |v| format!(" {name}({})", self.list(v)))
                };
                format!(
                    "partition_view {x} {shape}{}{}",
                    clause("offset", 1),
                    clause("extent", 1 + rank)
                )
            }
            OpKind::Load => format!("load {x}[{}]", self.operands_from(op, 1)),
            OpKind::LoadMasked { padding } => format!(
                "load_masked {x}[{}] pad({})",
                self.operands_from(op, 1),
                padding_text(padding)
            ),
            OpKind::Store | OpKind::StoreMasked => format!(
                "{name} {x}, {}[{}]",
                self.operand(op, 1),
                self.operands_from(op, 2)
            ),
            OpKind::Atomic {
                op: atomic,
                order,
                scope,
            } => format!(
                "atomic {atomic} {order} {scope} {}",
                self.indexed_access(op)
            ),
            OpKind::Gather => format!("gather {}", self.indexed_access(op)),
            OpKind::Fence { order, scope } => format!("fence {order} {scope}"),
            OpKind::Barrier => "barrier".to_string(),
            OpKind::GridWait => "gdc_wait".to_string(),
            OpKind::GridLaunchDependents => "gdc_launch_dependents".to_string(),
            OpKind::Assert { id, message } => {
                format!("assert {id} {message:?} {}", self.operands_from(op, 0))
            }
            OpKind::Print { id, message } => {
                format!("print {id} {message:?} {}", self.operands_from(op, 0))
            }
            OpKind::LView(lview) => {
                let names: Vec<String> = op.operands.iter().map(|&v| self.names.name(v)).collect();
                super::lview::print_body(lview, &names)
            }
            // Their lines open regions; `Printer::op` prints them whole.
            OpKind::For { .. }
            | OpKind::While
            | OpKind::If
            | OpKind::ReduceWith { .. }
            | OpKind::ScanWith { .. } => name.to_string(),
        }
    }

    /// `%t[%i0, ...], %a, ...`: a tensor operand, one index per tensor axis,
    /// then the other operands (`atomic`, `gather`).
    fn indexed_access(&self, op: &Op) -> String {
        let rank = match op.operands.first().map(|&t| self.func.ty(t)) {
            Some(crate::types::Type::Tensor(t)) => t.rank,
            _ => 0,
        };
        let names: Vec<String> = op.operands.iter().map(|&v| self.names.name(v)).collect();
        let split = (1 + rank).min(names.len());
        format!(
            "{}[{}], {}",
            names.first().map_or("", String::as_str),
            names[1.min(split)..split].join(", "),
            names[split..].join(", ")
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
        if let OpKind::For {
            stages: Some(stages),
        } = op.kind
        {
            write!(line, " stages({stages})")?;
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
        let (axis, keepdim) = match op.kind {
            OpKind::ReduceWith { axis, keepdim } => (axis, keepdim),
            OpKind::ScanWith { axis } => (axis, false),
            _ => (0, false),
        };
        let empty = Region::default();
        let region = op.regions.first().unwrap_or(&empty);
        writeln!(
            f,
            "{} {} axis {axis}{} combine({}){}{} {{",
            op.kind.name(),
            self.list(&op.operands),
            keepdim_suffix(keepdim),
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

/// The padding of a masked load as written inside `pad(...)`.
pub(super) fn padding_text(padding: &Padding) -> String {
    match padding {
        Padding::Zero => "zero".to_string(),
        Padding::Nan => "nan".to_string(),
        Padding::PosInf => "posinf".to_string(),
        Padding::NegInf => "neginf".to_string(),
        Padding::Value(value) => value.to_string(),
    }
}

/// `[1, 0]`
fn int_list(items: &[usize]) -> String {
    let items: Vec<String> = items.iter().map(usize::to_string).collect();
    format!("[{}]", items.join(", "))
}

fn keepdim_suffix(keepdim: bool) -> &'static str {
    if keepdim {
        " keepdim"
    } else {
        ""
    }
}

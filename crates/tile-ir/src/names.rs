//! The names values carry in the text form and in every error message.
//!
//! Parameters keep their own names; every other value is numbered densely in
//! text order (`%0`, `%1`, …): an op's results, then the arguments and ops of
//! its regions. The printer, the verifier and the interpreter all name values
//! through [`ValueNames`], so a message always matches the printed IR.
//!
//! A run-time error names its op by [`ValueNames::describe_site`]: the Rust
//! expression and its location first, when the op has one, then the op as
//! the text form writes it and the tensor parameters it touches.

use crate::function::{Function, OpId, Value, ValueDef};
use crate::types::Type;
use std::collections::HashMap;

/// The text name of every value reachable in a function.
#[derive(Clone, Debug, Default)]
pub struct ValueNames {
    names: HashMap<Value, String>,
}

impl ValueNames {
    /// Numbers the values of `func` in text order.
    pub fn new(func: &Function) -> Self {
        let mut names = HashMap::new();
        for param in &func.params {
            names.insert(param.value, format!("%{}", param.name));
        }
        let mut next = 0usize;
        let mut number = |value: Value, names: &mut HashMap<Value, String>| {
            names.entry(value).or_insert_with(|| {
                next += 1;
                format!("%{}", next - 1)
            });
        };
        func.walk(&mut |op| {
            let op = func.op(op);
            for &result in &op.results {
                number(result, &mut names);
            }
            for region in &op.regions {
                for &arg in &region.args {
                    number(arg, &mut names);
                }
            }
        });
        ValueNames { names }
    }

    /// The name of `value`; a value not reachable from the body (a bug the
    /// verifier reports) is shown by its arena index as `%?N`.
    pub fn name(&self, value: Value) -> String {
        self.names
            .get(&value)
            .cloned()
            .unwrap_or_else(|| format!("%?{}", value.index()))
    }

    /// A one-line summary of an op for messages: its results, its name and
    /// its operands, e.g. `%7 = load %5, %0, %1`.
    pub fn describe_op(&self, func: &Function, op: OpId) -> String {
        let op = func.op(op);
        let join = |values: &[Value]| {
            values
                .iter()
                .map(|&v| self.name(v))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut text = String::new();
        if !op.results.is_empty() {
            text.push_str(&join(&op.results));
            text.push_str(" = ");
        }
        text.push_str(op.kind.name());
        if !op.operands.is_empty() {
            text.push(' ');
            text.push_str(&join(&op.operands));
        }
        text
    }

    /// An op for run-time errors, on one line: where it comes from in the
    /// kernel's source, the op itself and the tensor parameters it reads or
    /// writes. The text carries its own backquotes:
    ///
    /// ```text
    /// `x.load(..)` at src/lib.rs:12:5 (`%3 = load %2, %0`, a view of `x`)
    /// `%3 = load %2, %0` (a view of `x`)          -- without a location
    /// ```
    pub fn describe_site(&self, func: &Function, op: OpId) -> String {
        let text = format!("`{}`", self.describe_op(func, op));
        let tensors = tensors_touched(func, op);
        let loc = func.ops.get(op).and_then(|op| op.loc.as_ref());
        let head = match (loc, loc.and_then(|l| l.snippet.as_ref())) {
            (Some(loc), Some(snippet)) => format!("`{snippet}` at {loc}"),
            (Some(loc), None) => format!("the op at {loc}"),
            (None, _) => return with_note(text, &tensors),
        };
        let mut inner = vec![text];
        inner.extend(tensors);
        format!("{head} ({})", inner.join(", "))
    }
}

/// `text (note, note)`, or `text` without notes.
fn with_note(text: String, notes: &[String]) -> String {
    if notes.is_empty() {
        text
    } else {
        format!("{text} ({})", notes.join(", "))
    }
}

/// The tensor parameters an op reads or writes, by their Rust names: `` `x` ``
/// for a tensor operand, `` a tensor of `xs` `` for an element of a tensor
/// array, `` a view of `x` `` for a view of either (partition or layout
/// view, however derived), each once, in operand order.
pub fn tensors_touched(func: &Function, op: OpId) -> Vec<String> {
    let mut out = Vec::new();
    let operands = func.ops.get(op).map_or(&[][..], |op| &op.operands[..]);
    for &operand in operands {
        let note = match func.values.get(operand).map(|v| &v.ty) {
            Some(Type::Tensor(_)) => match param_name(func, operand) {
                Some(name) => Some(format!("`{name}`")),
                None => viewed_tensor(func, operand).map(|name| format!("a tensor of `{name}`")),
            },
            Some(Type::PartitionView(_) | Type::LayoutView(_)) => {
                viewed_tensor(func, operand).map(|name| format!("a view of `{name}`"))
            }
            _ => None,
        };
        if let Some(note) = note.filter(|note| !out.contains(note)) {
            out.push(note);
        }
    }
    out
}

/// The name of the parameter `value` is, if it is one.
fn param_name(func: &Function, value: Value) -> Option<&str> {
    match func.values.get(value)?.def {
        ValueDef::Param(index) => func.params.get(index).map(|p| p.name.as_str()),
        _ => None,
    }
}

/// The tensor parameter a view is derived from: the first tensor or view
/// operand of its defining op, followed back to a parameter (at most a
/// few dozen steps, so a malformed function cannot loop).
fn viewed_tensor(func: &Function, view: Value) -> Option<&str> {
    let mut value = view;
    for _ in 0..64 {
        if let Some(name) = param_name(func, value) {
            return Some(name);
        }
        let ValueDef::Result { op, .. } = func.values.get(value)?.def else {
            return None;
        };
        value = *func.ops.get(op)?.operands.iter().find(|&&v| {
            matches!(
                func.values.get(v).map(|v| &v.ty),
                Some(
                    Type::Tensor(_)
                        | Type::Tensors(_)
                        | Type::PartitionView(_)
                        | Type::LayoutView(_)
                )
            )
        })?;
    }
    None
}

//! The names values carry in the text form and in every error message.
//!
//! Parameters keep their own names; every other value is numbered densely in
//! text order (`%0`, `%1`, …): an op's results, then the arguments and ops of
//! its regions. The printer, the verifier and the interpreter all name values
//! through [`ValueNames`], so a message always matches the printed IR.

use crate::function::{Function, OpId, Value};
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
}

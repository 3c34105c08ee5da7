//! Common subexpression elimination: a pure op that computes what an earlier
//! op visible at its place already computed (same kind, attributes, operands
//! and result types) is replaced by that op's results.
//!
//! Scoping follows dominance: ops of the enclosing regions are visible inside
//! a nested region, ops of a nested region are not visible after it. Loads
//! are not merged (a store may lie between them); ops with regions or effects
//! never are.

use super::rewrite::{put_regions, take_regions, Substitution};
use super::Pass;
use crate::function::{Function, OpId, Region, Value};
use crate::ops::OpKind;
use crate::types::Type;
use std::collections::HashMap;

/// The `cse` pass.
pub struct Cse;

type Key = (OpKind, Vec<Value>, Vec<Type>);

impl Pass for Cse {
    fn name(&self) -> &'static str {
        "cse"
    }

    fn run(&self, func: &mut Function) -> bool {
        let mut subst = Substitution::default();
        let mut scopes: Vec<HashMap<Key, OpId>> = Vec::new();
        let body = std::mem::take(&mut func.body);
        visit(func, &body, &mut scopes, &mut subst);
        func.body = body;
        let changed = !subst.is_empty();
        subst.apply(func);
        changed
    }
}

fn visit(
    func: &mut Function,
    region: &Region,
    scopes: &mut Vec<HashMap<Key, OpId>>,
    subst: &mut Substitution,
) {
    scopes.push(HashMap::new());
    for &id in &region.ops {
        let regions = take_regions(func, id);
        for nested in &regions {
            visit(func, nested, scopes, subst);
        }
        put_regions(func, id, regions);
        let op = func.op(id);
        let mergeable =
            op.regions.is_empty() && !op.kind.has_side_effects() && !op.kind.reads_memory();
        if !mergeable {
            continue;
        }
        let key: Key = (
            op.kind.clone(),
            op.operands.iter().map(|&v| subst.resolve(v)).collect(),
            op.results.iter().map(|&v| func.ty(v).clone()).collect(),
        );
        match scopes.iter().rev().find_map(|scope| scope.get(&key)) {
            Some(&earlier) => {
                let pairs: Vec<(Value, Value)> = op
                    .results
                    .iter()
                    .copied()
                    .zip(func.op(earlier).results.iter().copied())
                    .collect();
                for (from, to) in pairs {
                    subst.replace(from, to);
                }
            }
            None => {
                if let Some(scope) = scopes.last_mut() {
                    scope.insert(key, id);
                }
            }
        }
    }
    scopes.pop();
}

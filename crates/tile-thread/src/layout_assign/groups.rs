//! Union–find over the values of a function: the groups of tile values
//! that layout assignment decides together.

use std::collections::BTreeMap;
use tile_ir::{Function, Type, Value};

/// Whether `a` and `b` are tiles of one shape.
pub(super) fn same_shape(func: &Function, a: Value, b: Value) -> bool {
    match (func.ty(a), func.ty(b)) {
        (Type::Tile(x), Type::Tile(y)) => x.shape == y.shape,
        _ => false,
    }
}

/// Union–find over values.
#[derive(Default)]
pub(super) struct Groups {
    parent: BTreeMap<Value, Value>,
}

impl Groups {
    /// The representative of `v`'s group.
    pub(super) fn root(&mut self, v: Value) -> Value {
        let mut at = v;
        while let Some(&up) = self.parent.get(&at) {
            if up == at {
                break;
            }
            at = up;
        }
        // Path compression: every value on the way points at the root.
        let mut walk = v;
        while walk != at {
            let next = self.parent.insert(walk, at).unwrap_or(at);
            walk = next;
        }
        at
    }

    /// Puts `a` and `b` into one group.
    pub(super) fn join(&mut self, a: Value, b: Value) {
        let (ra, rb) = (self.root(a), self.root(b));
        if ra != rb {
            self.parent.insert(ra, rb);
        }
    }
}

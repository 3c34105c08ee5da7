//! Kernels: parameters, a body of ops in structured regions, and the arenas
//! that own every op and value.

use crate::arena::{Arena, Handle};
use crate::location::Location;
use crate::ops::OpKind;
use crate::types::Type;

/// The handle of an op in its function's arena.
pub type OpId = Handle<Op>;

/// The handle of an SSA value in its function's arena.
pub type Value = Handle<ValueInfo>;

/// Where a value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueDef {
    /// The kernel parameter at this position.
    Param(usize),
    /// Result `index` of op `op`.
    Result {
        /// The defining op.
        op: OpId,
        /// The position among the op's results.
        index: usize,
    },
    /// Argument `index` of the region that declares it (the induction variable
    /// and carried values of a `for`).
    RegionArg {
        /// The position among the region's arguments.
        index: usize,
    },
}

/// An SSA value: its type and its definition.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueInfo {
    /// The value's type.
    pub ty: Type,
    /// Where the value is defined.
    pub def: ValueDef,
}

/// A straight-line list of ops with arguments: a kernel body, a loop body, or
/// a branch of an `if`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Region {
    /// Values defined on entry (for a `for` body: the induction variable, then
    /// the carried values).
    pub args: Vec<Value>,
    /// The ops in execution order; a nested region ends with a `yield`.
    pub ops: Vec<OpId>,
}

/// One operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    /// What the op computes.
    pub kind: OpKind,
    /// The values it reads.
    pub operands: Vec<Value>,
    /// The values it defines.
    pub results: Vec<Value>,
    /// Nested regions (`for`: one; `if`: then and else).
    pub regions: Vec<Region>,
    /// The source expression it comes from, if known.
    pub loc: Option<Location>,
}

/// A kernel parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The parameter's name, unique in the kernel.
    pub name: String,
    /// The value that stands for it in the body.
    pub value: Value,
}

/// A kernel: the unit that the IR's passes, interpreter and back ends take.
///
/// Invariants, checked by [`crate::verify`] and trusted by every later stage:
/// every handle points into this function's arenas; every op appears in
/// exactly one region; a value is used only where its definition dominates
/// (earlier in the same region or in an enclosing one); every type agrees
/// with the typing rules of [`crate::rules`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Function {
    /// The kernel's name.
    pub name: String,
    /// The parameters, in call order.
    pub params: Vec<Param>,
    /// The top-level region (no arguments, no terminator).
    pub body: Region,
    /// Every op ever created for this function (some may be unreachable after
    /// a pass; only the regions say what runs).
    pub ops: Arena<Op>,
    /// Every value ever created for this function.
    pub values: Arena<ValueInfo>,
}

impl Function {
    /// An empty kernel with the given name.
    pub fn new(name: impl Into<String>) -> Self {
        Function {
            name: name.into(),
            ..Function::default()
        }
    }

    /// The type of a value.
    pub fn ty(&self, value: Value) -> &Type {
        &self.values[value].ty
    }

    /// The op of a handle.
    pub fn op(&self, op: OpId) -> &Op {
        &self.ops[op]
    }

    /// The op that defines `value`, if it is an op's result.
    pub fn defining_op(&self, value: Value) -> Option<OpId> {
        match self.values[value].def {
            ValueDef::Result { op, .. } => Some(op),
            _ => None,
        }
    }

    /// Adds a parameter and returns its value.
    pub fn add_param(&mut self, name: impl Into<String>, ty: Type) -> Value {
        let index = self.params.len();
        let value = self.values.append(ValueInfo {
            ty,
            def: ValueDef::Param(index),
        });
        self.params.push(Param {
            name: name.into(),
            value,
        });
        value
    }

    /// Creates a region argument of type `ty` (not yet placed in a region).
    pub fn new_region_arg(&mut self, index: usize, ty: Type) -> Value {
        self.values.append(ValueInfo {
            ty,
            def: ValueDef::RegionArg { index },
        })
    }

    /// Creates an op with results of the given types, without placing it in a
    /// region and without checking it (the verifier does).
    pub fn create_op(
        &mut self,
        kind: OpKind,
        operands: Vec<Value>,
        result_types: Vec<Type>,
        regions: Vec<Region>,
    ) -> OpId {
        let op = self.ops.append(Op {
            kind,
            operands,
            results: Vec::new(),
            regions,
            loc: None,
        });
        let results = result_types
            .into_iter()
            .enumerate()
            .map(|(index, ty)| {
                self.values.append(ValueInfo {
                    ty,
                    def: ValueDef::Result { op, index },
                })
            })
            .collect();
        self.ops[op].results = results;
        op
    }

    /// The same kernel without source locations: what depends on its code
    /// only (the kernel cache's key, compiled images) is made from it.
    pub fn without_locations(&self) -> Function {
        let mut plain = self.clone();
        for op in plain.ops.values_mut() {
            op.loc = None;
        }
        plain
    }

    /// Calls `visit` on every op reachable from the body, parents before the
    /// ops of their regions, in execution order.
    pub fn walk(&self, visit: &mut impl FnMut(OpId)) {
        self.walk_region(&self.body, visit);
    }

    /// The first op reachable from the body, in [`Function::walk`]'s order,
    /// for which `pick` gives something, and what it gave.
    pub fn find_op<T>(&self, mut pick: impl FnMut(&Op) -> Option<T>) -> Option<T> {
        let mut found = None;
        self.walk(&mut |id| {
            if found.is_none() {
                found = pick(self.op(id));
            }
        });
        found
    }

    /// Every value an op reachable from the body reads.
    pub fn used_values(&self) -> std::collections::HashSet<Value> {
        let mut used = std::collections::HashSet::new();
        self.walk(&mut |op| used.extend(self.op(op).operands.iter().copied()));
        used
    }

    /// Calls `visit` on every op of `region` and of its nested regions,
    /// parents first.
    pub fn walk_region(&self, region: &Region, visit: &mut impl FnMut(OpId)) {
        for &op in &region.ops {
            visit(op);
            for nested in &self.ops[op].regions {
                self.walk_region(nested, visit);
            }
        }
    }
}

//! The verifier of the thread-level program: structure and types, checked
//! before anything trusts a program (the LLVM emitter, in particular).
//!
//! Checked: every op, register and allocation handle exists, and an
//! allocation that aliases another names an earlier one that aliases none;
//! every operand is
//! defined earlier in its region or an enclosing one; every register is
//! defined once; the operand count and dtypes of every op kind (as documented
//! on [`ThreadOpKind`]); parameter references name a parameter of the right
//! kind; regions end with a `yield` that matches the op's results (and, for a
//! `for`, its carried values); then that a barrier orders every pair of
//! shared-memory accesses of different threads that may meet, one of them a
//! write (`hazards.rs`). Uniformity of control flow is a property of
//! values, left to the emulator.

use super::table::Results;
use super::{Op, OpId, Program, Reg, Region, Roles, ThreadOpKind};
use tile_ir::DType;

mod rules;
mod tcgen05;

/// A broken rule of the thread-level program, naming the op.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{op}`: {rule}")]
pub struct VerifyError {
    /// The op's text (or `kernel`).
    pub op: String,
    /// The rule it breaks.
    pub rule: String,
}

/// Checks `program` against the rules of the thread-level program.
pub fn verify(program: &Program) -> Result<(), VerifyError> {
    if program.num_warps == 0 {
        return Err(VerifyError {
            op: "kernel".into(),
            rule: "a block needs at least one warp".into(),
        });
    }
    for (id, alloc) in program.shared.iter() {
        let Some(root) = alloc.aliases else { continue };
        let valid = root.index() < id.index()
            && program
                .shared
                .get(root)
                .is_some_and(|r| r.aliases.is_none());
        if !valid {
            return Err(VerifyError {
                op: "kernel".into(),
                rule: format!(
                    "`@s{}` aliases `@s{}`: an allocation aliases an earlier one that aliases none",
                    id.index(),
                    root.index()
                ),
            });
        }
    }
    let passed = program.params.iter().take_while(|p| p.kind.is_passed());
    if program
        .params
        .iter()
        .skip(passed.count())
        .any(|p| p.kind.is_passed())
    {
        return Err(VerifyError {
            op: "kernel".into(),
            rule: "the tensors of arrays come after the parameters passed".into(),
        });
    }
    let mut checker = Checker {
        program,
        defined: vec![false; program.regs.len()],
        visible: vec![false; program.regs.len()],
        bound: vec![false; program.params.len()],
        ever_bound: vec![false; program.params.len()],
        bound_scope: Vec::new(),
    };
    let mut scope = Vec::new();
    checker.region(&program.body, &mut scope, None)?;
    super::hazards::check(program)
}

struct Checker<'a> {
    program: &'a Program,
    /// Registers defined so far anywhere (each is defined once).
    defined: Vec<bool>,
    /// Registers in the scope at hand (defined earlier in its region or an
    /// enclosing one): the registers `scope` lists.
    visible: Vec<bool>,
    /// Per parameter, whether it is a tensor of an array that a
    /// `get_tensor` in scope bound, and whether one ever did.
    bound: Vec<bool>,
    ever_bound: Vec<bool>,
    /// The parameters bound in the regions being checked, innermost last.
    bound_scope: Vec<usize>,
}

impl Checker<'_> {
    fn fail(&self, id: Option<OpId>, rule: impl Into<String>) -> VerifyError {
        VerifyError {
            op: id.map_or_else(|| "kernel".into(), |id| self.program.op_text(id)),
            rule: rule.into(),
        }
    }

    /// Defines `r` in `scope`.
    fn define(
        &mut self,
        id: Option<OpId>,
        r: Reg,
        scope: &mut Vec<Reg>,
    ) -> Result<(), VerifyError> {
        match self.defined.get_mut(r.index()) {
            Some(seen) if !*seen => {
                *seen = true;
                self.visible[r.index()] = true;
                scope.push(r);
                Ok(())
            }
            Some(_) => Err(self.fail(id, "a register is defined twice")),
            None => Err(self.fail(id, "a register outside the program")),
        }
    }

    /// Checks a region whose `yield` must give `expected` dtypes (`None`:
    /// the kernel body, which has no `yield`).
    fn region(
        &mut self,
        region: &Region,
        scope: &mut Vec<Reg>,
        expected: Option<&[DType]>,
    ) -> Result<(), VerifyError> {
        let depth = scope.len();
        let bound_depth = self.bound_scope.len();
        for &arg in &region.args {
            self.define(None, arg, scope)?;
        }
        for (position, &id) in region.ops.iter().enumerate() {
            let op = self
                .program
                .ops
                .get(id)
                .ok_or_else(|| self.fail(None, "an op outside the program"))?;
            let visible = |r: &Reg| self.visible.get(r.index()).copied().unwrap_or(false);
            if let Some(&r) = op.operands.iter().find(|r| !visible(r)) {
                return Err(self.fail(
                    Some(id),
                    format!("operand %?{} is not defined before its use", r.index()),
                ));
            }
            let last = position + 1 == region.ops.len();
            match (&op.kind, expected) {
                (ThreadOpKind::Yield, Some(types)) if last => {
                    let found = self.dtypes(&op.operands);
                    if found != types {
                        return Err(self.fail(
                            Some(id),
                            format!("yields {found:?} where {types:?} is expected"),
                        ));
                    }
                }
                (ThreadOpKind::Yield, _) => {
                    return Err(self.fail(Some(id), "a `yield` that does not end a nested region"))
                }
                _ => {
                    if last && expected.is_some() {
                        return Err(self.fail(Some(id), "a nested region must end with `yield`"));
                    }
                    self.op(id, op, scope)?;
                }
            }
        }
        if region.ops.is_empty() && expected.is_some() {
            return Err(self.fail(None, "an empty nested region"));
        }
        for r in scope.drain(depth..) {
            self.visible[r.index()] = false;
        }
        for param in self.bound_scope.drain(bound_depth..) {
            self.bound[param] = false;
        }
        Ok(())
    }

    fn dtypes(&self, regs: &[Reg]) -> Vec<DType> {
        regs.iter().map(|&r| self.program.dtype(r)).collect()
    }

    /// Checks an op against its row (operand layout, fixed dtypes, fixed
    /// results) and its typing rule, then defines its results.
    fn op(&mut self, id: OpId, op: &Op, scope: &mut Vec<Reg>) -> Result<(), VerifyError> {
        let operands = self.dtypes(&op.operands);
        let results = self.dtypes(&op.results);
        let spec = op.kind.results();
        let ok = match Roles::of(&op.kind, &operands).filter(|roles| roles.typed()) {
            // A structured op's operands and regions are its own.
            _ if spec == Results::Region => self.structured(id, op, &results, scope)?,
            Some(roles) => {
                spec.fixed().is_none_or(|fixed| results == fixed)
                    && self.typing(id, op, &roles, &results)?
            }
            None => false,
        };
        if !ok {
            return Err(self.fail(
                Some(id),
                format!(
                    "operands {operands:?} and results {results:?} break the rule of `{}`",
                    op.kind.name()
                ),
            ));
        }
        for &r in &op.results {
            self.define(Some(id), r, scope)?;
        }
        if let ThreadOpKind::GetTensor { param, .. } = op.kind {
            self.bound[param] = true;
            self.ever_bound[param] = true;
            self.bound_scope.push(param);
        }
        Ok(())
    }

    /// Whether a `for`, `while` or `if` has its operands, regions and
    /// results; checks its regions.
    fn structured(
        &mut self,
        id: OpId,
        op: &Op,
        results: &[DType],
        scope: &mut Vec<Reg>,
    ) -> Result<bool, VerifyError> {
        let bad = |s: &Self, rule: &str| Err(s.fail(Some(id), rule.to_string()));
        let operands = self.dtypes(&op.operands);
        match op.kind {
            ThreadOpKind::For => {
                let ([lo, hi, step, inits @ ..], [body]) =
                    (operands.as_slice(), op.regions.as_slice())
                else {
                    return bad(self, "`for` needs bounds, initial values and one region");
                };
                if !(lo.is_int() && lo == hi && lo == step) || results != inits {
                    return bad(
                        self,
                        "`for` bounds of one integer dtype and results like its initial values",
                    );
                }
                let args = self.dtypes(&body.args);
                if args.first() != Some(lo) || args[1..] != *inits {
                    return bad(
                        self,
                        "the body's arguments are the induction variable and the carried values",
                    );
                }
                self.region(body, scope, Some(inits))?;
            }
            ThreadOpKind::While => {
                let [cond, body] = op.regions.as_slice() else {
                    return bad(self, "`while` needs two regions");
                };
                if results != operands
                    || self.dtypes(&cond.args) != operands
                    || self.dtypes(&body.args) != operands
                {
                    return bad(
                        self,
                        "`while` regions take the carried values and give results like its initial values",
                    );
                }
                self.region(cond, scope, Some(&[DType::Bool]))?;
                self.region(body, scope, Some(&operands))?;
            }
            _ => {
                let [then, otherwise] = op.regions.as_slice() else {
                    return bad(self, "`if` needs two regions");
                };
                if operands != [DType::Bool] || !then.args.is_empty() || !otherwise.args.is_empty()
                {
                    return bad(self, "`if` takes a bool and regions without arguments");
                }
                self.region(then, scope, Some(results))?;
                self.region(otherwise, scope, Some(results))?;
            }
        }
        Ok(true)
    }
}

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

use super::{
    CheckKind, GlobalOperands, Op, OpId, ParamKind, Program, Reg, Region, ThreadOpKind, WARP_SIZE,
};
use tile_ir::DType;

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
    let mut checker = Checker {
        program,
        defined: vec![false; program.regs.len()],
        visible: vec![false; program.regs.len()],
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
        Ok(())
    }

    fn dtypes(&self, regs: &[Reg]) -> Vec<DType> {
        regs.iter().map(|&r| self.program.dtype(r)).collect()
    }

    fn op(&mut self, id: OpId, op: &Op, scope: &mut Vec<Reg>) -> Result<(), VerifyError> {
        let operands = self.dtypes(&op.operands);
        let results = self.dtypes(&op.results);
        let bad = |s: &Self, rule: &str| Err(s.fail(Some(id), rule.to_string()));
        let tensor = |s: &Self, param: usize| match s.program.params.get(param).map(|p| &p.kind) {
            Some(ParamKind::Tensor(t)) => Ok(*t),
            _ => Err(s.fail(Some(id), format!("parameter {param} is not a tensor"))),
        };
        let i32_result = results == [DType::I32];
        let ok = match &op.kind {
            ThreadOpKind::ThreadId | ThreadOpKind::LaneId | ThreadOpKind::WarpId => {
                operands.is_empty() && i32_result
            }
            ThreadOpKind::BlockId { axis } | ThreadOpKind::GridDim { axis } => {
                *axis < 3 && operands.is_empty() && i32_result
            }
            ThreadOpKind::Const(v) => operands.is_empty() && results == [v.dtype()],
            ThreadOpKind::Param { index } => match self.program.params.get(*index).map(|p| &p.kind)
            {
                Some(ParamKind::Scalar(d)) => operands.is_empty() && results == [*d],
                _ => return bad(self, "`param` of a parameter that is not a scalar"),
            },
            ThreadOpKind::TensorDim { param, axis }
            | ThreadOpKind::TensorStride { param, axis } => {
                let t = tensor(self, *param)?;
                let dtype = if matches!(op.kind, ThreadOpKind::TensorDim { .. }) {
                    DType::I32
                } else {
                    DType::I64
                };
                *axis < t.rank && operands.is_empty() && results == [dtype]
            }
            ThreadOpKind::TensorAlign { param } => {
                tensor(self, *param)?;
                operands.is_empty() && results == [DType::I64]
            }
            ThreadOpKind::Unary(_) | ThreadOpKind::Binary(_) | ThreadOpKind::Fma => {
                let arity = match op.kind {
                    ThreadOpKind::Unary(_) => 1,
                    ThreadOpKind::Binary(_) => 2,
                    _ => 3,
                };
                operands.len() == arity
                    && operands.iter().all(|&d| d == operands[0])
                    && results == operands[..1]
            }
            ThreadOpKind::Cmp(_) => {
                operands.len() == 2 && operands[0] == operands[1] && results == [DType::Bool]
            }
            ThreadOpKind::Select => {
                operands.len() == 3
                    && operands[0] == DType::Bool
                    && operands[1] == operands[2]
                    && results == operands[1..2]
            }
            ThreadOpKind::Cast { to } => operands.len() == 1 && results == [*to],
            ThreadOpKind::Bitcast { to } => {
                operands.len() == 1 && results == [*to] && operands[0].bits() == to.bits()
            }
            ThreadOpKind::Opaque => {
                matches!(operands.as_slice(), [DType::I32 | DType::I64]) && results == operands
            }
            ThreadOpKind::LoadGlobal { param, width } => {
                let t = tensor(self, *param)?;
                GlobalOperands::load(&operands, usize::from(*width)).is_some_and(|o| {
                    global_addressing(&o)
                        && o.masks.iter().all(|&d| d == DType::Bool)
                        && o.others.iter().all(|&d| d == t.dtype)
                }) && results == vec![t.dtype; usize::from(*width)]
            }
            ThreadOpKind::StoreGlobal { param, width } => {
                let t = tensor(self, *param)?;
                GlobalOperands::store(&operands, usize::from(*width)).is_some_and(|o| {
                    global_addressing(&o)
                        && o.values.iter().all(|&d| d == t.dtype)
                        && o.masks.iter().all(|&d| d == DType::Bool)
                }) && results.is_empty()
            }
            ThreadOpKind::AtomicGlobal {
                param, op: update, ..
            } => {
                let t = tensor(self, *param)?;
                let mut want = vec![DType::I64];
                if *update == tile_ir::AtomicOp::Cas {
                    want.push(t.dtype);
                }
                want.extend([t.dtype, DType::Bool]);
                update.supports(t.dtype) && operands == want && results == [t.dtype]
            }
            ThreadOpKind::LoadShared { alloc, width }
            | ThreadOpKind::StoreShared { alloc, width } => {
                let Some(a) = self.program.shared.get(*alloc) else {
                    return bad(self, "an allocation outside the program");
                };
                let w = usize::from(*width);
                let vector_bytes = w * a.dtype.size_bytes();
                if !w.is_power_of_two() || (w > 1 && (vector_bytes > 16 || a.dtype == DType::Bool))
                {
                    return bad(self, "a shared vector of at most 16 bytes of numbers");
                }
                if matches!(op.kind, ThreadOpKind::LoadShared { .. }) {
                    operands == [DType::I32] && results == vec![a.dtype; w]
                } else {
                    let mut want = vec![DType::I32];
                    want.extend(vec![a.dtype; w]);
                    want.push(DType::Bool);
                    operands == want && results.is_empty()
                }
            }
            // An assertion's values keep their dtypes; other checks report
            // indices and steps as `i64`.
            ThreadOpKind::Check { kind, .. } => {
                operands.first() == Some(&DType::Bool)
                    && (*kind == CheckKind::Assert
                        || operands[1..].iter().all(|&d| d == DType::I64))
                    && results.is_empty()
            }
            ThreadOpKind::Print { .. } => {
                operands.len() >= 2
                    && operands[..2] == [DType::Bool, DType::I32]
                    && results.is_empty()
            }
            ThreadOpKind::Barrier => operands.is_empty() && results.is_empty(),
            ThreadOpKind::Fence { order, .. } => {
                *order != tile_ir::MemOrder::Relaxed && operands.is_empty() && results.is_empty()
            }
            ThreadOpKind::Shuffle { width, .. } => {
                let w = u32::from(*width);
                w.is_power_of_two()
                    && w <= WARP_SIZE
                    && operands.len() == 2
                    && operands[1] == DType::I32
                    && results == operands[..1]
            }
            ThreadOpKind::CopyAsync { param, alloc } => {
                let Some(a) = self.program.shared.get(*alloc) else {
                    return bad(self, "an allocation outside the program");
                };
                let tensor = match self.program.params.get(*param).map(|p| &p.kind) {
                    Some(ParamKind::Tensor(t)) => *t,
                    _ => return bad(self, "a parameter that is not a tensor"),
                };
                tensor.dtype == a.dtype
                    && 16 % a.dtype.size_bytes().max(1) == 0
                    && operands == [DType::I64, DType::I32, DType::I32, DType::Bool]
                    && results.is_empty()
            }
            ThreadOpKind::MbarrierInit { alloc }
            | ThreadOpKind::MbarrierExpectTx { alloc }
            | ThreadOpKind::MbarrierWait { alloc } => {
                if self.program.shared.get(*alloc).map(|a| a.dtype) != Some(DType::U64) {
                    return bad(self, "an mbarrier outside an allocation of `u64`s");
                }
                let want: &[DType] = if matches!(op.kind, ThreadOpKind::MbarrierWait { .. }) {
                    &[DType::I32, DType::I32]
                } else {
                    &[DType::I32, DType::I32, DType::Bool]
                };
                operands == want && results.is_empty()
            }
            ThreadOpKind::TmaLoad {
                param,
                rows,
                alloc,
                bar,
            } => {
                let Some(a) = self.program.shared.get(*alloc) else {
                    return bad(self, "an allocation outside the program");
                };
                let tensor = match self.program.params.get(*param).map(|p| &p.kind) {
                    Some(ParamKind::Tensor(t)) => *t,
                    _ => return bad(self, "a parameter that is not a tensor"),
                };
                if tensor.rank != 2 || tensor.dtype != a.dtype {
                    return bad(
                        self,
                        "`tma.load` of other than a 2-D tensor of its allocation's dtype",
                    );
                }
                if tile_abi::tma::TmaBox::new(a.dtype, usize::from(*rows)).is_none() {
                    return bad(self, "a box the TMA cannot move");
                }
                if a.align < 1024 {
                    return bad(
                        self,
                        "`tma.load` into an allocation not on a 1024-byte boundary",
                    );
                }
                if self.program.shared.get(*bar).map(|b| b.dtype) != Some(DType::U64) {
                    return bad(self, "an mbarrier outside an allocation of `u64`s");
                }
                operands == [DType::I32, DType::I32, DType::I32, DType::I32, DType::Bool]
                    && results.is_empty()
            }
            ThreadOpKind::CommitAsync
            | ThreadOpKind::WaitAsync { .. }
            | ThreadOpKind::WgmmaFence
            | ThreadOpKind::WgmmaCommit
            | ThreadOpKind::FenceProxyAsync
            | ThreadOpKind::GridWait
            | ThreadOpKind::GridLaunchDependents => operands.is_empty() && results.is_empty(),
            ThreadOpKind::TmemAlloc { .. }
            | ThreadOpKind::TmemDealloc { .. }
            | ThreadOpKind::Tcgen05Mma { .. }
            | ThreadOpKind::Tcgen05CommitWait { .. }
            | ThreadOpKind::TmemLoad { .. }
            | ThreadOpKind::TmemStore => self.tcgen05_op(id, &op.kind, &operands, &results)?,
            ThreadOpKind::WgmmaWait { .. } => {
                operands == results && operands.iter().all(|&d| d == DType::F32)
            }
            ThreadOpKind::Wgmma {
                kind,
                a,
                a_swizzle,
                b,
            } => {
                let dtypes = [a, b].map(|alloc| self.program.shared.get(*alloc).map(|s| s.dtype));
                if dtypes.iter().any(|d| *d != Some(kind.dtype)) {
                    return bad(self, "`wgmma` operands in allocations of another dtype");
                }
                if a_swizzle.row_bytes().is_none() {
                    return bad(self, "a `wgmma` whose A is not in a swizzled layout");
                }
                if !(self.program.block_threads() as usize)
                    .is_multiple_of(tile_hw::wgmma::WARPGROUP)
                {
                    return bad(self, "a `wgmma` in a block that is not whole warpgroups");
                }
                operands.len() == 2 + kind.accumulators()
                    && operands[..2] == [DType::I32, DType::I32]
                    && operands[2..].iter().all(|&x| x == DType::F32)
                    && results.len() == kind.accumulators()
                    && results.iter().all(|&x| x == DType::F32)
            }
            ThreadOpKind::WgmmaRegisterA { kind, b } => {
                if self.program.shared.get(*b).map(|s| s.dtype) != Some(kind.dtype) {
                    return bad(self, "`wgmma` operands in allocations of another dtype");
                }
                if !(self.program.block_threads() as usize)
                    .is_multiple_of(tile_hw::wgmma::WARPGROUP)
                {
                    return bad(self, "a `wgmma` in a block that is not whole warpgroups");
                }
                let a = tile_hw::wgmma::REGISTER_A_ELEMENTS;
                operands.len() == a + 1 + kind.accumulators()
                    && operands[..a].iter().all(|&x| x == kind.dtype)
                    && operands[a] == DType::I32
                    && operands[a + 1..].iter().all(|&x| x == DType::F32)
                    && results.len() == kind.accumulators()
                    && results.iter().all(|&x| x == DType::F32)
            }
            ThreadOpKind::LdMatrix { alloc, shape } => {
                let Some(a) = self.program.shared.get(*alloc) else {
                    return bad(self, "an allocation outside the program");
                };
                // Two 16-bit elements per register, or one 32-bit element,
                // or four 8-bit ones (whose pairs or halves a transpose
                // would split or swap).
                let per_register = match (a.dtype.size_bytes(), shape.trans) {
                    (2, _) => 2,
                    (4, false) => 1,
                    (1, false) => 4,
                    _ => return bad(self, "`ldmatrix` of other than 8-, 16- or 32-bit elements, or a transposed one of 8- or 32-bit elements"),
                };
                operands == [DType::I32]
                    && results.len() == per_register * usize::from(shape.count)
                    && results.iter().all(|&d| d == a.dtype)
            }
            ThreadOpKind::Mma { kind } => {
                use tile_hw::mma::Fragment;
                let (na, nb) = (kind.elements(Fragment::A), kind.elements(Fragment::B));
                let nc = kind.elements(Fragment::C);
                let d = kind.operand_dtype();
                if !(self.program.block_threads() as usize).is_multiple_of(kind.lanes()) {
                    return bad(
                        self,
                        "an `mma` whose lanes do not divide the block's threads",
                    );
                }
                operands.len() == na + nb + nc
                    && operands[..na + nb].iter().all(|&x| x == d)
                    && operands[na + nb..].iter().all(|&x| x == DType::F32)
                    && results.len() == nc
                    && results.iter().all(|&x| x == DType::F32)
            }
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
                true
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
                true
            }
            ThreadOpKind::If => {
                let [then, otherwise] = op.regions.as_slice() else {
                    return bad(self, "`if` needs two regions");
                };
                if operands != [DType::Bool] || !then.args.is_empty() || !otherwise.args.is_empty()
                {
                    return bad(self, "`if` takes a bool and regions without arguments");
                }
                self.region(then, scope, Some(&results))?;
                self.region(otherwise, scope, Some(&results))?;
                true
            }
            ThreadOpKind::Yield => false,
        };
        if !ok {
            return bad(
                self,
                &format!(
                    "operands {operands:?} and results {results:?} break the rule of `{}`",
                    op.kind.name()
                ),
            );
        }
        for &r in &op.results {
            self.define(Some(id), r, scope)?;
        }
        Ok(())
    }
}

/// Whether a global access's address and lanes are `i64` offsets and its
/// vector condition a `bool`.
fn global_addressing(o: &GlobalOperands<'_, DType>) -> bool {
    *o.addr == DType::I64
        && o.lanes.iter().all(|&d| d == DType::I64)
        && o.vector_ok.is_none_or(|&d| d == DType::Bool)
}

//! The typing rules of the thread ops beyond what their rows say: dtypes
//! that follow an attribute, a parameter or an allocation, counts that
//! follow an instruction, and attributes' ranges. The rows' operand
//! layouts, fixed operand dtypes and fixed results are checked before
//! (`mod.rs`); the rules read operands by role.

use super::{Checker, VerifyError};
use crate::program::table::Results;
use crate::program::{CheckKind, Op, OpId, ParamKind, Roles, ThreadOpKind, WARP_SIZE};
use tile_ir::{DType, TensorType};

impl Checker<'_> {
    /// Whether `op`, whose operands (`x`, by role) fit its row, follows
    /// its kind's rule; an error for a rule with its own message.
    pub(super) fn typing(
        &self,
        id: OpId,
        op: &Op,
        x: &Roles<'_, DType>,
        results: &[DType],
    ) -> Result<bool, VerifyError> {
        let bad = |s: &Self, rule: &str| Err(s.fail(Some(id), rule.to_string()));
        let all = |list: &[DType], d: DType| list.iter().all(|&x| x == d);
        let one = |name: &str| x.get(name).copied();
        Ok(match &op.kind {
            ThreadOpKind::BlockId { axis } | ThreadOpKind::GridDim { axis } => *axis < 3,
            ThreadOpKind::Const(v) => results == [v.dtype()],
            ThreadOpKind::Param { index } => match self.param(*index) {
                Some(ParamKind::Scalar(d)) => results == [*d],
                _ => return bad(self, "`param` of a parameter that is not a scalar"),
            },
            ThreadOpKind::TensorDim { param, axis }
            | ThreadOpKind::TensorStride { param, axis } => *axis < self.tensor(id, *param)?.rank,
            ThreadOpKind::TensorAlign { param } => {
                self.tensor(id, *param)?;
                true
            }
            ThreadOpKind::GetTensor { param, array } => {
                let element = matches!(self.param(*param),
                    Some(ParamKind::Element { array: a, .. }) if a == array);
                if !element || !matches!(self.param(*array), Some(ParamKind::Tensors(_))) {
                    return bad(
                        self,
                        "`get_tensor` binds a tensor of the tensor array it names",
                    );
                }
                if self.ever_bound[*param] {
                    return bad(self, "a tensor of an array is bound by one `get_tensor`");
                }
                true
            }
            ThreadOpKind::NumTensors { array } => {
                matches!(self.param(*array), Some(ParamKind::Tensors(_)))
            }
            ThreadOpKind::Unary(_) => one("x").is_some_and(|d| results == [d]),
            ThreadOpKind::Binary(_) => {
                one("a") == one("b") && one("a").is_some_and(|a| results == [a])
            }
            ThreadOpKind::Cmp(_) => one("a") == one("b"),
            ThreadOpKind::Fma => {
                let a = one("a");
                a == one("b") && a == one("c") && a.is_some_and(|a| results == [a])
            }
            ThreadOpKind::Select => {
                one("a") == one("b") && one("a").is_some_and(|a| results == [a])
            }
            ThreadOpKind::Cast { to } => results == [*to],
            ThreadOpKind::Bitcast { to } => {
                results == [*to] && one("x").is_some_and(|d| d.bits() == to.bits())
            }
            ThreadOpKind::Opaque => {
                matches!(one("x"), Some(DType::I32 | DType::I64)) && results == x.list("x")
            }
            ThreadOpKind::LoadGlobal { param, width } => {
                let t = self.tensor(id, *param)?;
                all(x.list("others"), t.dtype) && results == vec![t.dtype; usize::from(*width)]
            }
            ThreadOpKind::StoreGlobal { param, .. } => {
                all(x.list("values"), self.tensor(id, *param)?.dtype)
            }
            ThreadOpKind::AddGlobal { param, .. } => {
                let t = self.tensor(id, *param)?;
                tile_ir::AtomicOp::Add.supports(t.dtype) && all(x.list("values"), t.dtype)
            }
            ThreadOpKind::AtomicGlobal {
                param, op: update, ..
            } => {
                let t = self.tensor(id, *param)?;
                let values = if *update == tile_ir::AtomicOp::Cas {
                    2
                } else {
                    1
                };
                update.supports(t.dtype)
                    && x.list("values") == vec![t.dtype; values]
                    && results == [t.dtype]
            }
            ThreadOpKind::RoundSharedTf32 { alloc, width } => {
                match self.program.shared.get(*alloc).map(|a| a.dtype) {
                    Some(DType::F32) => usize::from(*width) <= 4 && width.is_power_of_two(),
                    Some(_) => return bad(self, "a TF32 rounding of an allocation not of f32"),
                    None => return bad(self, "an allocation outside the program"),
                }
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
                match op.kind {
                    ThreadOpKind::LoadShared { .. } => results == vec![a.dtype; w],
                    _ => all(x.list("values"), a.dtype),
                }
            }
            // An assertion's values keep their dtypes; other checks report
            // indices and steps as `i64`.
            ThreadOpKind::Check { kind, .. } => {
                *kind == CheckKind::Assert || all(x.list("values"), DType::I64)
            }
            ThreadOpKind::Fence { order, .. } => *order != tile_ir::MemOrder::Relaxed,
            ThreadOpKind::Shuffle { width, .. } => {
                let w = u32::from(*width);
                let span = crate::program::shuffle_span(w);
                w.is_power_of_two()
                    && w <= crate::program::WAVE64
                    && (self.program.num_warps * WARP_SIZE).is_multiple_of(span)
                    && results == x.list("value")
            }
            ThreadOpKind::CopyAsync { param, alloc } => {
                let Some(a) = self.program.shared.get(*alloc) else {
                    return bad(self, "an allocation outside the program");
                };
                let tensor = self.tensor(id, *param)?;
                tensor.dtype == a.dtype && 16 % a.dtype.size_bytes().max(1) == 0
            }
            ThreadOpKind::MbarrierInit { alloc }
            | ThreadOpKind::MbarrierExpectTx { alloc }
            | ThreadOpKind::MbarrierWait { alloc } => {
                if self.program.shared.get(*alloc).map(|a| a.dtype) != Some(DType::U64) {
                    return bad(self, "an mbarrier outside an allocation of `u64`s");
                }
                true
            }
            ThreadOpKind::TmaLoad {
                param,
                rows,
                alloc,
                bar,
            } => {
                if !matches!(self.param(*param), Some(ParamKind::Tensor(_))) {
                    return bad(
                        self,
                        "`tma.load` reads a tensor parameter (its map is an argument)",
                    );
                }
                let Some(a) = self.program.shared.get(*alloc) else {
                    return bad(self, "an allocation outside the program");
                };
                let tensor = self.tensor(id, *param)?;
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
                true
            }
            ThreadOpKind::TmemAlloc { .. }
            | ThreadOpKind::TmemDealloc { .. }
            | ThreadOpKind::Tcgen05Mma { .. }
            | ThreadOpKind::Tcgen05MmaScaled { .. }
            | ThreadOpKind::Tcgen05MmaTensorA { .. }
            | ThreadOpKind::Tcgen05CommitWait { .. }
            | ThreadOpKind::TmemLoad { .. }
            | ThreadOpKind::TmemStore
            | ThreadOpKind::TmemStoreHalves
            | ThreadOpKind::TmemStoreBytes => self.tcgen05_op(id, &op.kind, x, results)?,
            ThreadOpKind::WgmmaWait { .. } => results == x.list("accumulators"),
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
                self.warpgroups(id)?;
                x.list("accumulators").len() == kind.accumulators()
                    && results == vec![DType::F32; kind.accumulators()]
            }
            ThreadOpKind::WgmmaRegisterA { kind, b } => {
                if self.program.shared.get(*b).map(|s| s.dtype) != Some(kind.dtype) {
                    return bad(self, "`wgmma` operands in allocations of another dtype");
                }
                if kind.k_major_only() {
                    return bad(
                        self,
                        "a `wgmma` of 8-bit or tf32 operands with A in registers",
                    );
                }
                self.warpgroups(id)?;
                all(x.list("a"), kind.dtype)
                    && x.list("accumulators").len() == kind.accumulators()
                    && results == vec![DType::F32; kind.accumulators()]
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
                results == vec![a.dtype; per_register * usize::from(shape.count)]
            }
            ThreadOpKind::Mma { kind } => {
                use tile_hw::mma::Fragment;
                let (na, nb) = (kind.elements(Fragment::A), kind.elements(Fragment::B));
                let nc = kind.elements(Fragment::C);
                if !(self.program.block_threads() as usize).is_multiple_of(kind.lanes()) {
                    return bad(
                        self,
                        "an `mma` whose lanes do not divide the block's threads",
                    );
                }
                // A block-scaled instruction's A and B scales follow C.
                let scales = if kind.is_block_scaled() { 2 } else { 0 };
                let fragments = x.list("fragments");
                fragments.len() == na + nb + nc + scales
                    && all(&fragments[..na + nb], kind.operand_dtype())
                    && all(&fragments[na + nb..na + nb + nc], DType::F32)
                    && all(&fragments[na + nb + nc..], DType::F8E8M0)
                    && results == vec![DType::F32; nc]
            }
            // A row whose results follow a rule needs an arm above; the
            // others' rows say all there is to check.
            _ => op.kind.results() != Results::Rule,
        })
    }

    /// The kind of parameter `index`, if there is one.
    fn param(&self, index: usize) -> Option<&ParamKind> {
        self.program.params.get(index).map(|p| &p.kind)
    }

    /// The tensor `param` (a tensor parameter, or a tensor of an array
    /// that a `get_tensor` in scope bound), or an error naming it.
    fn tensor(&self, id: OpId, param: usize) -> Result<TensorType, VerifyError> {
        match self.param(param) {
            Some(ParamKind::Tensor(t)) => Ok(*t),
            Some(ParamKind::Element { ty, .. }) if self.bound[param] => Ok(*ty),
            Some(ParamKind::Element { .. }) => Err(self.fail(
                Some(id),
                format!("tensor {param} of an array is used where no `get_tensor` bound it"),
            )),
            _ => Err(self.fail(Some(id), format!("parameter {param} is not a tensor"))),
        }
    }

    /// An error unless the block is whole warpgroups.
    fn warpgroups(&self, id: OpId) -> Result<(), VerifyError> {
        if (self.program.block_threads() as usize).is_multiple_of(tile_hw::wgmma::WARPGROUP) {
            Ok(())
        } else {
            Err(self.fail(
                Some(id),
                "a `wgmma` in a block that is not whole warpgroups",
            ))
        }
    }
}

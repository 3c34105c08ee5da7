//! Tensor arrays: `num_tensors`, and `get_tensor`, which checks its index
//! and binds a fresh parameter of kind [`ParamKind::Element`] to the
//! array's tensor there. What is computed from that tensor's extents and
//! strides is hoisted no further up than its `get_tensor`. A `get_tensor`
//! of the kernel's body needs nothing more: hoisted ops go before the
//! body op that first needs them, which comes after it. One inside a loop
//! or an `if` gets a prologue of its own, placed right after it once the
//! body is lowered, for the ops computed from its tensor (their other
//! operands, hoisted before the enclosing body op, are there already).

use super::{LowerError, Lowered, Lowerer};
use crate::program::{CheckKind, OpId as ThreadOp, Param, ParamKind, Reg, Region, ThreadOpKind};
use tile_ir::{BinaryOp, CmpPred, DType, OpId, OpKind, Scalar};

impl Lowerer<'_> {
    /// Lowers `get_tensor` or `num_tensors`.
    pub(super) fn tensor_array_op(&mut self, id: OpId) -> Result<(), LowerError> {
        let op = self.func.op(id);
        let array = match op.operands.first().map(|&v| self.get(id, v)).transpose()? {
            Some(Lowered::Tensors { param }) => param,
            _ => return Err(self.invalid(id, "the operand is not a tensor array")),
        };
        let count = self.hoist(ThreadOpKind::NumTensors { array }, vec![], DType::I32);
        if op.kind == OpKind::NumTensors {
            return self.bind(id, Lowered::Scalar(count));
        }
        let ParamKind::Tensors(ty) = self.program.params[array].kind else {
            return Err(self.invalid(id, "the operand is not a tensor array"));
        };
        let index = match op.operands.get(1) {
            Some(&v) => self.scalar(id, v)?,
            None => return Err(self.invalid(id, "no tensor index")),
        };
        // The check compares in i64, so that no index wraps into range.
        let (index, count) = (self.cast(index, DType::I64), self.cast(count, DType::I64));
        let zero = self.constant(Scalar::I64(0));
        let low = self.emit(
            ThreadOpKind::Cmp(CmpPred::Ge),
            vec![index, zero],
            DType::Bool,
        );
        let high = self.emit(
            ThreadOpKind::Cmp(CmpPred::Lt),
            vec![index, count],
            DType::Bool,
        );
        let ok = self.binary(BinaryOp::And, low, high);
        let site = self.check_site(id);
        self.emit_op(
            ThreadOpKind::Check {
                kind: CheckKind::TensorIndex,
                op: site,
            },
            vec![ok, index, count],
            &[],
        );
        let param = self.program.params.len();
        let name = self.element_name(array);
        self.program.params.push(Param {
            name,
            kind: ParamKind::Element { ty, array },
        });
        if self.read_only.contains(&array) {
            self.read_only.insert(param);
        }
        if !self.yield_targets.is_empty() {
            self.element_prologues.insert(param, Vec::new());
        }
        let index = self.cast(index, DType::I32);
        self.emit_op(ThreadOpKind::GetTensor { param, array }, vec![index], &[]);
        self.bind(id, Lowered::Tensor { param })
    }

    /// A name for the next tensor of `array` that no parameter has:
    /// `<array>_<n>`.
    fn element_name(&self, array: usize) -> String {
        let base = &self.program.params[array].name;
        (0..)
            .map(|n| format!("{base}_{n}"))
            .find(|name| self.program.params.iter().all(|p| p.name != *name))
            .unwrap_or_default()
    }

    /// Where a hoisted op of `kind` on `operands` goes: `Some(p)`, just
    /// after the `get_tensor` of tensor `p` inside a loop or an `if`, when
    /// it reads that tensor or a register computed from it (the latest
    /// bound, whose `get_tensor` every other one it reads dominates);
    /// `None`, the kernel's prologue.
    pub(super) fn element_home(&self, kind: &ThreadOpKind, operands: &[Reg]) -> Option<usize> {
        let read = match kind {
            ThreadOpKind::TensorDim { param, .. }
            | ThreadOpKind::TensorStride { param, .. }
            | ThreadOpKind::TensorAlign { param } => Some(*param),
            _ => None,
        };
        let read = read.filter(|p| self.element_prologues.contains_key(p));
        let from = operands
            .iter()
            .filter_map(|r| self.element_homes.get(r).copied());
        read.into_iter().chain(from).max()
    }

    /// Places each tensor's hoisted ops right after its `get_tensor`.
    pub(super) fn place_element_prologues(&mut self) {
        if self.element_prologues.is_empty() {
            return;
        }
        let mut body = std::mem::take(&mut self.program.body);
        self.place_in(&mut body);
        self.program.body = body;
    }

    fn place_in(&mut self, region: &mut Region) {
        let mut ops: Vec<ThreadOp> = Vec::with_capacity(region.ops.len());
        for &op in &region.ops {
            ops.push(op);
            let mut regions = std::mem::take(&mut self.program.ops[op].regions);
            for nested in &mut regions {
                self.place_in(nested);
            }
            self.program.ops[op].regions = regions;
            if let ThreadOpKind::GetTensor { param, .. } = self.program.ops[op].kind {
                ops.extend(self.element_prologues.remove(&param).unwrap_or_default());
            }
        }
        region.ops = ops;
    }
}

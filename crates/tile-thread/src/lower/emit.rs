//! The lowering's helpers that emit scalar arithmetic and barriers into the
//! current region (constants are hoisted to the kernel's entry, one
//! register per value).

use super::Lowerer;
use crate::program::{Reg, ThreadOpKind};
use tile_ir::{DType, Scalar};

impl Lowerer<'_> {
    /// A constant (hoisted, one register per distinct value).
    pub(super) fn constant(&mut self, value: Scalar) -> Reg {
        let key = (value.dtype(), value.to_bits());
        if let Some(&r) = self.consts.get(&key) {
            return r;
        }
        let r = self.hoist(ThreadOpKind::Const(value), vec![], value.dtype());
        self.consts.insert(key, r);
        r
    }

    /// An `i32` constant.
    pub(super) fn i32c(&mut self, v: i64) -> Reg {
        self.constant(Scalar::I32(v as i32))
    }

    /// `a <op> b` in the current region, of `a`'s dtype.
    pub(super) fn binary(&mut self, op: tile_ir::BinaryOp, a: Reg, b: Reg) -> Reg {
        let d = self.program.dtype(a);
        self.emit(ThreadOpKind::Binary(op), vec![a, b], d)
    }

    /// `x <op> k` for an `i32` constant `k`, where it is (not hoisted).
    pub(super) fn with_const(&mut self, op: tile_ir::BinaryOp, x: Reg, k: i64) -> Reg {
        let k = self.i32c(k);
        self.binary(op, x, k)
    }

    /// `x` as `to` (itself where it is of `to` already).
    pub(super) fn cast(&mut self, x: Reg, to: DType) -> Reg {
        if self.program.dtype(x) == to {
            return x;
        }
        self.emit(ThreadOpKind::Cast { to }, vec![x], to)
    }

    /// `c ? a : b`.
    pub(super) fn select(&mut self, c: Reg, a: Reg, b: Reg) -> Reg {
        let d = self.program.dtype(a);
        self.emit(ThreadOpKind::Select, vec![c, a, b], d)
    }

    /// Emits a barrier.
    pub(super) fn barrier(&mut self) {
        self.emit_op(ThreadOpKind::Barrier, vec![], &[]);
    }
}

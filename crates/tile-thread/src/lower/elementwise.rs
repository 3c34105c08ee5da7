//! Elementwise ops: one thread-level op per register, in every thread.
//!
//! A scalar of the tile IR is one register (uniform across the block); a tile
//! is one register per element the thread holds. The operands are first
//! brought to the first operand's layout (a conversion only where a slice
//! layout meets a blocked one), so that register `v` of every operand holds
//! the same element, and the op applies register by register with the tile IR's own
//! scalar semantics (`tile_ir::eval`), so the results are bit-identical;
//! registers with the same operands (copies of one element) share one op.
//! Dead registers compute on whatever they hold (total semantics: no trap).

use super::{LowerError, Lowered, Lowerer};
use crate::program::{Reg, ThreadOpKind};
use std::collections::HashMap;
use tile_ir::{OpId, OpKind};

impl Lowerer<'_> {
    /// Lowers `constant`, `full`, `iota` and the elementwise ops.
    pub(super) fn elementwise(&mut self, id: OpId) -> Result<(), LowerError> {
        let func = self.func;
        let op = func.op(id);
        let result = *op
            .results
            .first()
            .ok_or_else(|| self.invalid(id, "no result"))?;
        let dtype = func.ty(result).dtype();
        let lowered = match &op.kind {
            OpKind::Constant { value } => Lowered::Scalar(self.constant(*value)),
            OpKind::Full { value, .. } => {
                let layout = self.layout_of(id, result)?;
                let r = self.constant(*value);
                Lowered::Tile {
                    regs: vec![r; layout.registers()],
                    layout,
                }
            }
            OpKind::Iota { .. } => {
                let layout = self.layout_of(id, result)?;
                let coords = self.coords(&layout);
                let regs = coords.linear.iter().map(|&l| self.cast(l, dtype)).collect();
                Lowered::Tile { layout, regs }
            }
            kind => {
                let thread_kind = match kind {
                    OpKind::Unary(u) => ThreadOpKind::Unary(*u),
                    OpKind::Binary(b) => ThreadOpKind::Binary(*b),
                    OpKind::Cmp(p) => ThreadOpKind::Cmp(*p),
                    OpKind::Select => ThreadOpKind::Select,
                    OpKind::Fma => ThreadOpKind::Fma,
                    OpKind::Cast { to } => ThreadOpKind::Cast { to: *to },
                    OpKind::Bitcast { to } => ThreadOpKind::Bitcast { to: *to },
                    _ => return Err(self.invalid(id, "not an elementwise op")),
                };
                let mut operands = Vec::new();
                for &v in &op.operands {
                    operands.push(self.get(id, v)?);
                }
                match operands.as_slice() {
                    [] => return Err(self.invalid(id, "no operands")),
                    [Lowered::Scalar(_), ..] => {
                        let regs = operands
                            .iter()
                            .map(|o| match o {
                                Lowered::Scalar(r) => Ok(*r),
                                _ => Err(self.invalid(id, "scalar and tile operands mixed")),
                            })
                            .collect::<Result<Vec<_>, _>>()?;
                        Lowered::Scalar(self.emit(thread_kind, regs, dtype))
                    }
                    [Lowered::Tile { layout, .. }, ..] => {
                        let layout = layout.clone();
                        let mut columns = Vec::new();
                        for (o, &v) in operands.iter().zip(&op.operands) {
                            match o {
                                Lowered::Tile { layout: l, regs } if l.shape == layout.shape => {
                                    columns.push(self.tile_in((id, v), (l, regs), &layout)?);
                                }
                                _ => return Err(self.invalid(id, "operands of different shapes")),
                            }
                        }
                        // Registers that hold copies of one element (a
                        // reduction's row in its slice layout) have the same
                        // operands: computed once.
                        let mut computed: HashMap<Vec<Reg>, Reg> = HashMap::new();
                        let regs = (0..layout.registers())
                            .map(|v| {
                                let args: Vec<Reg> = columns.iter().map(|c| c[v]).collect();
                                if let Some(&r) = computed.get(&args) {
                                    return r;
                                }
                                let r = self.emit(thread_kind.clone(), args.clone(), dtype);
                                computed.insert(args, r);
                                r
                            })
                            .collect();
                        Lowered::Tile { layout, regs }
                    }
                    _ => return Err(self.invalid(id, "operands are not scalars or tiles")),
                }
            }
        };
        self.bind(id, lowered)
    }
}

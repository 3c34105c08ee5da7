//! Global memory: `dim`, `partition_view`, loads and stores.
//!
//! A partition view is the pair (tensor parameter, tile shape); it emits no
//! code. A load or store of the partition at index `(i_0, …)` computes, for
//! each register `v` with tile coordinate `c_v`,
//!
//! ```text
//! g_d     = i_d * tile[d] + c_v[d]                 (i64)
//! address = Σ_d g_d * stride[d]                    (elements from element zero)
//! inside  = ∧_d 0 ≤ i_d ∧ g_d < dim[d]
//! mask    = live_v ∧ inside                        (masked or checked)
//! ```
//!
//! and issues one `ld.global`/`st.global` of width 1 per register: the
//! strides are runtime values, so the contiguity that a wider vector needs
//! is not proven (see `docs/lowering.md`). Masked-off elements of a load take
//! the padding value; dead registers are always masked off.
//!
//! An unmasked access cannot be proven in bounds here (the tensor's extents
//! are runtime values), so in safe mode it gets a `bounds_check` of
//! `∧_v (live_v ⇒ inside_v)` before the access, whose mask also includes
//! `inside`: a failing check raises the error and touches no memory. With
//! `Options::bounds_checks` off (the `unsafe` mode) an unmasked access is
//! trusted and only masked by `live`.

use super::{LowerError, Lowered, Lowerer};
use crate::layout_assign::DistLayout;
use crate::thread::{Reg, ThreadOpKind};
use tile_ir::eval::{canonical_nan, round_f64};
use tile_ir::{BinaryOp, CmpPred, DType, OpId, OpKind, Padding, Scalar, Value};

/// The per-register addresses and masks of one access.
struct Access {
    param: usize,
    addresses: Vec<Reg>,
    masks: Vec<Reg>,
}

impl Lowerer<'_> {
    /// A tensor's extent (`i64`) or stride along an axis, hoisted.
    fn tensor_meta(&mut self, param: usize, axis: usize, stride: bool) -> Reg {
        if let Some(&r) = self.meta.get(&(param, axis, stride)) {
            return r;
        }
        let r = if stride {
            self.hoist(
                ThreadOpKind::TensorStride { param, axis },
                vec![],
                DType::I64,
            )
        } else {
            let d = self.hoist(ThreadOpKind::TensorDim { param, axis }, vec![], DType::I32);
            self.hoisted_cast(d, DType::I64)
        };
        self.meta.insert((param, axis, stride), r);
        r
    }

    /// Lowers `dim`, `partition_view`, loads and stores.
    pub(super) fn memory(&mut self, id: OpId) -> Result<(), LowerError> {
        let func = self.func;
        let op = func.op(id);
        match &op.kind {
            OpKind::Dim { axis } => {
                let param = self.tensor_param(id, op.operands.first().copied())?;
                let r = self.hoist(
                    ThreadOpKind::TensorDim { param, axis: *axis },
                    vec![],
                    DType::I32,
                );
                self.bind(id, Lowered::Scalar(r))
            }
            OpKind::PartitionView { shape } => {
                let param = self.tensor_param(id, op.operands.first().copied())?;
                self.bind(
                    id,
                    Lowered::View {
                        param,
                        tile: shape.clone(),
                    },
                )
            }
            OpKind::Load | OpKind::LoadMasked { .. } => {
                let result = *op
                    .results
                    .first()
                    .ok_or_else(|| self.invalid(id, "no result"))?;
                let dtype = func.ty(result).dtype();
                let layout = self.layout_of(id, result)?;
                let masked = matches!(op.kind, OpKind::LoadMasked { .. });
                let access = self.access(id, &op.operands, &layout, masked)?;
                let other = match &op.kind {
                    OpKind::LoadMasked { padding } => {
                        padding_value(*padding, dtype).ok_or_else(|| {
                            self.invalid(id, format!("padding {padding:?} for {dtype}"))
                        })?
                    }
                    _ => Scalar::zero(dtype),
                };
                let other = self.constant(other);
                let regs = access
                    .addresses
                    .iter()
                    .zip(&access.masks)
                    .map(|(&a, &m)| {
                        let kind = ThreadOpKind::LoadGlobal {
                            param: access.param,
                            width: 1,
                        };
                        self.emit(kind, vec![a, m, other], dtype)
                    })
                    .collect();
                self.bind(id, Lowered::Tile { layout, regs })
            }
            OpKind::Store | OpKind::StoreMasked => {
                let (value, rest) = op
                    .operands
                    .split_first()
                    .ok_or_else(|| self.invalid(id, "no operands"))?;
                let (layout, regs) = self.tile(id, *value)?;
                let access =
                    self.access(id, rest, &layout, matches!(op.kind, OpKind::StoreMasked))?;
                for ((&a, &m), &r) in access.addresses.iter().zip(&access.masks).zip(&regs) {
                    let kind = ThreadOpKind::StoreGlobal {
                        param: access.param,
                        width: 1,
                    };
                    self.emit_op(kind, vec![a, r, m], &[]);
                }
                Ok(())
            }
            _ => Err(self.invalid(id, "not a memory op")),
        }
    }

    fn tensor_param(&mut self, id: OpId, v: Option<Value>) -> Result<usize, LowerError> {
        let v = v.ok_or_else(|| self.invalid(id, "no tensor operand"))?;
        match self.get(id, v)? {
            Lowered::Tensor { param } => Ok(param),
            _ => Err(self.invalid(id, "the operand is not a tensor parameter")),
        }
    }

    /// Addresses and masks of an access through `operands` = view, indices.
    /// A masked access masks elements outside the tensor; an unmasked one is
    /// checked (see [`ThreadOpKind::BoundsCheck`]) unless checks are off.
    fn access(
        &mut self,
        id: OpId,
        operands: &[Value],
        layout: &DistLayout,
        masked: bool,
    ) -> Result<Access, LowerError> {
        let (view, indices) = operands
            .split_first()
            .ok_or_else(|| self.invalid(id, "no view operand"))?;
        let Lowered::View { param, tile } = self.get(id, *view)? else {
            return Err(self.invalid(id, "the operand is not a partition view"));
        };
        if indices.len() != tile.rank() || tile.dims() != layout.shape.as_slice() {
            return Err(self.invalid(id, "indices or tile do not match the view"));
        }
        let bounded = masked || self.bounds_checks;
        let coords = self.coords(layout);
        let zero = self.constant(Scalar::I64(0));
        let truth = self.constant(Scalar::Bool(true));
        let mut index_regs = Vec::new();
        let mut origins = Vec::new();
        let mut index_ok = truth;
        for (d, &i) in indices.iter().enumerate() {
            let i = self.scalar(id, i)?;
            let i = self.cast(i, DType::I64);
            index_regs.push(i);
            if bounded {
                let ok = self.emit(ThreadOpKind::Cmp(CmpPred::Ge), vec![i, zero], DType::Bool);
                index_ok = self.and(index_ok, ok);
            }
            let extent = self.constant(Scalar::I64(tile.dims()[d] as i64));
            origins.push(self.binary(BinaryOp::Mul, i, extent));
        }
        let mut addresses = Vec::new();
        let mut masks = Vec::new();
        let mut all_ok = truth;
        for v in 0..layout.registers() {
            let mut address: Option<Reg> = None;
            let mut inside = index_ok;
            for (d, &origin) in origins.iter().enumerate() {
                let c = self.hoisted_cast(coords.axes[v][d], DType::I64);
                let g = self.binary(BinaryOp::Add, origin, c);
                if bounded {
                    let extent = self.tensor_meta(param, d, false);
                    let lt =
                        self.emit(ThreadOpKind::Cmp(CmpPred::Lt), vec![g, extent], DType::Bool);
                    inside = self.and(inside, lt);
                }
                let stride = self.tensor_meta(param, d, true);
                let term = self.binary(BinaryOp::Mul, g, stride);
                address = Some(match address {
                    Some(a) => self.binary(BinaryOp::Add, a, term),
                    None => term,
                });
            }
            let live = coords.live[v];
            if bounded && !masked {
                // A dead register never fails the check.
                let ok = if self.is_true(live) {
                    inside
                } else {
                    self.select(live, inside, truth)
                };
                all_ok = self.and(all_ok, ok);
            }
            addresses.push(address.unwrap_or(zero));
            masks.push(self.and(live, inside));
        }
        if bounded && !masked {
            let mut check_operands = vec![all_ok];
            check_operands.extend(index_regs);
            let op = self.describe(id);
            self.emit_op(ThreadOpKind::BoundsCheck { op }, check_operands, &[]);
        }
        Ok(Access {
            param,
            addresses,
            masks,
        })
    }

    /// `a ∧ b`, folding the constant `true`.
    fn and(&mut self, a: Reg, b: Reg) -> Reg {
        if self.is_true(a) {
            b
        } else if self.is_true(b) {
            a
        } else {
            self.binary(BinaryOp::And, a, b)
        }
    }
}

/// The value of a masked-off element (the interpreter's rule).
fn padding_value(padding: Padding, dtype: DType) -> Option<Scalar> {
    let infinity = |negative: bool| match dtype {
        DType::F8E5M2 => Some(Scalar::from_bits(
            DType::F8E5M2,
            if negative { 0xfc } else { 0x7c },
        )),
        DType::F16 | DType::BF16 | DType::F32 | DType::F64 => round_f64(
            if negative {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            },
            dtype,
        ),
        _ => None,
    };
    match padding {
        Padding::Zero => Some(Scalar::zero(dtype)),
        Padding::Nan => canonical_nan(dtype),
        Padding::PosInf => infinity(false),
        Padding::NegInf => infinity(true),
        Padding::Value(v) => Some(v).filter(|v| v.dtype() == dtype),
    }
}

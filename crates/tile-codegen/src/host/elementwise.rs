//! `full`, `iota` and the elementwise ops (unary, binary, `cmp`, `select`,
//! `fma`, `cast`): on scalars one call of the scalar emitter, on tiles one
//! loop over the elements that calls it per element; an op with lazy
//! operands computes them in that loop (`lazy.rs`).

use super::error::HostError;
use super::kernel::{HostKernel, HostValue};
use crate::scalar::Nans;
use crate::EmitError;
use inkwell::values::BasicValueEnum;
use tile_ir::{DType, OpId, OpKind, Type};

impl<'a, 'ctx> HostKernel<'a, 'ctx> {
    /// Emits `full`, `iota` or an elementwise op.
    pub(super) fn elementwise(&mut self, id: OpId) -> Result<(), HostError> {
        let kind = &self.func.op(id).kind;
        let result = self.result(id)?;
        match kind {
            OpKind::Full { value, .. } => {
                let tile = self.place_of(result)?;
                self.fill(&tile, *value)?;
                self.define(result, HostValue::Tile(tile));
                return Ok(());
            }
            OpKind::Iota { dtype, .. } => {
                let tile = self.place_of(result)?;
                let n = self.i64(tile.numel() as i64);
                self.counted(n, &mut |l, i| {
                    let v = l.e.cast(i.into(), DType::U64, *dtype, Nans::Canonical)?;
                    l.set(&tile, i, v)
                })?;
                self.define(result, HostValue::Tile(tile));
                return Ok(());
            }
            _ => {}
        }
        let operands = self.operands(id);
        let dtypes: Vec<DType> = operands.iter().map(|&v| self.func.ty(v).dtype()).collect();
        if let Type::Scalar(_) = self.func.ty(result) {
            let args = operands
                .iter()
                .map(|&v| self.scalar(v))
                .collect::<Result<Vec<_>, _>>()?;
            let v = self.apply(kind, &dtypes, &args, self.nans)?;
            self.define(result, HostValue::Scalar(v));
            return Ok(());
        }
        if self.has_lazy_operand(id)? {
            return self.evaluate_op(id);
        }
        let inputs = operands
            .iter()
            .map(|&v| self.tile(v))
            .collect::<Result<Vec<_>, _>>()?;
        let out = self.place_of(result)?;
        let n = self.i64(out.numel() as i64);
        self.counted(n, &mut |l, i| {
            let args = inputs
                .iter()
                .map(|t| l.get(t, i))
                .collect::<Result<Vec<_>, _>>()?;
            let v = l.apply(kind, &dtypes, &args, l.nans)?;
            l.set(&out, i, v)
        })?;
        self.define(result, HostValue::Tile(out));
        Ok(())
    }

    /// The scalar emitter's code for `kind` on `args` of `dtypes`, its NaNs
    /// as `nans` says.
    pub(super) fn apply(
        &self,
        kind: &OpKind,
        dtypes: &[DType],
        args: &[BasicValueEnum<'ctx>],
        nans: Nans,
    ) -> Result<BasicValueEnum<'ctx>, HostError> {
        let e = &self.e;
        let r = match (kind, args, dtypes.first()) {
            (OpKind::Unary(u), [x], Some(&d)) => e.unary(*u, d, *x, nans),
            (OpKind::Binary(o), [x, y], Some(&d)) => e.binary(*o, d, *x, *y, nans),
            (OpKind::Cmp(p), [x, y], Some(&d)) => e.compare(*p, d, *x, *y),
            (OpKind::Select, [c, x, y], _) => e.select(*c, *x, *y),
            (OpKind::Fma, [x, y, z], Some(&d)) => e.fma(d, *x, *y, *z, nans),
            (OpKind::Cast { to }, [x], Some(&d)) => e.cast(*x, d, *to, nans),
            (OpKind::Bitcast { to }, [x], Some(&d)) => e.bitcast(*x, d, *to),
            _ => {
                return Err(HostError::internal(format!(
                    "`{}` with {} operand(s)",
                    kind.name(),
                    args.len()
                )))
            }
        };
        r.map_err(|err| match err {
            EmitError::Unsupported { what } => HostError::Unsupported { what },
            other => HostError::Emit(other),
        })
    }
}

//! `full`, `iota` and the elementwise ops (unary, binary, `cmp`, `select`,
//! `fma`, `cast`): on scalars one call of the scalar emitter, on tiles one
//! loop over the elements that calls it per element, reading the operands
//! that are deferred loads (`fuse.rs`) from their tensors in the same loop.

use super::error::HostError;
use super::frame::TileRef;
use super::lower::{HostValue, Lowering};
use super::memory::DeferredLoad;
use crate::emit::EmitError;
use inkwell::values::BasicValueEnum;
use tile_ir::{DType, OpId, OpKind, Type};

impl<'a, 'ctx> Lowering<'a, 'ctx> {
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
                    let v = l.e.cast(i.into(), DType::U64, *dtype)?;
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
            let v = self.apply(kind, &dtypes, &args)?;
            self.define(result, HostValue::Scalar(v));
            return Ok(());
        }
        let inputs = operands
            .iter()
            .map(|&v| self.value(v))
            .collect::<Result<Vec<_>, _>>()?;
        let out = self.place_of(result)?;
        let loads: Vec<&DeferredLoad<'ctx>> = inputs
            .iter()
            .filter_map(|v| match v {
                HostValue::Loaded(load) => Some(load),
                _ => None,
            })
            .collect();
        let mut whole = None;
        for w in loads.iter().filter_map(|load| load.whole()) {
            whole = Some(match whole {
                None => w,
                Some(all) => self.e.b.build_and(all, w, "whole")?,
            });
        }
        match (loads.is_empty(), whole) {
            (true, _) => self.map_frame(kind, &dtypes, &inputs, &out)?,
            (false, None) => self.map_fused(kind, &dtypes, &inputs, &out)?,
            // A partial partition is copied with its padding after all.
            (false, Some(whole)) => self.either(
                whole,
                &mut |l| l.map_fused(kind, &dtypes, &inputs, &out),
                &mut |l| {
                    for load in &loads {
                        l.materialize(load)?;
                    }
                    l.map_frame(kind, &dtypes, &inputs, &out)
                },
            )?,
        }
        self.define(result, HostValue::Tile(out));
        Ok(())
    }

    /// `out = kind(inputs)` element by element, every input in the frame (a
    /// deferred load at its place there, copied already).
    fn map_frame(
        &mut self,
        kind: &OpKind,
        dtypes: &[DType],
        inputs: &[HostValue<'ctx>],
        out: &TileRef,
    ) -> Result<(), HostError> {
        let tiles = inputs
            .iter()
            .map(|v| match v {
                HostValue::Tile(t) => Ok(t.clone()),
                HostValue::Loaded(load) => Ok(load.place.clone()),
                _ => Err(HostError::internal(
                    "an elementwise operand that is not a tile",
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let n = self.i64(out.numel() as i64);
        self.counted(n, &mut |l, i| {
            let args = tiles
                .iter()
                .map(|t| l.get(t, i))
                .collect::<Result<Vec<_>, _>>()?;
            let v = l.apply(kind, dtypes, &args)?;
            l.set(out, i, v)
        })
    }

    /// `out = kind(inputs)` element by element, deferred loads read from
    /// their tensors (whose partitions are whole) in the same loop: twice,
    /// for contiguous tensors with their last stride known to be 1 (so LLVM
    /// vectorizes fully unrolled rows), and for any strides.
    fn map_fused(
        &mut self,
        kind: &OpKind,
        dtypes: &[DType],
        inputs: &[HostValue<'ctx>],
        out: &TileRef,
    ) -> Result<(), HostError> {
        let mut all_unit = None;
        let mut contiguous = Vec::with_capacity(inputs.len());
        for v in inputs {
            let unit = match v {
                HostValue::Loaded(load) => self.contiguous_load(load)?,
                _ => None,
            };
            match unit {
                Some((unit, load)) => {
                    all_unit = Some(match all_unit {
                        None => unit,
                        Some(all) => self.e.b.build_and(all, unit, "units")?,
                    });
                    contiguous.push(HostValue::Loaded(load));
                }
                None => contiguous.push(v.clone()),
            }
        }
        match all_unit {
            Some(all_unit) => self.either(
                all_unit,
                &mut |l| l.map_fused_loop(kind, dtypes, &contiguous, out),
                &mut |l| l.map_fused_loop(kind, dtypes, inputs, out),
            ),
            None => self.map_fused_loop(kind, dtypes, inputs, out),
        }
    }

    /// The loop of [`Self::map_fused`].
    fn map_fused_loop(
        &mut self,
        kind: &OpKind,
        dtypes: &[DType],
        inputs: &[HostValue<'ctx>],
        out: &TileRef,
    ) -> Result<(), HostError> {
        let strides = out.strides();
        self.nest_static(&out.shape, &mut |l, j| {
            let i = l.linear(j, &strides, 0)?;
            let args = inputs
                .iter()
                .map(|v| match v {
                    HostValue::Tile(t) => l.get(t, i),
                    HostValue::Loaded(load) => l.read_deferred(load, j),
                    _ => Err(HostError::internal(
                        "an elementwise operand that is not a tile",
                    )),
                })
                .collect::<Result<Vec<_>, _>>()?;
            let v = l.apply(kind, dtypes, &args)?;
            l.set(out, i, v)
        })
    }

    /// The scalar emitter's code for `kind` on `args` of `dtypes`.
    pub(super) fn apply(
        &self,
        kind: &OpKind,
        dtypes: &[DType],
        args: &[BasicValueEnum<'ctx>],
    ) -> Result<BasicValueEnum<'ctx>, HostError> {
        let e = &self.e;
        let r = match (kind, args, dtypes.first()) {
            (OpKind::Unary(u), [x], Some(&d)) => e.unary(*u, d, *x),
            (OpKind::Binary(o), [x, y], Some(&d)) => e.binary(*o, d, *x, *y),
            (OpKind::Cmp(p), [x, y], Some(&d)) => e.compare(*p, d, *x, *y),
            (OpKind::Select, [c, x, y], _) => e.select(*c, *x, *y),
            (OpKind::Fma, [x, y, z], Some(&d)) => e.fma(d, *x, *y, *z),
            (OpKind::Cast { to }, [x], Some(&d)) => e.cast(*x, d, *to),
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

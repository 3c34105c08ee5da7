//! `dot a[M, K] · b[K, N] + c[M, N]` in the interpreter's order: for each
//! `(m, n)`, `acc = c[m, n]` then `acc = fma(a[m, k], b[k, n], acc)` for `k`
//! ascending, operands widened exactly to the accumulator dtype (i8: `acc +
//! a · b` wrapping in i32). The loops run `m`, `k`, then `n` innermost over
//! the result row, which keeps every element's `k` order and lets LLVM
//! vectorize along `n`. NaNs are canonicalized once at the end, as the
//! interpreter does (an `fma` of a NaN is a NaN whatever its payload).

use super::error::HostError;
use super::lower::{HostValue, Lowering};
use tile_ir::OpId;

impl<'a, 'ctx> Lowering<'a, 'ctx> {
    /// Emits `dot`.
    pub(super) fn dot(&mut self, id: OpId) -> Result<(), HostError> {
        let operands = self.operands(id);
        let [a, b, c] = operands else {
            return Err(HostError::internal("`dot` takes three operands"));
        };
        let (a, b, c) = (self.tile(*a)?, self.tile(*b)?, self.tile(*c)?);
        let (&[m, k], &[_, n]) = (a.shape.as_slice(), b.shape.as_slice()) else {
            return Err(HostError::internal("`dot` of tiles that are not matrices"));
        };
        let acc = c.dtype;
        let out = self.place_of(self.result(id)?)?;
        self.copy(&out, &c)?;
        let bounds = [self.i64(m as i64), self.i64(k as i64), self.i64(n as i64)];
        let float = acc.is_float();
        self.nest(&bounds, &mut |l, ix| {
            let (mi, ki, ni) = (ix[0], ix[1], ix[2]);
            let x = l.get(&a, l.linear(&[mi, ki], &[k as i64, 1], 0)?)?;
            let y = l.get(&b, l.linear(&[ki, ni], &[n as i64, 1], 0)?)?;
            let at = l.linear(&[mi, ni], &[n as i64, 1], 0)?;
            let r = l.get(&out, at)?;
            let (x, y) = (l.e.cast(x, a.dtype, acc)?, l.e.cast(y, b.dtype, acc)?);
            let next = if float {
                l.e.float_intrinsic(
                    "llvm.fma",
                    &[
                        x.into_float_value(),
                        y.into_float_value(),
                        r.into_float_value(),
                    ],
                )?
                .into()
            } else {
                let bld = &l.e.b;
                let p = bld.build_int_mul(x.into_int_value(), y.into_int_value(), "p")?;
                bld.build_int_add(r.into_int_value(), p, "acc")?.into()
            };
            l.set(&out, at, next)
        })?;
        if float {
            let total = self.i64((m * n) as i64);
            self.counted(total, &mut |l, i| {
                let v = l.get(&out, i)?.into_float_value();
                let v = l.e.canonicalize(v)?;
                l.set(&out, i, v.into())
            })?;
        }
        self.define_result(id, HostValue::Tile(out))
    }
}

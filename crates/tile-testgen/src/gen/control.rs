//! `if`/`else` on scalar conditions and counted loops with carried values,
//! as a `for` or as a `while` over a carried counter (`while i < hi`, the
//! body yielding `i + step`). Both regions of an `if` build their own
//! values; a loop body combines each carried value with a new one so that
//! every iteration counts, and may index loads by the induction variable.

use super::{Built, Gen};
use std::cell::RefCell;
use tile_ir::builder::Builder;
use tile_ir::{BinaryOp, CmpPred, DType, Scalar, Type, Value};

/// The integer dtypes of loop bounds (the induction variable's dtype).
const LOOP_DTYPES: [DType; 5] = [DType::I32, DType::I32, DType::I64, DType::U32, DType::I16];

impl Gen<'_> {
    pub(super) fn if_else(
        &mut self,
        b: &mut Builder,
        ty: &Type,
        depth: usize,
    ) -> Built<Option<Value>> {
        if !self.may_nest() {
            return Ok(None);
        }
        let cond = self.value(b, &Type::Scalar(DType::Bool), depth)?;
        let this = RefCell::new(self);
        let branch = |b: &mut Builder| -> Built<Vec<Value>> {
            let mut g = this.borrow_mut();
            g.scoped(|g| Ok(vec![g.value(b, ty, depth)?]))
        };
        let results = b.if_else(cond, std::slice::from_ref(ty), branch, branch)?;
        Ok(results.first().copied())
    }

    pub(super) fn for_loop(
        &mut self,
        b: &mut Builder,
        ty: &Type,
        depth: usize,
    ) -> Built<Option<Value>> {
        if !self.may_nest() {
            return Ok(None);
        }
        let dtype = self.rng.pick(&LOOP_DTYPES);
        let lo = self.rng.range(0, 2);
        let step = self.rng.range(1, 2);
        let hi = if dtype == DType::I32 && self.rng.chance(0.3) {
            // As many iterations as programs along an axis (at most 4).
            let axis = self.rng.range(0, 2) as u8;
            b.num_programs(axis)?
        } else {
            let trips = self.rng.range(0, 3);
            self.int_constant(b, dtype, (lo + trips * step) as i128)?
        };
        let lo = self.int_constant(b, dtype, lo as i128)?;
        let step = self.int_constant(b, dtype, step as i128)?;
        let carried = self.rng.range(1, 2);
        let mut init = Vec::with_capacity(carried);
        for _ in 0..carried {
            init.push(self.value(b, ty, depth)?);
        }
        let as_while = self.whiles.chance(self.cfg.while_rate);
        let body = |g: &mut Self, b: &mut Builder, iv: Value, carried: &[Value]| {
            g.scoped(|g| {
                g.ivs.push(iv);
                g.expose(iv);
                for &c in carried {
                    g.expose(c);
                }
                let mut next = Vec::with_capacity(carried.len());
                for &c in carried {
                    let fresh = g.value(b, ty, depth)?;
                    next.push(g.combine(b, c, fresh)?);
                }
                Ok(next)
            })
        };
        let results = if as_while {
            let mut counted = vec![lo];
            counted.extend(init);
            let results = b.while_loop(
                &counted,
                |b, args| b.cmp(CmpPred::Lt, args[0], hi),
                |b, args| {
                    let mut next = vec![b.binary(BinaryOp::Add, args[0], step)?];
                    next.extend(body(self, b, args[0], &args[1..])?);
                    Ok(next)
                },
            )?;
            results[1..].to_vec()
        } else {
            b.for_loop(lo, hi, step, &init, |b, iv, carried| {
                body(self, b, iv, carried)
            })?
        };
        match results.as_slice() {
            [one] => Ok(Some(*one)),
            [first, second] => self.combine(b, *first, *second).map(Some),
            _ => Ok(None),
        }
    }

    /// A `constant` of integer dtype `dtype` and value `v`.
    pub(crate) fn int_constant(&mut self, b: &mut Builder, dtype: DType, v: i128) -> Built<Value> {
        b.constant(Scalar::wrapping_from_i128(dtype, v).unwrap_or(Scalar::I32(0)))
    }
}

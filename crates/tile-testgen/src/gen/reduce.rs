//! Reductions, arg-reductions, scans and `dot`. A reduction or scan may be
//! written with a combine function (`reduce_with`, `scan_with`) computing
//! the same op, alone or beside a second copy of its operand folded by a
//! first-minimum step, both results merged by `max`; the choice comes from
//! a stream of its own.

use super::{tile, Built, Gen};
use tile_ir::builder::Builder;
use tile_ir::{
    ArgKind, BinaryOp, CmpPred, DType, DotPrecision, ReduceKind, ScanKind, TileType, Type, Value,
};

/// The operand dtype pairs of `dot` for each accumulator dtype.
fn dot_operands(acc: DType) -> &'static [(DType, DType)] {
    use DType::*;
    match acc {
        F32 => &[
            (F16, F16),
            (BF16, BF16),
            (F32, F32),
            (F8E4M3, F8E4M3),
            (F8E4M3, F8E5M2),
            (F8E5M2, F8E4M3),
            (F8E5M2, F8E5M2),
        ],
        F64 => &[(F64, F64)],
        I32 => &[(I8, I8)],
        _ => &[],
    }
}

/// Whether reductions, arg-reductions and scans take `dtype`: not `bool`,
/// not the scale `f8e8m0`.
fn reducible(dtype: DType) -> bool {
    !dtype.is_bool() && dtype != DType::F8E8M0
}

impl Gen<'_> {
    /// The operand shape of a reduction giving `ty` and the reduced axis and
    /// `keepdim`, or `None` when none fits the limits.
    fn reduced_from(&mut self, ty: &Type) -> Option<(Vec<usize>, usize, bool)> {
        let dims = match ty {
            Type::Tile(t) => t.shape.dims().to_vec(),
            _ => Vec::new(),
        };
        let units: Vec<usize> = (0..dims.len()).filter(|&a| dims[a] == 1).collect();
        let room = self.cfg.max_tile_elements / dims.iter().product::<usize>().max(1);
        let n = self.extent(room);
        let (from, axis, keepdim) = if !units.is_empty() && self.rng.chance(0.5) {
            let axis = self.rng.pick(&units);
            let mut from = dims;
            from[axis] = n;
            (from, axis, true)
        } else if dims.len() < self.cfg.max_rank.clamp(1, 4) {
            let axis = self.rng.range(0, dims.len());
            let mut from = dims;
            from.insert(axis, n);
            (from, axis, false)
        } else {
            return None;
        };
        self.fits(&from).then_some((from, axis, keepdim))
    }

    pub(super) fn reduce(
        &mut self,
        b: &mut Builder,
        ty: &Type,
        depth: usize,
    ) -> Built<Option<Value>> {
        if !reducible(ty.dtype()) {
            return Ok(None);
        }
        let Some((from, axis, keepdim)) = self.reduced_from(ty) else {
            return Ok(None);
        };
        let kind = self.rng.pick(ReduceKind::ALL);
        let product = kind == ReduceKind::Prod && ty.dtype() == DType::F64;
        let x = self.exact_if(product, |g| g.value(b, &tile(from, ty.dtype()), depth))?;
        if self.combines.chance(self.cfg.combine_rate) {
            let op = match kind {
                ReduceKind::Sum => BinaryOp::Add,
                ReduceKind::Prod => BinaryOp::Mul,
                ReduceKind::Max => BinaryOp::Max,
                ReduceKind::Min => BinaryOp::Min,
            };
            return self.custom_fold(b, x, axis, Some(keepdim), op).map(Some);
        }
        b.reduce(kind, x, axis, keepdim).map(Some)
    }

    pub(super) fn arg_reduce(
        &mut self,
        b: &mut Builder,
        ty: &Type,
        depth: usize,
    ) -> Built<Option<Value>> {
        if ty.dtype() != DType::I32 {
            return Ok(None);
        }
        let Some((from, axis, keepdim)) = self.reduced_from(ty) else {
            return Ok(None);
        };
        let mut dtype = self.dtype();
        if !reducible(dtype) {
            dtype = DType::F32;
        }
        let kind = self.rng.pick(ArgKind::ALL);
        let x = self.value(b, &tile(from, dtype), depth)?;
        b.arg_reduce(kind, x, axis, keepdim).map(Some)
    }

    pub(super) fn scan(
        &mut self,
        b: &mut Builder,
        t: &TileType,
        depth: usize,
    ) -> Built<Option<Value>> {
        if !reducible(t.dtype) {
            return Ok(None);
        }
        let kind = self.rng.pick(ScanKind::ALL);
        let axis = self.rng.range(0, t.shape.rank() - 1);
        let product = kind == ScanKind::CumProd && t.dtype == DType::F64;
        let x = self.exact_if(product, |g| g.value(b, &Type::Tile(t.clone()), depth))?;
        if self.combines.chance(self.cfg.combine_rate) {
            let op = match kind {
                ScanKind::CumSum => BinaryOp::Add,
                ScanKind::CumProd => BinaryOp::Mul,
            };
            return self.custom_fold(b, x, axis, None, op).map(Some);
        }
        b.scan(kind, x, axis).map(Some)
    }

    /// The reduction (`keepdim` given) or scan of `x` along `axis` by a
    /// combine function applying `op`; from the combine stream, half the
    /// time beside a copy of `x` folded by "the first of the smallest"
    /// (`select(b < a, b, a)`), the two results merged by `max`.
    fn custom_fold(
        &mut self,
        b: &mut Builder,
        x: Value,
        axis: usize,
        keepdim: Option<bool>,
        op: BinaryOp,
    ) -> Built<Value> {
        let pair = self.combines.chance(0.5);
        let xs = if pair { vec![x, x] } else { vec![x] };
        let results = b.combine(&xs, axis, keepdim, |b, acc, next| {
            let mut out = vec![b.binary(op, acc[0], next[0])?];
            if pair {
                let smaller = b.cmp(CmpPred::Lt, next[1], acc[1])?;
                out.push(b.select(smaller, next[1], acc[1])?);
            }
            Ok(out)
        })?;
        match results.as_slice() {
            [one, other] => b.binary(BinaryOp::Max, *one, *other),
            _ => Ok(results[0]),
        }
    }

    pub(super) fn dot(
        &mut self,
        b: &mut Builder,
        t: &TileType,
        depth: usize,
    ) -> Built<Option<Value>> {
        if t.shape.rank() != 2 {
            return Ok(None);
        }
        // A float tile no dot accumulates in (f16, the FP8 and MX formats)
        // comes from an f32 dot, cast: dots of f32 accumulators are rare
        // enough otherwise that some operand pairs would go unexercised.
        if dot_operands(t.dtype).is_empty() && t.dtype.is_float() {
            let wide = TileType {
                dtype: DType::F32,
                ..t.clone()
            };
            let Some(product) = self.dot(b, &wide, depth)? else {
                return Ok(None);
            };
            return b.cast(product, t.dtype).map(Some);
        }
        let pairs = dot_operands(t.dtype);
        if pairs.is_empty() {
            return Ok(None);
        }
        let (m, n) = (t.shape.dims()[0], t.shape.dims()[1]);
        let k = self.extent(self.cfg.max_tile_elements / m.max(n));
        let (da, db) = self.rng.pick(pairs);
        let x = self.value(b, &tile(vec![m, k], da), depth)?;
        let y = self.value(b, &tile(vec![k, n], db), depth)?;
        let acc = self.value(b, &Type::Tile(t.clone()), depth)?;
        // `ieee`, or `tf32` for one f32 dot in five (chosen by shape, so the
        // random stream is the same as without it): every path without
        // tensor cores computes both bit for bit. A `tf32` dot whose shape
        // is whole blocks of `mma.sync.m16n8k8` (16×8×8) may run on sm_80's
        // tensor cores, which sum each step of 8 at once: those, like the
        // `tensor` dots, are compared within their bound by tests of their
        // own (`products::tf32_dot_case`), and not generated here.
        let mma_blocks = m.is_multiple_of(16) && n.is_multiple_of(8) && k.is_multiple_of(8);
        let precision =
            if (da, db) == (DType::F32, DType::F32) && (m + k + n).is_multiple_of(5) && !mma_blocks
            {
                DotPrecision::Tf32
            } else {
                DotPrecision::Ieee
            };
        b.dot_with(x, y, acc, precision).map(Some)
    }
}

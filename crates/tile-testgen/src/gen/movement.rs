//! Movement families: each works backwards from the requested tile shape to
//! an operand shape the op turns into it (a smaller shape for `broadcast`,
//! `expand` and `pad`, a larger one for `slice`, parts for `cat`, ...).

use super::{tile, Built, Gen};
use tile_ir::builder::Builder;
use tile_ir::{DType, TileType, Type, Value};

impl Gen<'_> {
    pub(super) fn broadcast(
        &mut self,
        b: &mut Builder,
        t: &TileType,
        depth: usize,
    ) -> Built<Option<Value>> {
        let dims = t.shape.dims();
        let operand = if self.rng.chance(0.3) {
            Type::Scalar(t.dtype)
        } else {
            // Drop some leading axes, and set some others to 1.
            let drop = self.rng.range(0, dims.len() - 1);
            let from: Vec<usize> = dims[drop..]
                .iter()
                .map(|&d| if self.rng.chance(0.5) { 1 } else { d })
                .collect();
            tile(from, t.dtype)
        };
        let x = self.value(b, &operand, depth)?;
        b.broadcast(x, dims).map(Some)
    }

    pub(super) fn reshape(
        &mut self,
        b: &mut Builder,
        t: &TileType,
        depth: usize,
    ) -> Built<Option<Value>> {
        let dims = t.shape.dims();
        let max_rank = self.cfg.max_rank.clamp(1, 4);
        let mut from = dims.to_vec();
        match self.rng.range(0, 3) {
            // The same extents in another order.
            0 => {
                from = self
                    .rng
                    .permutation(dims.len())
                    .iter()
                    .map(|&i| dims[i])
                    .collect()
            }
            // Flattened.
            1 => from = vec![t.shape.numel()],
            // A unit axis more, or one fewer.
            2 if from.len() < max_rank => from.insert(self.rng.range(0, from.len()), 1),
            2 => {
                if let Some(unit) = from.iter().position(|&d| d == 1).filter(|_| from.len() > 1) {
                    from.remove(unit);
                }
            }
            // An axis split into two factors.
            _ => {
                let axis = self.rng.range(0, from.len() - 1);
                let e = from[axis];
                if let Some(f) = (2..e)
                    .find(|&f| e.is_multiple_of(f))
                    .filter(|_| from.len() < max_rank)
                {
                    from[axis] = f;
                    from.insert(axis + 1, e / f);
                }
            }
        }
        let x = self.value(b, &tile(from, t.dtype), depth)?;
        b.reshape(x, dims).map(Some)
    }

    pub(super) fn permute(
        &mut self,
        b: &mut Builder,
        t: &TileType,
        depth: usize,
    ) -> Built<Option<Value>> {
        let dims = t.shape.dims();
        let perm = self.rng.permutation(dims.len());
        // Result axis i is operand axis perm[i].
        let mut from = vec![0; dims.len()];
        for (i, &p) in perm.iter().enumerate() {
            from[p] = dims[i];
        }
        let x = self.value(b, &tile(from, t.dtype), depth)?;
        b.permute(x, &perm).map(Some)
    }

    pub(super) fn expand(
        &mut self,
        b: &mut Builder,
        t: &TileType,
        depth: usize,
    ) -> Built<Option<Value>> {
        let dims = t.shape.dims();
        let from: Vec<usize> = dims
            .iter()
            .map(|&d| if self.rng.chance(0.5) { 1 } else { d })
            .collect();
        let x = self.value(b, &tile(from, t.dtype), depth)?;
        b.expand(x, dims).map(Some)
    }

    pub(super) fn flip(
        &mut self,
        b: &mut Builder,
        t: &TileType,
        depth: usize,
    ) -> Built<Option<Value>> {
        let rank = t.shape.rank();
        let axes: Vec<usize> = self
            .rng
            .permutation(rank)
            .into_iter()
            .take(self.rng.range(1, rank))
            .collect();
        let x = self.value(b, &Type::Tile(t.clone()), depth)?;
        b.flip(x, &axes).map(Some)
    }

    pub(super) fn slice(
        &mut self,
        b: &mut Builder,
        t: &TileType,
        depth: usize,
    ) -> Built<Option<Value>> {
        let dims = t.shape.dims();
        let (mut start, mut stop, mut step, mut from) = (vec![], vec![], vec![], vec![]);
        for &d in dims {
            let st = self.rng.range(1, 3);
            let lo = self.rng.range(0, 3);
            // ceil((hi - lo) / st) == d
            let hi = lo + (d - 1) * st + 1 + self.rng.range(0, st - 1);
            start.push(lo);
            stop.push(hi);
            step.push(st);
            from.push(hi + self.rng.range(0, 2));
        }
        if !self.fits(&from) {
            return Ok(None);
        }
        let x = self.value(b, &tile(from, t.dtype), depth)?;
        b.slice(x, &start, &stop, &step).map(Some)
    }

    pub(super) fn pad(
        &mut self,
        b: &mut Builder,
        t: &TileType,
        depth: usize,
    ) -> Built<Option<Value>> {
        let dims = t.shape.dims();
        let (mut low, mut high, mut from) = (vec![], vec![], vec![]);
        for &d in dims {
            let l = self.rng.range(0, (d - 1).min(2));
            let h = self.rng.range(0, (d - 1 - l).min(2));
            low.push(l);
            high.push(h);
            from.push(d - l - h);
        }
        let value = self.constant_value(t.dtype);
        let x = self.value(b, &tile(from, t.dtype), depth)?;
        b.pad(x, &low, &high, value).map(Some)
    }

    pub(super) fn cat(
        &mut self,
        b: &mut Builder,
        t: &TileType,
        depth: usize,
    ) -> Built<Option<Value>> {
        let dims = t.shape.dims();
        let axes: Vec<usize> = (0..dims.len()).filter(|&a| dims[a] >= 2).collect();
        if axes.is_empty() {
            return Ok(None);
        }
        let axis = self.rng.pick(&axes);
        let mut left = dims[axis];
        let mut parts = Vec::new();
        while left > 0 {
            // At least two parts.
            let most = if parts.is_empty() { left - 1 } else { left };
            let take = self.rng.range(1, most);
            let mut part = dims.to_vec();
            part[axis] = take;
            parts.push(self.value(b, &tile(part, t.dtype), depth)?);
            left -= take;
        }
        b.cat(&parts, axis).map(Some)
    }

    /// An `f4e2m1` tile unpacked from `u8` bytes half as long along an
    /// axis of even extent, or a `u8` tile packed from `f4e2m1` values
    /// twice as long along an axis.
    pub(super) fn fp4_pairs(
        &mut self,
        b: &mut Builder,
        t: &TileType,
        depth: usize,
    ) -> Built<Option<Value>> {
        let dims = t.shape.dims();
        let allowed = |d| self.cfg.dtypes.contains(&d);
        match t.dtype {
            DType::F4E2M1 if allowed(DType::U8) => {
                let axes: Vec<usize> = (0..dims.len())
                    .filter(|&a| dims[a].is_multiple_of(2))
                    .collect();
                if axes.is_empty() {
                    return Ok(None);
                }
                let axis = self.rng.pick(&axes);
                let mut bytes = dims.to_vec();
                bytes[axis] /= 2;
                let x = self.value(b, &tile(bytes, DType::U8), depth)?;
                b.unpack_fp4(x, axis).map(Some)
            }
            DType::U8 if allowed(DType::F4E2M1) => {
                if 2 * t.shape.numel() > self.cfg.max_tile_elements {
                    return Ok(None);
                }
                let axis = self.rng.range(0, dims.len() - 1);
                let mut values = dims.to_vec();
                values[axis] *= 2;
                let x = self.value(b, &tile(values, DType::F4E2M1), depth)?;
                b.pack_fp4(x, axis).map(Some)
            }
            _ => Ok(None),
        }
    }
}

//! The movement ops as affine copies between frame places: each result
//! element `c` (a coordinate) is the operand element at `start + Σ c_k ·
//! stride_k` for static `start` and strides (a stride 0 repeats, a negative
//! one reverses). `reshape` copies nothing: row-major order is unchanged, so
//! the result is the operand's place seen with another shape. A `permute`
//! that swaps the last two axes moves 8 × 8 blocks by vector shuffles where
//! they divide the tile (`transpose.rs`).

use super::error::HostError;
use super::frame::row_major;
use super::kernel::{HostKernel, HostValue};
use tile_ir::{OpId, OpKind};

impl<'a, 'ctx> HostKernel<'a, 'ctx> {
    /// Emits `broadcast`, `reshape`, `permute`, `expand`, `flip`, `slice`,
    /// `pad` or `cat`.
    pub(super) fn movement(&mut self, id: OpId) -> Result<(), HostError> {
        let kind = &self.func.op(id).kind;
        let operands = self.operands(id);
        let result = self.result(id)?;
        let first = *operands
            .first()
            .ok_or_else(|| HostError::internal("a movement op without operands"))?;
        if let (OpKind::Broadcast { .. }, HostValue::Scalar(s)) = (kind, self.value(first)?) {
            let out = self.place_of(result)?;
            let n = self.i64(out.numel() as i64);
            self.counted(n, &mut |l, i| l.set(&out, i, s))?;
            self.define(result, HostValue::Tile(out));
            return Ok(());
        }
        if matches!(kind, OpKind::Broadcast { .. } | OpKind::Expand { .. })
            && self.has_lazy_operand(id)?
        {
            return self.evaluate_op(id);
        }
        let x = self.tile(first)?;
        if let OpKind::Reshape { shape } = kind {
            let mut alias = x;
            alias.shape = shape.dims().to_vec();
            self.define(result, HostValue::Tile(alias));
            return Ok(());
        }
        let out = self.place_of(result)?;
        let (xs, os) = (x.strides(), out.strides());
        let rank = out.shape.len();
        let shape = out.shape.clone();
        match kind {
            OpKind::Broadcast { .. } | OpKind::Expand { .. } => {
                // The operand's axes align to the right; an axis of extent 1
                // repeats.
                let lead = rank
                    .checked_sub(x.shape.len())
                    .ok_or_else(|| HostError::internal("a broadcast to a lower rank"))?;
                let strides: Vec<i64> = (0..rank)
                    .map(|k| match k.checked_sub(lead) {
                        Some(a) if x.shape[a] != 1 => xs[a],
                        _ => 0,
                    })
                    .collect();
                self.copy_affine(&shape, &out, 0, &os, &x, 0, &strides)?;
            }
            OpKind::Permute { perm } if swaps_last_two(perm) => {
                let (lead, last) = x.shape.split_at(rank - 2);
                let dims = [lead.iter().product(), last[0], last[1]];
                if !self.transpose_blocks(&x, &out, dims)? {
                    let strides = permuted(&xs, perm)?;
                    self.copy_affine(&shape, &out, 0, &os, &x, 0, &strides)?;
                }
            }
            OpKind::Permute { perm } => {
                let strides = permuted(&xs, perm)?;
                self.copy_affine(&shape, &out, 0, &os, &x, 0, &strides)?;
            }
            OpKind::Flip { axes } => {
                let mut strides = xs.clone();
                let mut start = 0;
                for &a in axes {
                    let extent = *x
                        .shape
                        .get(a)
                        .ok_or_else(|| HostError::internal("a flipped axis out of range"))?;
                    start += (extent as i64 - 1) * xs[a];
                    strides[a] = -xs[a];
                }
                self.copy_affine(&shape, &out, 0, &os, &x, start, &strides)?;
            }
            OpKind::Slice { ranges } => {
                let from: i64 = ranges
                    .iter()
                    .zip(&xs)
                    .map(|(r, &x)| r.start as i64 * x)
                    .sum();
                let strides: Vec<i64> = ranges
                    .iter()
                    .zip(&xs)
                    .map(|(r, &x)| r.step as i64 * x)
                    .collect();
                self.copy_affine(&shape, &out, 0, &os, &x, from, &strides)?;
            }
            OpKind::Pad { low, value, .. } => {
                self.fill(&out, *value)?;
                let to: i64 = low.iter().zip(&os).map(|(&l, &s)| l as i64 * s).sum();
                self.copy_affine(&x.shape.clone(), &out, to, &os, &x, 0, &xs)?;
            }
            OpKind::Cat { axis } => {
                let mut offset = 0i64;
                for &v in operands {
                    let part = self.tile(v)?;
                    let extent = *part
                        .shape
                        .get(*axis)
                        .ok_or_else(|| HostError::internal("a cat axis out of range"))?;
                    let strides = row_major(&part.shape);
                    let to = offset * os[*axis];
                    self.copy_affine(&part.shape.clone(), &out, to, &os, &part, 0, &strides)?;
                    offset += extent as i64;
                }
            }
            other => {
                return Err(HostError::internal(format!(
                    "`{}` is not a movement op",
                    other.name()
                )))
            }
        }
        self.define(result, HostValue::Tile(out));
        Ok(())
    }
}

/// The operand strides `xs` in the order of the result's axes.
fn permuted(xs: &[i64], perm: &[usize]) -> Result<Vec<i64>, HostError> {
    perm.iter()
        .map(|&p| xs.get(p).copied())
        .collect::<Option<Vec<i64>>>()
        .ok_or_else(|| HostError::internal("a permutation out of range"))
}

/// Whether `perm` swaps the last two axes and keeps the others in place.
fn swaps_last_two(perm: &[usize]) -> bool {
    let rank = perm.len();
    rank >= 2
        && perm[..rank - 2].iter().enumerate().all(|(k, &p)| k == p)
        && perm[rank - 2] == rank - 1
        && perm[rank - 1] == rank - 2
}

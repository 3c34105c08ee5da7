//! Results combined into a tensor with an atomic update
//! ([`Gen::atomic_output`]): at indices each program owns, with any update,
//! or at indices all programs share, with the updates whose final value no
//! order changes.

use super::{Built, Gen};
use tile_ir::builder::{AtomicAccess, Builder};
use tile_ir::{AtomicOp, BinaryOp, DType, MemOrder, MemScope, OpKind, TileType, Type};

/// The updates an accumulator may take from many programs at once: those
/// whose final value no order changes.
fn order_free(dtype: DType) -> Vec<AtomicOp> {
    use AtomicOp::*;
    [Add, Max, Min, And, Or, Xor]
        .into_iter()
        .filter(|&op| op.supports(dtype) && (!dtype.is_float() || matches!(op, Max | Min)))
        .collect()
}

impl Gen<'_> {
    /// Whether [`Gen::atomic_output`] can take a tile of `dtype`.
    pub(super) fn atomic_dtype(dtype: DType) -> bool {
        AtomicOp::ALL.iter().any(|op| op.supports(dtype))
    }

    /// Builds a value of tile type `ty` and combines it into a new 1-D
    /// tensor with an atomic update under a generated mask: at indices
    /// this program owns alone (`p · numel + j`), with any update, the old
    /// values then stored like an output; or, when the dtype has
    /// order-free updates, half the time at indices every program shares
    /// (`(j + p) % len`), whose old values depend on the order and are
    /// dropped.
    pub(super) fn atomic_output(&mut self, b: &mut Builder, t: &TileType) -> Built<()> {
        let depth = self.rng.range(1, self.cfg.max_depth.max(1));
        let dims = t.shape.dims().to_vec();
        let numel: usize = dims.iter().product();
        let programs = self.grid.iter().product::<u32>() as usize;
        let shared = order_free(t.dtype);
        let distinct = shared.is_empty() || self.rng.chance(0.5);
        let len = if distinct {
            programs * numel
        } else {
            self.rng.range(1, numel.clamp(1, 8))
        };
        let op = if distinct {
            let any: Vec<AtomicOp> = AtomicOp::ALL
                .iter()
                .copied()
                .filter(|op| op.supports(t.dtype))
                .collect();
            self.rng.pick(&any)
        } else {
            self.rng.pick(&shared)
        };
        let order = self.rng.pick(&MemOrder::ATOMIC);
        let scope = self.rng.pick(MemScope::ALL);
        let tensor = self.tensor_param(b, t.dtype, vec![len])?;
        let ty = Type::Tile(t.clone());
        let value = self.value(b, &ty, depth)?;
        let cmp = match op {
            AtomicOp::Cas => Some(self.value(b, &ty, depth)?),
            _ => None,
        };
        let mask = self.value(b, &super::tile(dims.clone(), DType::Bool), depth)?;
        let pid = self.linear_program(b)?;
        let j = b.iota(&dims, DType::I32)?;
        let index = if distinct {
            let size = self.int_constant(b, DType::I32, numel as i128)?;
            let start = b.binary(BinaryOp::Mul, pid, size)?;
            let start = b.broadcast(start, &dims)?;
            b.binary(BinaryOp::Add, j, start)?
        } else {
            let pid = b.broadcast(pid, &dims)?;
            let shifted = b.binary(BinaryOp::Add, j, pid)?;
            let len = self.int_constant(b, DType::I32, len as i128)?;
            let len = b.broadcast(len, &dims)?;
            b.binary(BinaryOp::Rem, shifted, len)?
        };
        let access = AtomicAccess {
            tensor,
            indices: &[index],
            cmp,
            value,
            mask,
        };
        let old = b.atomic(OpKind::Atomic { op, order, scope }, access)?;
        if distinct {
            let mut extents = dims.clone();
            extents[0] *= programs;
            let out = self.tensor_param(b, t.dtype, extents)?;
            let view = b.partition_view(out, &dims)?;
            let mut at = vec![pid];
            for _ in 1..dims.len() {
                at.push(self.int_constant(b, DType::I32, 0)?);
            }
            b.store(old, view, &at)?;
        }
        Ok(())
    }
}

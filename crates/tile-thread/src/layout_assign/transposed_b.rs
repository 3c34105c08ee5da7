//! The `b` of a product that is the transpose of a tile computed in
//! registers (weights stored `[N, K]` and dequantized, scaled or cast on
//! the way), where the instruction reads B staged K-major
//! ([`TensorDot::reads_k_major_b`]): the transpose keeps its operand's
//! registers, in that layout permuted, and the lowering stages them as the
//! `[N, K]` tile they are (`lower/operand_stores.rs`), in vectors along
//! the runs of `k` its threads hold. Any other layout of the transpose
//! would convert it through shared memory first, and then stage it again.
//!
//! [`TensorDot::reads_k_major_b`]: super::TensorDot::reads_k_major_b

use super::DistLayout;
use std::collections::{BTreeMap, BTreeSet};
use tile_ir::{Function, OpId, OpKind, Value};

/// Gives each transpose (`permute [1, 0]`) read only as the `b` of the
/// products `k_major_b` its operand's layout permuted.
pub(super) fn keep_transposed_registers(
    func: &Function,
    k_major_b: &BTreeSet<OpId>,
    values: &mut BTreeMap<Value, DistLayout>,
) {
    let mut readers: BTreeMap<Value, (usize, usize)> = BTreeMap::new();
    func.walk(&mut |id| {
        let op = func.op(id);
        // The index of `b` among the operands.
        let b = match op.kind {
            OpKind::Dot { .. } if k_major_b.contains(&id) => Some(1),
            OpKind::DotScaled if k_major_b.contains(&id) => Some(2),
            _ => None,
        };
        for (i, &x) in op.operands.iter().enumerate() {
            let count = readers.entry(x).or_default();
            count.0 += 1;
            count.1 += usize::from(Some(i) == b);
        }
    });
    for (value, (uses, as_b)) in readers {
        if uses != as_b {
            continue;
        }
        let Some(op) = func.defining_op(value).map(|id| func.op(id)) else {
            continue;
        };
        let (OpKind::Permute { perm }, [source]) = (&op.kind, op.operands.as_slice()) else {
            continue;
        };
        if perm.as_slice() != [1, 0] {
            continue;
        }
        if let Some(kept) = values.get(source).and_then(|l| l.permuted(perm)) {
            values.insert(value, kept);
        }
    }
}

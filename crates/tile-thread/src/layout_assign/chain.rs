//! Chained products: a `dot` whose result, through elementwise work, is the
//! `a` operand of another `dot` (attention's `p = softmax(q·kᵀ)` into
//! `p·v`).
//!
//! On `mma.sync` the accumulator fragment of a 16×8 block and the `a`
//! fragment of a 16×16 `k`-step hold the same elements in every lane (rows
//! `l/4` and `l/4 + 8`, columns `2·(l%4)` and `2·(l%4) + 1` of each 8-column
//! half; [`tile_hw::mma`]). When every warp owns whole rows of both products
//! (warps `[W, 1]`), the second `dot` takes its `a` fragments from the
//! registers the first left (`lower/mma.rs`), with no staging through shared
//! memory, and the row reductions between them (a softmax's maximum and sum)
//! stay within a warp.
//!
//! CDNA's MFMA holds a column of its accumulator block per lane and a row
//! of its A block: there the first product computes its block transposed
//! (`Dᵀ = Bᵀ·Aᵀ`, the operands' fragments swapped), so that each lane holds
//! rows of it, `4·(l/32) + i` of every 8 columns in a 32×32 block: the A
//! fragment of a `k`-step of 8 (`layout_assign/mma.rs`). CDNA 4's forms
//! of twice the `K` read 8 consecutive `k` a lane, of which such a lane
//! holds 4 of every 8: a product whose `a` is another's accumulator feeds
//! them the `k` of two CDNA 3 steps instead (`MmaDot::paired_k`), the same
//! sum in another order, with `b` loaded in that order too.

use std::collections::BTreeSet;
use tile_ir::{Function, OpId, OpKind, Value};

/// Whether the `dot` `id` is in a chain: its `a` operand is computed from
/// another `dot`'s result, or its result is (part of) another `dot`'s `a`
/// operand, through elementwise ops, casts and broadcasts.
pub(super) fn in_chain(func: &Function, id: OpId) -> bool {
    takes_a_from_dot(func, id) || feeds_a(func, id)
}

/// Whether the `a` operand of the `dot` `id` is computed from another
/// `dot`'s result, through elementwise ops, casts and broadcasts.
pub(super) fn takes_a_from_dot(func: &Function, id: OpId) -> bool {
    func.op(id)
        .operands
        .first()
        .is_some_and(|&a| !source_dots(func, a).is_empty())
}

/// Whether the result of the `dot` `id` is (part of) another `dot`'s `a`
/// operand, through elementwise ops, casts and broadcasts.
pub(super) fn feeds_a(func: &Function, id: OpId) -> bool {
    let mut feeds = false;
    func.walk(&mut |other| {
        let op = func.op(other);
        if let (OpKind::Dot { .. }, Some(&a)) = (&op.kind, op.operands.first()) {
            feeds |= other != id && source_dots(func, a).contains(&id);
        }
    });
    feeds
}

/// The `dot`s whose results `value` is computed from through elementwise
/// ops, casts and broadcasts (not through reductions, memory or loops).
fn source_dots(func: &Function, value: Value) -> BTreeSet<OpId> {
    let mut dots = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        if !seen.insert(v) {
            continue;
        }
        let Some(def) = func.defining_op(v) else {
            continue;
        };
        let op = func.op(def);
        match op.kind {
            OpKind::Dot { .. } => {
                dots.insert(def);
            }
            OpKind::Unary(_)
            | OpKind::Binary(_)
            | OpKind::Cmp(_)
            | OpKind::Select
            | OpKind::Fma
            | OpKind::Cast { .. }
            | OpKind::Broadcast { .. } => stack.extend(op.operands.iter().copied()),
            _ => {}
        }
    }
    dots
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout_assign::mma_dot;
    use crate::lower::TensorCores;

    /// `s = q·k`, then `p = cast(s · 2)` into `p·v` where `chained`, else
    /// `v·v` (two products, not a chain).
    fn products(chained: bool) -> Function {
        let second = if chained { "%p" } else { "%w" };
        let text = format!(
            r#"kernel @two(%q: tensor<f16, 2>, %k: tensor<f16, 2>, %v: tensor<f16, 2>) {{
  %zero = constant 0 : i32
  %vq = partition_view %q [64, 16] : view<f16, [64, 16]>
  %qt = load %vq[%zero, %zero] : tile<64x16xf16>
  %vk = partition_view %k [16, 64] : view<f16, [16, 64]>
  %kt = load %vk[%zero, %zero] : tile<16x64xf16>
  %z1 = full 0.0 : tile<64x64xf32>
  %s = dot tensor %qt, %kt, %z1 : tile<64x64xf32>
  %two = full 2.0 : tile<64x64xf32>
  %s2 = mul %s, %two : tile<64x64xf32>
  %p = cast %s2 to f16 : tile<64x64xf16>
  %vv = partition_view %v [64, 64] : view<f16, [64, 64]>
  %w = load %vv[%zero, %zero] : tile<64x64xf16>
  %vt = load %vv[%zero, %zero] : tile<64x64xf16>
  %z2 = full 0.0 : tile<64x64xf32>
  %o = dot tensor {second}, %vt, %z2 : tile<64x64xf32>
  store %o, %vv[%zero, %zero]
}}"#
        );
        tile_ir::text::parse_function(&text).unwrap()
    }

    fn dots(func: &Function) -> Vec<OpId> {
        let mut dots = Vec::new();
        func.walk(&mut |id| {
            if matches!(func.op(id).kind, OpKind::Dot { .. }) {
                dots.push(id);
            }
        });
        dots
    }

    #[test]
    fn both_products_of_a_chain_put_their_warps_along_m() {
        for (chained, warps) in [(true, [4, 1]), (false, [2, 2])] {
            let func = products(chained);
            for id in dots(&func) {
                assert_eq!(in_chain(&func, id), chained);
                let plan = mma_dot(&func, id, 4, TensorCores::MmaSync).unwrap();
                assert_eq!(plan.warps, warps, "chained {chained}");
                assert!(!plan.transposed);
            }
        }
    }

    /// On MFMA the chain's waves are along M too, and its first product is
    /// computed transposed.
    #[test]
    fn an_mfma_chain_transposes_its_first_product() {
        let func = products(true);
        let plans: Vec<(bool, [usize; 2])> = dots(&func)
            .into_iter()
            .map(|id| {
                let plan = mma_dot(&func, id, 4, TensorCores::Mfma).unwrap();
                (plan.transposed, plan.warps)
            })
            .collect();
        assert_eq!(plans, [(true, [2, 1]), (false, [2, 1])]);
    }
}

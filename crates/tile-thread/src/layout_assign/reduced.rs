//! Default layouts for tiles reduced along an outer axis: warps across the
//! kept axes, so that the reduction stays in each warp.
//!
//! The default blocked layout fills the innermost axis with lanes and puts
//! the warps along the outermost one. A tile summed along that outer axis
//! (a `[BM, BN]` block of partial rows summed into `BN` columns, a bias
//! gradient) then has every warp hold a share of each column, and the
//! warps combine their shares through shared memory behind a barrier. Here
//! such a tile's warps go to the axes the reduction keeps instead, taking
//! lanes off them where the lanes alone fill them: the reduction then runs
//! in registers and warp shuffles, with no shared memory. At least two
//! lanes stay on the innermost axis, so that a warp's vector accesses still
//! cover whole 32-byte sectors of each row (two of 16 bytes).
//!
//! Which tiles: those of a group (values joined by elementwise ops of one
//! shape and by the slots a `for` carries) that order-free reductions
//! ([`super::order_free`]) or arg reductions reduce along one axis, not the
//! innermost, and that no reduction reduces along another. A sum that must
//! keep the interpreter's order reads its elements in order wherever they
//! are, so its tile keeps the default.

use super::groups::{same_shape, Groups};
use super::propagate::{elementwise, every_carried_slot};
use super::{order_free, DistLayout, LayoutBuildError, SumOrder};
use crate::program::WARP_SIZE;
use std::collections::{BTreeMap, BTreeSet};
use tile_ir::{Function, OpKind, Type, Value};

/// The axis each tile value of `func` is reduced along, for the values
/// whose group is reduced along one axis other than the innermost.
pub(super) fn reduced_axes(func: &Function, sums: SumOrder) -> BTreeMap<Value, usize> {
    let mut groups = Groups::default();
    let mut reduced: Vec<(Value, usize)> = Vec::new();
    func.walk(&mut |id| {
        let op = func.op(id);
        if elementwise(&op.kind) {
            for &r in &op.results {
                for &x in &op.operands {
                    if same_shape(func, x, r) {
                        groups.join(x, r);
                    }
                }
            }
        }
        let Some(&operand) = op.operands.first() else {
            return;
        };
        match op.kind {
            OpKind::Reduce { kind, axis, .. }
                if order_free(kind, func.ty(operand).dtype(), sums) =>
            {
                reduced.push((operand, axis));
            }
            OpKind::ArgReduce { axis, .. } => reduced.push((operand, axis)),
            _ => {}
        }
    });
    for (init, arg, yielded, result) in every_carried_slot(func) {
        for other in [init, arg, yielded] {
            if same_shape(func, other, result) {
                groups.join(other, result);
            }
        }
    }
    let mut axes: BTreeMap<Value, BTreeSet<usize>> = BTreeMap::new();
    for (operand, axis) in reduced {
        axes.entry(groups.root(operand)).or_default().insert(axis);
    }
    let mut placed = BTreeMap::new();
    for (value, info) in func.values.iter() {
        let Type::Tile(t) = &info.ty else { continue };
        let innermost = t.shape.dims().len().saturating_sub(1);
        let only = axes.get(&groups.root(value)).filter(|a| a.len() == 1);
        if let Some(&axis) = only.and_then(|a| a.first()) {
            if axis != innermost {
                placed.insert(value, axis);
            }
        }
    }
    placed
}

impl DistLayout {
    /// The blocked layout of a tile of `shape` reduced along `axis` (not
    /// the innermost), for `num_warps` warps with `vec` consecutive
    /// elements per thread on the innermost axis: lanes as
    /// [`DistLayout::blocked`] places them, warps across the other axes,
    /// outermost first, and, where those axes are full, lanes moved from
    /// them (outermost first, two kept on the innermost) onto `axis` to
    /// make room for one more doubling of the warps. Warps that find no
    /// room go along `axis`.
    pub fn blocked_across(
        shape: &[usize],
        num_warps: u32,
        vec: usize,
        axis: usize,
    ) -> Result<DistLayout, LayoutBuildError> {
        let default = DistLayout::blocked(shape, num_warps, vec)?;
        let rank = shape.len();
        if axis + 1 >= rank || default.warps_per_block[axis] == 1 {
            return Ok(default);
        }
        let spt = default.size_per_thread.clone();
        let per_thread: Vec<usize> = (0..rank)
            .map(|d| shape[d].div_ceil(spt[d]).next_power_of_two())
            .collect();
        let mut tpw = default.threads_per_warp.clone();
        let mut wpb = vec![1; rank];
        let mut warps = num_warps as usize;
        let kept: Vec<usize> = (0..rank).filter(|&d| d != axis).collect();
        let room = |d: usize, tpw: &[usize], wpb: &[usize]| per_thread[d] / (tpw[d] * wpb[d]);
        for &d in &kept {
            let w = warps.min(room(d, &tpw, &wpb).max(1));
            wpb[d] *= w;
            warps /= w;
        }
        let floor = |d: usize| if d == rank - 1 { 2 } else { 1 };
        while warps > 1 && tpw[axis] * 2 <= per_thread[axis] {
            let Some(&d) = kept.iter().find(|&&d| tpw[d] > floor(d)) else {
                break;
            };
            tpw[d] /= 2;
            tpw[axis] *= 2;
            wpb[d] *= 2;
            warps /= 2;
        }
        wpb[axis] *= warps;
        debug_assert_eq!(tpw.iter().product::<usize>(), WARP_SIZE as usize);
        let order = default.order.clone();
        DistLayout::from_fields(shape, spt, tpw, wpb, order).map_err(|reason| LayoutBuildError {
            shape: shape.to_vec(),
            reason,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{reduced_axes, DistLayout, SumOrder};
    use tile_ir::text::parse_function;

    #[test]
    fn a_column_sum_puts_the_warps_across_the_columns() {
        // Triton's layer-norm `dW`/`dB` block: 32 × 128, 8 f16 a thread, 4 warps.
        let across = DistLayout::blocked_across(&[32, 128], 4, 8, 0).expect("a layout");
        assert_eq!(across.size_per_thread, [1, 8]);
        assert_eq!(across.threads_per_warp, [8, 4]);
        assert_eq!(across.warps_per_block, [1, 4]);
        let default = DistLayout::blocked(&[32, 128], 4, 8).expect("a layout");
        assert_eq!(default.warps_per_block, [4, 1]);
    }

    #[test]
    fn warps_without_room_stay_along_the_reduced_axis() {
        // 16 f32 columns of 4: two lanes stay on a row, so two warps fit
        // across the columns and the other two stay on the rows.
        let across = DistLayout::blocked_across(&[128, 16], 4, 4, 0).expect("a layout");
        assert_eq!(across.threads_per_warp, [16, 2]);
        assert_eq!(across.warps_per_block, [2, 2]);
        // Reduced along the rows (the innermost axis): the default.
        let rows = DistLayout::blocked_across(&[32, 128], 4, 8, 1).expect("a layout");
        assert_eq!(
            rows,
            DistLayout::blocked(&[32, 128], 4, 8).expect("a layout")
        );
    }

    #[test]
    fn the_group_of_a_carried_column_sum_is_reduced_along_its_rows() {
        let text = "kernel @colsum(%a: tensor<f32, 2>, %c: tensor<f32, 1>, %n: i32) {
  %0 = program_id 0 : i32
  %1 = partition_view %a [32, 128] : view<f32, [32, 128]>
  %2 = constant 0 : i32
  %3 = constant 1 : i32
  %4 = full 0.0 : tile<32x128xf32>
  %5 = for %6 = %2 to %n step %3 iter(%7 = %4) : tile<32x128xf32> {
    %8 = load_masked %1[%6, %0] pad(zero) : tile<32x128xf32>
    %9 = add %7, %8 : tile<32x128xf32>
    yield %9
  }
  %10 = reduce sum %5 axis 0 : tile<128xf32>
  %11 = partition_view %c [128] : view<f32, [128]>
  store_masked %10, %11[%0]
}";
        let func = parse_function(text).expect("the kernel parses");
        let in_order = reduced_axes(&func, SumOrder::InOrder);
        assert!(in_order.is_empty(), "an in-order sum keeps the default");
        let any = reduced_axes(&func, SumOrder::Any);
        let mut tiles = Vec::new();
        func.walk(&mut |id| tiles.extend(func.op(id).results.iter().copied()));
        let axes: Vec<Option<usize>> = tiles.iter().map(|v| any.get(v).copied()).collect();
        // Every 32 × 128 value (the full, the loop's result, the load and the
        // sum) along axis 0; the reduced row itself has one axis.
        assert_eq!(
            axes.iter().filter(|a| **a == Some(0)).count(),
            4,
            "{axes:?}"
        );
    }
}

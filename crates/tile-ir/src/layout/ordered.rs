//! `make_ordered_layout`: compact strides in a chosen mode order.

use super::error::{LayoutError, Result};
use super::int_tuple::IntTuple;
use super::layout::Layout;

/// The compact layout of `shape` whose modes are laid out in increasing
/// `order`: the mode with the smallest order gets stride 1, the next
/// starts after it, and so on. `order` is congruent to `shape`, or has a
/// leaf where `shape` has a subtree (that subtree is then column-major).
/// Equal orders are taken left to right.
///
/// ```
/// use tile_ir::layout::make_ordered_layout;
/// let r = make_ordered_layout(&"(2,2,2,2)".parse().unwrap(), &"(0,2,3,1)".parse().unwrap()).unwrap();
/// assert_eq!(r.to_string(), "(2,2,2,2):(1,4,8,2)");
/// let r = make_ordered_layout(&"(2,3,4,5)".parse().unwrap(), &"(2,67,42,50)".parse().unwrap()).unwrap();
/// assert_eq!(r.to_string(), "(2,3,4,5):(1,40,2,8)");
/// ```
pub fn make_ordered_layout(shape: &IntTuple, order: &IntTuple) -> Result<Layout> {
    let mut groups = Vec::new();
    collect_groups(shape, order, &mut groups)?;
    let mut ranked: Vec<usize> = (0..groups.len()).collect();
    ranked.sort_by_key(|&k| groups[k].0);
    let mut starts = vec![0i64; groups.len()];
    let mut next = 1i64;
    for &k in &ranked {
        starts[k] = next;
        next = next.saturating_mul(groups[k].1.size());
    }
    let mut group = 0;
    let stride = strides_for(shape, order, &starts, &mut group);
    Layout::new(shape.clone(), stride)
}

/// The (order, subshape) pairs at the leaves of `order`, left to right.
fn collect_groups(
    shape: &IntTuple,
    order: &IntTuple,
    out: &mut Vec<(i64, IntTuple)>,
) -> Result<()> {
    match (shape, order) {
        (_, IntTuple::Int(o)) => out.push((*o, shape.clone())),
        (IntTuple::Tuple(ss), IntTuple::Tuple(os)) if ss.len() == os.len() => {
            for (s, o) in ss.iter().zip(os) {
                collect_groups(s, o, out)?;
            }
        }
        _ => {
            return Err(LayoutError::NotCongruent {
                op: "make_ordered_layout",
                left: shape.to_string(),
                right: order.to_string(),
            })
        }
    }
    Ok(())
}

fn strides_for(shape: &IntTuple, order: &IntTuple, starts: &[i64], group: &mut usize) -> IntTuple {
    match (shape, order) {
        (IntTuple::Tuple(ss), IntTuple::Tuple(os)) => IntTuple::Tuple(
            ss.iter()
                .zip(os)
                .map(|(s, o)| strides_for(s, o, starts, group))
                .collect(),
        ),
        _ => {
            let start = starts.get(*group).copied().unwrap_or(1);
            *group += 1;
            shape.prefix_product(start)
        }
    }
}

//! Products: repeat a block layout according to a tiler layout.

use super::complement::complement;
use super::composition::composition;
use super::divide::{unpack, unzip_by};
use super::error::{LayoutError, Result};
use super::int_tuple::IntTuple;
use super::layout::Layout;
use super::ordered::make_ordered_layout;
use super::tiler::Tiler;

/// `A ⊗ B = (A, A* ∘ B)` with `A* = complement(A, size(A)·cosize(B))`:
/// mode 0 is the block `A`, mode 1 places one copy of `A` per element of
/// `B`. A tuple tiler multiplies mode by mode.
///
/// ```
/// use tile_ir::layout::{logical_product, Layout};
/// let a: Layout = "(2,2):(4,1)".parse().unwrap();
/// let r = logical_product(&a, &"6:1".parse().unwrap()).unwrap();
/// assert_eq!(r.to_string(), "((2,2),(2,3)):((4,1),(2,8))");
/// ```
pub fn logical_product(block: &Layout, tiler: &Tiler) -> Result<Layout> {
    match tiler {
        Tiler::Layout(b) => {
            let cotarget =
                block
                    .size()
                    .checked_mul(b.cosize())
                    .ok_or_else(|| LayoutError::Overflow {
                        op: "logical_product",
                        detail: format!("size({block})·cosize({b})"),
                    })?;
            let rest = composition(&complement(block, cotarget)?, b)?;
            Ok(Layout::concat(&[block.clone(), rest]))
        }
        Tiler::Modes(items) => Tiler::by_mode(items, block, "logical_product", logical_product),
    }
}

/// [`logical_product`] with the block modes gathered into mode 0 and the
/// repeat modes (then any modes the tiler did not reach) into mode 1:
/// `((M,N), (TileM,TileN,L,…))`.
///
/// ```
/// use tile_ir::layout::{zipped_product, Layout};
/// let a: Layout = "(2,5):(5,1)".parse().unwrap();
/// let r = zipped_product(&a, &"<3:5, 4:6>".parse().unwrap()).unwrap();
/// assert_eq!(r.to_string(), "((2,5),(3,4)):((5,1),(10,30))");
/// ```
pub fn zipped_product(block: &Layout, tiler: &Tiler) -> Result<Layout> {
    unzip_by(&logical_product(block, tiler)?, tiler, "zipped_product")
}

/// [`zipped_product`] with mode 1 unpacked: `((M,N), TileM, TileN, L, …)`.
///
/// ```
/// use tile_ir::layout::{tiled_product, Layout};
/// let a: Layout = "(2,5):(5,1)".parse().unwrap();
/// let r = tiled_product(&a, &"<3:5, 4:6>".parse().unwrap()).unwrap();
/// assert_eq!(r.to_string(), "((2,5),3,4):((5,1),10,30)");
/// ```
pub fn tiled_product(block: &Layout, tiler: &Tiler) -> Result<Layout> {
    Ok(unpack(&zipped_product(block, tiler)?, false))
}

/// [`zipped_product`] with both modes unpacked: `(M, N, TileM, TileN, L, …)`.
///
/// ```
/// use tile_ir::layout::{flat_product, Layout};
/// let a: Layout = "(2,5):(5,1)".parse().unwrap();
/// let r = flat_product(&a, &"<3:5, 4:6>".parse().unwrap()).unwrap();
/// assert_eq!(r.to_string(), "(2,5,3,4):(5,1,10,30)");
/// ```
pub fn flat_product(block: &Layout, tiler: &Tiler) -> Result<Layout> {
    Ok(unpack(&zipped_product(block, tiler)?, true))
}

/// The block repeated over the tiler, like modes paired:
/// with `R = max(rank A, rank B)` (both padded with `1:0` modes),
/// `P = A ⊗ B` and the result is `((A₀,P₁₀), (A₁,P₁₁), …)`. The result is
/// not coalesced (CuTe's current behaviour).
///
/// ```
/// use tile_ir::layout::{blocked_product, Layout};
/// let a: Layout = "(2,5):(5,1)".parse().unwrap();
/// let b: Layout = "(3,4):(1,3)".parse().unwrap();
/// let r = blocked_product(&a, &b).unwrap();
/// assert_eq!(r.to_string(), "((2,3),(5,4)):((5,10),(1,30))");
/// ```
pub fn blocked_product(block: &Layout, tiler: &Layout) -> Result<Layout> {
    let (blocks, repeats) = paired_product(block, tiler)?;
    let modes: Vec<Layout> = blocks
        .iter()
        .zip(&repeats)
        .map(|(a, p)| Layout::concat(&[a.clone(), p.clone()]))
        .collect();
    Ok(Layout::concat(&modes))
}

/// Like [`blocked_product`] but with the repeat inside each mode first,
/// `((P₁₀,A₀), (P₁₁,A₁), …)`, which interleaves (rakes) the copies of the
/// block.
///
/// ```
/// use tile_ir::layout::{raked_product, Layout};
/// let a: Layout = "(2,5):(5,1)".parse().unwrap();
/// let b: Layout = "(3,4):(1,3)".parse().unwrap();
/// let r = raked_product(&a, &b).unwrap();
/// assert_eq!(r.to_string(), "((3,2),(4,5)):((10,5),(30,1))");
/// ```
pub fn raked_product(block: &Layout, tiler: &Layout) -> Result<Layout> {
    let (blocks, repeats) = paired_product(block, tiler)?;
    let modes: Vec<Layout> = repeats
        .iter()
        .zip(&blocks)
        .map(|(p, a)| Layout::concat(&[p.clone(), a.clone()]))
        .collect();
    Ok(Layout::concat(&modes))
}

/// The modes of `A` and of `A* ∘ B`, both padded to the larger rank.
fn paired_product(block: &Layout, tiler: &Layout) -> Result<(Vec<Layout>, Vec<Layout>)> {
    let rank = block.rank().max(tiler.rank());
    let block = Layout::concat(&block.padded_modes(rank));
    let tiler = Layout::concat(&tiler.padded_modes(rank));
    let product = logical_product(&block, &Tiler::Layout(tiler))?;
    let repeats = product.mode(1).map(|m| m.modes()).unwrap_or_default();
    Ok((block.modes(), repeats))
}

/// Repeats `block` until it covers `target` (a shape), in the order of
/// the target's modes given by `order` (column-major when `None`):
/// `blocked_product(block, make_ordered_layout(target / block, order))`.
///
/// Fails if the block has more modes than the target or a block mode's
/// size does not divide the matching target mode's size.
///
/// ```
/// use tile_ir::layout::{tile_to_shape, Layout};
/// let block: Layout = "(2,2):(1,2)".parse().unwrap();
/// let r = tile_to_shape(&block, &"(4,6)".parse().unwrap(), None).unwrap();
/// assert_eq!(r.to_string(), "((2,2),(2,3)):((1,4),(2,8))");
/// ```
pub fn tile_to_shape(
    block: &Layout,
    target: &IntTuple,
    order: Option<&IntTuple>,
) -> Result<Layout> {
    let rank = target.rank();
    if block.rank() > rank {
        return Err(LayoutError::rule(
            "tile_to_shape",
            "the block has more modes than the target shape",
            format!("block {block}, target {target}"),
        ));
    }
    let padded = Layout::concat(&block.padded_modes(rank));
    let mut repeats = Vec::with_capacity(rank);
    for (mode, want) in padded.modes().iter().zip(target.modes()) {
        let (have, want) = (mode.size(), want.size());
        if want % have != 0 {
            return Err(LayoutError::rule(
                "tile_to_shape",
                "the block shape does not divide the target shape",
                format!("block mode {mode} of size {have} into {want} in target {target}"),
            ));
        }
        repeats.push(want / have);
    }
    let repeat_shape = IntTuple::flat(&repeats);
    let tiles = match order {
        Some(order) => make_ordered_layout(&repeat_shape, order)?,
        None => Layout::column_major(repeat_shape)?,
    };
    blocked_product(&padded, &tiles)
}

//! Divides: split a layout into tiles and the layout of the tiles.

use super::complement::complement;
use super::composition::composition;
use super::error::{LayoutError, Result};
use super::layout::Layout;
use super::tiler::Tiler;

/// `A ⊘ B = A ∘ (B, B*)` with `B* = complement(B, size(A))`: mode 0 is
/// the tile `B` picks out of `A`, mode 1 iterates over the tiles. A tuple
/// tiler divides mode by mode.
///
/// ```
/// use tile_ir::layout::{logical_divide, Layout};
/// let a: Layout = "(4,2,3):(2,1,8)".parse().unwrap();
/// let r = logical_divide(&a, &"4:2".parse().unwrap()).unwrap();
/// assert_eq!(r.to_string(), "((2,2),(2,3)):((4,1),(2,8))");
/// ```
pub fn logical_divide(layout: &Layout, tiler: &Tiler) -> Result<Layout> {
    match tiler {
        Tiler::Layout(b) => {
            let rest = complement(b, layout.size())?;
            composition(layout, &Layout::concat(&[b.clone(), rest]))
        }
        Tiler::Modes(items) => Tiler::by_mode(items, layout, "logical_divide", logical_divide),
    }
}

/// [`logical_divide`] with the tile modes gathered into mode 0 and the
/// rest modes (then any modes the tiler did not reach) into mode 1:
/// `((TileM,TileN), (RestM,RestN,L,…))`. Mode 0 equals
/// `composition_tiler(A, B)`.
///
/// ```
/// use tile_ir::layout::{zipped_divide, Layout};
/// let a: Layout = "(9,(4,8)):(59,(13,1))".parse().unwrap();
/// let r = zipped_divide(&a, &"<3:3, (2,4):(1,8)>".parse().unwrap()).unwrap();
/// assert_eq!(r.to_string(), "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))");
/// ```
pub fn zipped_divide(layout: &Layout, tiler: &Tiler) -> Result<Layout> {
    unzip_by(&logical_divide(layout, tiler)?, tiler, "zipped_divide")
}

/// [`zipped_divide`] with mode 1 unpacked: `((TileM,TileN), RestM, RestN, L, …)`.
///
/// ```
/// use tile_ir::layout::{tiled_divide, Layout};
/// let a: Layout = "(8,8):(1,8)".parse().unwrap();
/// let r = tiled_divide(&a, &"(2,4)".parse().unwrap()).unwrap();
/// assert_eq!(r.to_string(), "((2,4),4,2):((1,8),2,32)");
/// ```
pub fn tiled_divide(layout: &Layout, tiler: &Tiler) -> Result<Layout> {
    Ok(unpack(&zipped_divide(layout, tiler)?, false))
}

/// [`zipped_divide`] with both modes unpacked: `(TileM, TileN, RestM, RestN, L, …)`.
///
/// ```
/// use tile_ir::layout::{flat_divide, Layout};
/// let a: Layout = "(8,8):(1,8)".parse().unwrap();
/// let r = flat_divide(&a, &"(2,4)".parse().unwrap()).unwrap();
/// assert_eq!(r.to_string(), "(2,4,4,2):(1,8,2,32)");
/// ```
pub fn flat_divide(layout: &Layout, tiler: &Tiler) -> Result<Layout> {
    Ok(unpack(&zipped_divide(layout, tiler)?, true))
}

/// Gathers the rank-2 `(tile, rest)` modes at the leaves of `tiler` into
/// `((tiles…), (rests…, untouched modes…))` (CuTe's `tile_unzip`).
pub(crate) fn unzip_by(layout: &Layout, tiler: &Tiler, op: &'static str) -> Result<Layout> {
    let (tiles, rests) = zip2_by(layout, tiler, op)?;
    Ok(Layout::concat(&[tiles, rests]))
}

fn zip2_by(layout: &Layout, tiler: &Tiler, op: &'static str) -> Result<(Layout, Layout)> {
    match tiler {
        Tiler::Layout(_) => match (layout.mode(0), layout.mode(1), layout.rank()) {
            (Some(tile), Some(rest), 2) => Ok((tile, rest)),
            _ => Err(LayoutError::rule(
                op,
                "a tiled mode must have rank 2",
                format!("{layout}"),
            )),
        },
        Tiler::Modes(items) => {
            Tiler::check_rank(items, layout, op)?;
            let modes = layout.modes();
            let mut tiles = Vec::with_capacity(items.len());
            let mut rests = Vec::with_capacity(modes.len());
            for (mode, item) in modes.iter().zip(items) {
                let (tile, rest) = zip2_by(mode, item, op)?;
                tiles.push(tile);
                rests.push(rest);
            }
            rests.extend_from_slice(&modes[items.len()..]);
            Ok((Layout::concat(&tiles), Layout::concat(&rests)))
        }
    }
}

/// Splices the top-level modes of mode 1 (and of mode 0 if `both`) into
/// the result: `(A, (B, C))` becomes `(A, B, C)`.
pub(crate) fn unpack(zipped: &Layout, both: bool) -> Layout {
    let halves = zipped.modes();
    let mut out = Vec::new();
    for (k, half) in halves.iter().enumerate() {
        if k == 1 || both {
            out.extend(half.modes());
        } else {
            out.push(half.clone());
        }
    }
    Layout::concat(&out)
}

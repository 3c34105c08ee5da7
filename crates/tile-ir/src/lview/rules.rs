//! The typing rules of the layout-view ops (called from [`crate::rules`]).

use super::derive::{derive, tile_shape};
use super::LViewOp;
use crate::layout::Layout;
use crate::rules::{check_padding, check_shape, RuleResult};
use crate::types::{LayoutViewType, TileType, Type};

/// Checks that a view of `layout` can be loaded: at least one mode, and the
/// tile of its mode sizes is a valid tile shape.
pub fn check_layout(layout: &Layout) -> RuleResult<()> {
    if layout.rank() == 0 {
        return Err(format!(
            "a layout view needs at least one mode, found {layout}"
        ));
    }
    check_shape(&tile_shape(layout)?)
}

/// The result types of `op` applied to operands of the given types.
pub fn infer(op: &LViewOp, operands: &[&Type]) -> RuleResult<Vec<Type>> {
    match op {
        LViewOp::Make { layout } => {
            let [Type::Tensor(t)] = operands else {
                return Err(format!(
                    "layout_view takes one tensor operand, found {}",
                    list(operands)
                ));
            };
            check_layout(layout)?;
            Ok(vec![Type::LayoutView(LayoutViewType {
                dtype: t.dtype,
                layout: layout.clone(),
                masked: false,
                swizzle: None,
            })])
        }
        LViewOp::Load | LViewOp::LoadMasked { .. } => {
            let [view] = operands else {
                return Err(format!(
                    "{} takes one layout view operand, found {}",
                    op.name(),
                    list(operands)
                ));
            };
            let view = view_operand(view)?;
            if let LViewOp::LoadMasked { padding } = op {
                check_padding(*padding, view.dtype)?;
            }
            Ok(vec![loaded(view)?])
        }
        LViewOp::Store | LViewOp::StoreMasked => {
            let [value, view] = operands else {
                return Err(format!(
                    "{} takes a tile and a layout view, found {}",
                    op.name(),
                    list(operands)
                ));
            };
            let want = loaded(view_operand(view)?)?;
            if **value != want {
                return Err(format!(
                    "the stored value must have type {want} (the view's tile), found {value}"
                ));
            }
            Ok(Vec::new())
        }
        _ => {
            let Some((view, indices)) = operands.split_first() else {
                return Err(format!("{} needs a layout view operand", op.name()));
            };
            let view = view_operand(view)?;
            let wanted = match op {
                LViewOp::Tile { shape } => shape.len(),
                LViewOp::Split { .. } | LViewOp::Distribute { .. } => 1,
                _ => 0,
            };
            if indices.len() != wanted {
                return Err(format!(
                    "{} needs {wanted} index operand(s) after the view, found {}",
                    op.name(),
                    indices.len()
                ));
            }
            for (i, index) in indices.iter().enumerate() {
                if !matches!(index, Type::Scalar(d) if d.is_int()) {
                    return Err(format!(
                        "index operand {i} must be an integer scalar, found {index}"
                    ));
                }
            }
            let derived = derive(op, &view.layout)?;
            if view.masked && derived.modes.is_none() {
                return Err(
                    "a masked view (an edge tile, with a runtime extent per mode) does not take an op that regroups elements across modes: derive this view before the edge tile".into(),
                );
            }
            check_layout(&derived.layout)?;
            let swizzle = match (op, view.swizzle) {
                (LViewOp::Swizzle { .. }, Some(had)) => {
                    return Err(format!(
                        "a view takes one swizzle, and this one has {had} already"
                    ))
                }
                (LViewOp::Swizzle { swizzle }, None) => Some(*swizzle),
                (_, had) => had,
            };
            Ok(vec![Type::LayoutView(LayoutViewType {
                dtype: view.dtype,
                layout: derived.layout,
                masked: view.masked || derived.edge,
                swizzle,
            })])
        }
    }
}

/// The tile type a view loads and stores.
pub fn loaded(view: &LayoutViewType) -> RuleResult<Type> {
    Ok(Type::Tile(TileType {
        shape: tile_shape(&view.layout)?,
        dtype: view.dtype,
    }))
}

fn view_operand(ty: &Type) -> RuleResult<&LayoutViewType> {
    match ty {
        Type::LayoutView(v) => Ok(v),
        other => Err(format!("expected a layout view operand, found {other}")),
    }
}

fn list(operands: &[&Type]) -> String {
    if operands.is_empty() {
        return "none".into();
    }
    let names: Vec<String> = operands.iter().map(|t| t.to_string()).collect();
    names.join(", ")
}

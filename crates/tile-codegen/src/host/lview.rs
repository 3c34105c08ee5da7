//! Layout views: a tensor's memory seen through a static CuTe layout from a
//! runtime base (docs/ir.md, "Layout views").
//!
//! A view is its tensor, its layout (static, from its type) and its base, an
//! `i128` computed at run time: the view-deriving ops take the derived layout
//! and the kind of shift from `tile_ir::lview::derive`, the same function
//! that types them and gives them meaning in the interpreter, and add the
//! shift — the layout of the op's indices (or of the thread coordinate of
//! `lview_distribute`) evaluated with Euclidean division by its static
//! shapes. Tile element `j` is at `base + Σ_k mode_k(j_k)`, which must lie in
//! the tensor's element space `[0, 1 + Σ (e_k − 1) · max(s_k, 0))`. An
//! unmasked access checks the lowest and highest offsets of the tile (static
//! relative to the base) once; a masked one tests each element. A masked
//! view (an edge tile) also carries its runtime extent along each mode: an
//! unmasked access first checks that every extent is the whole mode, a
//! masked one skips the elements past an extent. A swizzled view's offsets
//! are `swizzle(base + L(j))`: not static relative to the base, so its
//! unmasked accesses check every offset in a first pass. A store
//! through a layout that sends two elements to one offset is refused when
//! compiling, as the GPU lowering refuses it.

mod bounds;

use super::error::HostError;
use super::kernel::{HostKernel, HostValue};
use inkwell::values::{BasicValueEnum, IntValue};
use inkwell::IntPredicate;
use tile_ir::layout::{Layout, Swizzle};
use tile_ir::lview::derive::{derive, tile_shape, Derived, Shift, Start};
use tile_ir::{DType, LViewOp, OpId, OpKind, Value};

/// A runtime integer as an `i64` and whether its bits are unsigned (a `u64`
/// above `i64::MAX` stays exact).
#[derive(Clone, Copy)]
struct Index<'ctx> {
    value: IntValue<'ctx>,
    unsigned: bool,
}

/// A layout view while the kernel is emitted.
#[derive(Clone)]
pub(super) struct LViewRef<'ctx> {
    tensor: usize,
    dtype: DType,
    layout: Layout,
    /// The base offset, an `i128`.
    base: IntValue<'ctx>,
    /// A masked view's extent along each mode (`i64`).
    extents: Option<Vec<IntValue<'ctx>>>,
    /// Its swizzle.
    swizzle: Option<Swizzle>,
}

impl<'a, 'ctx> HostKernel<'a, 'ctx> {
    /// Emits a layout-view op.
    pub(super) fn lview(&mut self, id: OpId) -> Result<(), HostError> {
        let OpKind::LView(op) = &self.func.op(id).kind else {
            return Err(HostError::internal("not a layout-view op"));
        };
        let operands = self.operands(id);
        match op {
            LViewOp::Make { layout } => {
                let tensor = match operands.first().map(|&v| self.value(v)).transpose()? {
                    Some(HostValue::Tensor(t)) => t,
                    _ => return Err(HostError::internal("layout_view of a non-tensor")),
                };
                let dtype = self.func.ty(self.result(id)?).dtype();
                let base = self.e.ctx.i128_type().const_zero();
                self.define_result(
                    id,
                    HostValue::LView(LViewRef {
                        tensor,
                        dtype,
                        layout: layout.clone(),
                        base,
                        extents: None,
                        swizzle: None,
                    }),
                )
            }
            LViewOp::Load | LViewOp::LoadMasked { .. } => {
                let view = self.view_of(operands.first().copied())?;
                let shape = tile_shape(&view.layout).map_err(HostError::internal)?.0;
                let out = self.place(&shape, view.dtype);
                let masked = match op {
                    LViewOp::LoadMasked { padding } => {
                        let pad = padding.value(view.dtype).ok_or_else(|| {
                            HostError::internal(format!("padding {padding:?} of {}", view.dtype))
                        })?;
                        self.fill(&out, pad)?;
                        true
                    }
                    _ => false,
                };
                let space = self.element_space(&view)?;
                if !masked {
                    self.check_whole(id, &view)?;
                    self.check_inside(id, &view, space)?;
                }
                let strides = out.strides();
                self.nest_static(&shape, &mut |l, j| {
                    let at = l.view_offset(&view, j)?;
                    let to = l.linear(j, &strides, 0)?;
                    l.when_inside(masked, &view, j, at, space, &mut |l, at| {
                        let v = l.read_element(view.tensor, view.dtype, at)?;
                        l.set(&out, to, v)
                    })
                })?;
                self.define_result(id, HostValue::Tile(out))
            }
            LViewOp::Store | LViewOp::StoreMasked => {
                let (Some(&value), Some(&view)) = (operands.first(), operands.get(1)) else {
                    return Err(HostError::internal("a store takes a tile and a view"));
                };
                let tile = self.tile(value)?;
                let view = self.view_of(Some(view))?;
                let shape = tile_shape(&view.layout).map_err(HostError::internal)?.0;
                if !injective(&view.layout, &shape) {
                    return Err(HostError::Unsupported {
                        what: format!(
                            "a store through the layout {}, which sends two elements to one offset",
                            view.layout
                        ),
                    });
                }
                let masked = matches!(op, LViewOp::StoreMasked);
                let space = self.element_space(&view)?;
                if !masked {
                    self.check_whole(id, &view)?;
                    self.check_inside(id, &view, space)?;
                }
                let strides = tile.strides();
                self.nest_static(&shape, &mut |l, j| {
                    let at = l.view_offset(&view, j)?;
                    let from = l.linear(j, &strides, 0)?;
                    l.when_inside(masked, &view, j, at, space, &mut |l, at| {
                        let v = l.get(&tile, from)?;
                        l.write_element(view.tensor, view.dtype, at, v)
                    })
                })
            }
            derived => {
                let view = self.view_of(operands.first().copied())?;
                let d = derive(derived, &view.layout).map_err(HostError::internal)?;
                let indices = operands
                    .get(1..)
                    .unwrap_or_default()
                    .iter()
                    .map(|&v| self.index(v))
                    .collect::<Result<Vec<_>, _>>()?;
                let coordinate = match (&d.shift, &indices[..]) {
                    (Shift::Thread { threads, .. }, &[tid]) => {
                        let mut coordinate = Vec::new();
                        for m in threads.modes() {
                            let n = m.shape().as_int().unwrap_or(1).max(1);
                            let d = m.stride().as_int().unwrap_or(1).max(1);
                            let (q, _) = self.div_rem(tid, d)?;
                            let (_, c) = self.div_rem(q, n)?;
                            coordinate.push(c);
                        }
                        coordinate
                    }
                    (Shift::Thread { .. }, _) => {
                        return Err(HostError::internal("distribute takes one thread id"))
                    }
                    _ => Vec::new(),
                };
                let shift = match &d.shift {
                    Shift::None => None,
                    Shift::Static(n) => Some(self.e.ctx.i128_type().const_int(*n as u64, true)),
                    Shift::Indexed(layout) => Some(self.at_coordinate(layout, &indices)?),
                    Shift::Thread { tile, .. } => Some(self.at_coordinate(tile, &coordinate)?),
                };
                let base = match shift {
                    Some(s) => self.e.b.build_int_add(view.base, s, "base")?,
                    None => view.base,
                };
                let extents = if view.extents.is_some() || d.edge {
                    Some(self.derived_extents(&view, &d, &indices, &coordinate)?)
                } else {
                    None
                };
                let swizzle = match derived {
                    LViewOp::Swizzle { swizzle } => Some(*swizzle),
                    _ => view.swizzle,
                };
                self.define_result(
                    id,
                    HostValue::LView(LViewRef {
                        layout: d.layout,
                        base,
                        extents,
                        swizzle,
                        ..view
                    }),
                )
            }
        }
    }

    /// The extents of the view `d` derived from `view`
    /// (`tile_ir::lview::derive::derived_extent` in code): per mode,
    /// `min(⌈max(extent − start, 0) / step⌉, size)` from the operand's
    /// extents (its mode sizes when it is not masked). Indices past `i64`
    /// are not a concern: an extent stays in `[0, size]`, and an index
    /// that large leaves an empty extent either way.
    fn derived_extents(
        &self,
        view: &LViewRef<'ctx>,
        d: &Derived,
        indices: &[Index<'ctx>],
        coordinate: &[Index<'ctx>],
    ) -> Result<Vec<IntValue<'ctx>>, HostError> {
        let maps = d
            .modes
            .as_ref()
            .ok_or_else(|| HostError::internal("a regrouping op on a masked layout view"))?;
        let operand: Vec<IntValue<'ctx>> = match &view.extents {
            Some(e) => e.clone(),
            None => view
                .layout
                .modes()
                .iter()
                .map(|m| self.i64(m.size()))
                .collect(),
        };
        let b = &self.e.b;
        let mut extents = Vec::with_capacity(maps.len());
        for (map, mode) in maps.iter().zip(d.layout.modes()) {
            let extent = *operand
                .get(map.source)
                .ok_or_else(|| HostError::internal("a mode map past the operand's modes"))?;
            let start = match map.start {
                Start::Static(n) => Index {
                    value: self.i64(n),
                    unsigned: false,
                },
                Start::Index { operand, scale } => {
                    let i = *indices
                        .get(operand)
                        .ok_or_else(|| HostError::internal("a mode map past the indices"))?;
                    Index {
                        value: b.build_int_mul(i.value, self.i64(scale), "start")?,
                        unsigned: i.unsigned,
                    }
                }
                Start::Thread { mode } => *coordinate
                    .get(mode)
                    .ok_or_else(|| HostError::internal("a mode map past the thread coordinate"))?,
            };
            // An unsigned start above `i64::MAX` is past every extent.
            let huge = if start.unsigned {
                b.build_int_compare(IntPredicate::SLT, start.value, self.i64(0), "huge")?
            } else {
                self.e.ctx.bool_type().const_zero()
            };
            let rest = b.build_int_sub(extent, start.value, "rest")?;
            let short = b.build_int_compare(IntPredicate::SLT, rest, self.i64(0), "short")?;
            let none = b.build_or(huge, short, "none")?;
            let rest = b
                .build_select(none, self.i64(0), rest, "rest")?
                .into_int_value();
            let rest = if map.step > 1 {
                let up = b.build_int_add(rest, self.i64(map.step - 1), "up")?;
                b.build_int_unsigned_div(up, self.i64(map.step), "rest")?
            } else {
                rest
            };
            let size = self.i64(mode.size());
            let over = b.build_int_compare(IntPredicate::SGT, rest, size, "over")?;
            extents.push(b.build_select(over, size, rest, "extent")?.into_int_value());
        }
        Ok(extents)
    }

    /// The layout view `v` names.
    fn view_of(&self, v: Option<Value>) -> Result<LViewRef<'ctx>, HostError> {
        match v.map(|v| self.value(v)).transpose()? {
            Some(HostValue::LView(view)) => Ok(view),
            _ => Err(HostError::internal("expected a layout view operand")),
        }
    }

    /// The integer scalar `v` as an [`Index`].
    fn index(&self, v: Value) -> Result<Index<'ctx>, HostError> {
        let d = self.func.ty(v).dtype();
        let x = self.scalar(v)?.into_int_value();
        let i64t = self.e.ctx.i64_type();
        let value = if d.bits() == 64 {
            x
        } else if d.is_signed_int() {
            self.e.b.build_int_s_extend(x, i64t, "index")?
        } else {
            self.e.b.build_int_z_extend(x, i64t, "index")?
        };
        Ok(Index {
            value,
            unsigned: !d.is_signed_int(),
        })
    }

    /// Euclidean quotient and remainder of `x` by the positive constant `s`.
    fn div_rem(&self, x: Index<'ctx>, s: i64) -> Result<(Index<'ctx>, Index<'ctx>), HostError> {
        let b = &self.e.b;
        let d = self.i64(s);
        let (q, r) = if x.unsigned {
            (
                b.build_int_unsigned_div(x.value, d, "q")?,
                b.build_int_unsigned_rem(x.value, d, "r")?,
            )
        } else {
            let q = b.build_int_signed_div(x.value, d, "q")?;
            let r = b.build_int_signed_rem(x.value, d, "r")?;
            let negative = b.build_int_compare(IntPredicate::SLT, r, self.i64(0), "neg")?;
            let up = b.build_int_add(r, d, "r")?;
            let down = b.build_int_sub(q, self.i64(1), "q")?;
            (
                b.build_select(negative, down, q, "q")?.into_int_value(),
                b.build_select(negative, up, r, "r")?.into_int_value(),
            )
        };
        let wrap = |value| Index {
            value,
            unsigned: x.unsigned,
        };
        Ok((wrap(q), wrap(r)))
    }

    /// `layout` at the coordinate of one 1-D index per mode (each split
    /// colexicographically over the mode's leaves, the last leaf taking the
    /// rest), as an `i128`.
    fn at_coordinate(
        &self,
        layout: &Layout,
        coordinate: &[Index<'ctx>],
    ) -> Result<IntValue<'ctx>, HostError> {
        let modes = layout.modes();
        if modes.len() != coordinate.len() {
            return Err(HostError::internal(format!(
                "{} index(es) for the {} mode(s) of {layout}",
                coordinate.len(),
                modes.len()
            )));
        }
        let i128t = self.e.ctx.i128_type();
        let mut total = i128t.const_zero();
        for (mode, &idx) in modes.iter().zip(coordinate) {
            let (shape, stride) = (mode.shape().leaves(), mode.stride().leaves());
            let mut rest = idx;
            for (l, (&s, &d)) in shape.iter().zip(&stride).enumerate() {
                let c = if l + 1 == shape.len() {
                    rest
                } else {
                    let (q, r) = self.div_rem(rest, s.max(1))?;
                    rest = q;
                    r
                };
                let b = &self.e.b;
                let wide = if c.unsigned {
                    b.build_int_z_extend(c.value, i128t, "c")?
                } else {
                    b.build_int_s_extend(c.value, i128t, "c")?
                };
                let term = b.build_int_mul(wide, i128t.const_int(d as u64, true), "term")?;
                total = b.build_int_add(total, term, "at")?;
            }
        }
        Ok(total)
    }

    /// The offset (`i128`) of tile element `j` (row-major counters) of `view`.
    fn view_offset(
        &self,
        view: &LViewRef<'ctx>,
        j: &[IntValue<'ctx>],
    ) -> Result<IntValue<'ctx>, HostError> {
        let coordinate: Vec<Index<'ctx>> = j
            .iter()
            .map(|&value| Index {
                value,
                unsigned: true,
            })
            .collect();
        let within = self.at_coordinate(&view.layout, &coordinate)?;
        let at = self.e.b.build_int_add(view.base, within, "offset")?;
        let Some(sw) = view.swizzle else {
            return Ok(at);
        };
        // `at ^ ((at & yyy) >> shift)`; a negative offset stays negative.
        let b = &self.e.b;
        let i128t = self.e.ctx.i128_type();
        let yyy = i128t.const_int(sw.yyy_mask() as u64, false);
        let by = i128t.const_int(u64::from(sw.shift().unsigned_abs()), false);
        let high = b.build_and(at, yyy, "yyy")?;
        let moved = if sw.shift() >= 0 {
            b.build_right_shift(high, by, false, "moved")?
        } else {
            b.build_left_shift(high, by, "moved")?
        };
        Ok(b.build_xor(at, moved, "swizzled")?)
    }

    /// The element space of `view`'s tensor, `1 + Σ (e_k − 1) · max(s_k, 0)`
    /// (0 when an extent is 0), as an `i128`.
    fn element_space(&self, view: &LViewRef<'ctx>) -> Result<IntValue<'ctx>, HostError> {
        let t = self
            .tensors
            .get(&view.tensor)
            .cloned()
            .ok_or_else(|| HostError::internal("an unknown tensor parameter"))?;
        let b = &self.e.b;
        let i128t = self.e.ctx.i128_type();
        let mut space = i128t.const_int(1, false);
        let mut empty = self.e.ctx.bool_type().const_zero();
        for (&e, &s) in t.extents.iter().zip(&t.strides) {
            let zero = b.build_int_compare(IntPredicate::EQ, e, self.i64(0), "zero")?;
            empty = b.build_or(empty, zero, "empty")?;
            let reach = b.build_int_sub(e, self.i64(1), "reach")?;
            let positive = b.build_int_compare(IntPredicate::SGT, s, self.i64(0), "pos")?;
            let s = b
                .build_select(positive, s, self.i64(0), "s")?
                .into_int_value();
            let term = b.build_int_mul(
                b.build_int_s_extend(reach, i128t, "r")?,
                b.build_int_s_extend(s, i128t, "s")?,
                "term",
            )?;
            space = b.build_int_add(space, term, "space")?;
        }
        Ok(b.build_select(empty, i128t.const_zero(), space, "space")?
            .into_int_value())
    }

    /// Element `at` (from element zero) of tensor parameter `tensor`.
    fn read_element(
        &self,
        tensor: usize,
        dtype: DType,
        at: IntValue<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, HostError> {
        let t = self
            .tensors
            .get(&tensor)
            .ok_or_else(|| HostError::internal("an unknown tensor parameter"))?;
        self.read_global(t.base, dtype, at)
    }

    /// Writes `v` to element `at` (from element zero) of tensor `tensor`.
    fn write_element(
        &self,
        tensor: usize,
        dtype: DType,
        at: IntValue<'ctx>,
        v: BasicValueEnum<'ctx>,
    ) -> Result<(), HostError> {
        let t = self
            .tensors
            .get(&tensor)
            .ok_or_else(|| HostError::internal("an unknown tensor parameter"))?;
        self.write_global(t.base, dtype, at, v)
    }
}

/// Whether the tile of `layout` (of `shape`) has distinct offsets.
fn injective(layout: &Layout, shape: &[usize]) -> bool {
    let tables: Vec<Vec<i64>> = layout
        .modes()
        .iter()
        .zip(shape)
        .map(|(m, &n)| (0..n as i64).map(|j| m.call(j)).collect())
        .collect();
    let mut offsets = vec![0i64];
    for table in &tables {
        offsets = offsets
            .iter()
            .flat_map(|&o| table.iter().map(move |&t| o + t))
            .collect();
    }
    offsets.sort_unstable();
    offsets.windows(2).all(|w| w[0] != w[1])
}

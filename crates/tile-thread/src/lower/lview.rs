//! Layout views: a view is its static CuTe layout and a runtime base offset
//! (an `i64` register, uniform across the block). View-deriving ops take
//! their layout from `tile_ir::lview::derive` — the function that types them
//! and gives them meaning in the interpreter — and move the base by its
//! [`Shift`], evaluated on the index registers with exact Euclidean
//! division. A load or store gives each register of the tile's layout the
//! offset `base + L(c)` of its coordinate `c`, masked (or, unmasked,
//! bounds-checked) by the tensor's element space
//! `[0, 1 + Σ (e_k − 1)·max(s_k, 0))` and, for a masked view (an edge
//! tile), by its runtime extent along each mode, `c_k < extent_k`. A
//! swizzled view's offsets are `swizzle(base + L(c))`, computed with a mask,
//! a shift and an exclusive or. Accesses are scalar, unless the
//! layout's offsets are consecutive where a thread holds consecutive
//! elements ([`vector_width`]): then they are vectors of up to 16 bytes,
//! behind the uniform runtime test that the view's base and the tensor's
//! element zero are aligned to the vector, with the scalar accesses as the
//! other branch.

use super::{Lowered, Lowerer};
use crate::lower::LowerError;
use crate::program::{CheckKind, Reg, ThreadOpKind};
use std::collections::HashSet;
use tile_ir::layout::{Layout, Swizzle};
use tile_ir::lview::derive::{derive, Derived, Shift, Start};
use tile_ir::lview::LViewOp;
use tile_ir::{BinaryOp, CmpPred, DType, OpId, Scalar};

impl Lowerer<'_> {
    /// Lowers one layout-view op.
    pub(super) fn lview(&mut self, id: OpId, op: &LViewOp) -> Result<(), LowerError> {
        let func = self.func;
        let operands = func.op(id).operands.clone();
        match op {
            LViewOp::Make { layout } => {
                let tensor = *operands
                    .first()
                    .ok_or_else(|| self.invalid(id, "no tensor"))?;
                let Lowered::Tensor { param } = self.get(id, tensor)? else {
                    return Err(self.invalid(id, "the operand is not a tensor parameter"));
                };
                let base = self.constant(Scalar::I64(0));
                self.bind(
                    id,
                    Lowered::LView {
                        param,
                        layout: layout.clone(),
                        base,
                        extents: None,
                        swizzle: None,
                    },
                )
            }
            LViewOp::Load | LViewOp::LoadMasked { .. } => {
                let view = self.view(id, operands.first().copied())?;
                let ViewRegs {
                    param,
                    ref layout,
                    base,
                    ..
                } = view;
                let result = *func
                    .op(id)
                    .results
                    .first()
                    .ok_or_else(|| self.invalid(id, "no result"))?;
                let dtype = func.ty(result).dtype();
                let tile = self.layout_of(id, result)?;
                let masked = matches!(op, LViewOp::LoadMasked { .. });
                let (addresses, masks) = self.lview_access(id, &view, &tile, masked, false)?;
                let other = match op {
                    LViewOp::LoadMasked { padding } => padding.value(dtype).ok_or_else(|| {
                        self.invalid(id, format!("padding {padding:?} for {dtype}"))
                    })?,
                    _ => Scalar::zero(dtype),
                };
                let other = self.constant(other);
                let note = self.lview_note(masked);
                let width = vector_width(layout, view.swizzle, &tile, dtype);
                let aligned = (width > 1).then(|| self.lview_aligned(param, base, width, dtype));
                let mut regs = Vec::new();
                for g in 0..addresses.len() / width {
                    let span = g * width..(g + 1) * width;
                    let mut operands = self.lview_addressing(
                        &addresses[span.clone()],
                        &masks[span.clone()],
                        aligned,
                    );
                    operands.extend(&masks[span]);
                    operands.extend(vec![other; width]);
                    let kind = ThreadOpKind::LoadGlobal {
                        param,
                        width: width as u8,
                    };
                    let load = self.emit_op(kind, operands, &vec![dtype; width]);
                    self.program.notes.insert(load, note.clone());
                    regs.extend(self.program.ops[load].results.clone());
                }
                self.bind(id, Lowered::Tile { layout: tile, regs })
            }
            LViewOp::Store | LViewOp::StoreMasked => {
                let [value, view] = operands.as_slice() else {
                    return Err(self.invalid(id, "a store takes a tile and a view"));
                };
                let view = self.view(id, Some(*view))?;
                let ViewRegs {
                    param,
                    ref layout,
                    base,
                    ..
                } = view;
                if !injective(layout) {
                    return Err(LowerError::Unsupported {
                        op: format!(
                            "{} (a store through {layout}, which sends two elements to one offset)",
                            self.describe(id)
                        ),
                    });
                }
                let (tile, regs) = self.tile(id, *value)?;
                let masked = matches!(op, LViewOp::StoreMasked);
                let (addresses, masks) = self.lview_access(id, &view, &tile, masked, true)?;
                let note = self.lview_note(masked);
                let dtype = func.ty(*value).dtype();
                let width = vector_width(layout, view.swizzle, &tile, dtype);
                let aligned = (width > 1).then(|| self.lview_aligned(param, base, width, dtype));
                for g in 0..addresses.len() / width {
                    let span = g * width..(g + 1) * width;
                    let mut operands = self.lview_addressing(
                        &addresses[span.clone()],
                        &masks[span.clone()],
                        aligned,
                    );
                    operands.extend(&regs[span.clone()]);
                    operands.extend(&masks[span]);
                    let kind = ThreadOpKind::StoreGlobal {
                        param,
                        width: width as u8,
                    };
                    let store = self.emit_op(kind, operands, &[]);
                    self.program.notes.insert(store, note.clone());
                }
                Ok(())
            }
            derived_op => {
                let view = self.view(id, operands.first().copied())?;
                let derived = derive(derived_op, &view.layout).map_err(|e| self.invalid(id, e))?;
                let mut indices = Vec::new();
                for &v in operands.get(1..).unwrap_or_default() {
                    let r = self.scalar(id, v)?;
                    indices.push(self.cast(r, DType::I64));
                }
                let coordinate = match (&derived.shift, indices.as_slice()) {
                    (Shift::Thread { threads, .. }, &[tid]) => {
                        let mut coordinate = Vec::new();
                        for m in threads.modes() {
                            let n = m.shape().as_int().unwrap_or(1).max(1);
                            let d = m.stride().as_int().unwrap_or(1).max(1);
                            let (q, _) = self.div_euclid(tid, d);
                            let (_, c) = self.div_euclid(q, n);
                            coordinate.push(c);
                        }
                        coordinate
                    }
                    (Shift::Thread { .. }, _) => {
                        return Err(self.invalid(id, "distribute takes one thread id"))
                    }
                    _ => Vec::new(),
                };
                let shift = match &derived.shift {
                    Shift::None => None,
                    Shift::Static(n) => Some(self.constant(Scalar::I64(*n))),
                    Shift::Indexed(l) => Some(self.at_coordinate(id, l, &indices)?),
                    Shift::Thread { tile, .. } => {
                        Some(self.at_coordinate(id, tile, &coordinate)?)
                    }
                };
                let base = match shift {
                    Some(s) => self.binary(BinaryOp::Add, view.base, s),
                    None => view.base,
                };
                let extents = if view.extents.is_some() || derived.edge {
                    Some(self.derived_extents(id, &view, &derived, &indices, &coordinate)?)
                } else {
                    None
                };
                let swizzle = match derived_op {
                    LViewOp::Swizzle { swizzle } => Some(*swizzle),
                    _ => view.swizzle,
                };
                self.bind(
                    id,
                    Lowered::LView {
                        param: view.param,
                        layout: derived.layout,
                        base,
                        extents,
                        swizzle,
                    },
                )
            }
        }
    }

    /// The layout-view operand `v`.
    fn view(&mut self, id: OpId, v: Option<tile_ir::Value>) -> Result<ViewRegs, LowerError> {
        let v = v.ok_or_else(|| self.invalid(id, "no view operand"))?;
        match self.get(id, v)? {
            Lowered::LView {
                param,
                layout,
                base,
                extents,
                swizzle,
            } => Ok(ViewRegs {
                param,
                layout,
                base,
                extents,
                swizzle,
            }),
            _ => Err(self.invalid(id, "the operand is not a layout view")),
        }
    }

    /// The extents of the view `derived` from `view`
    /// (`tile_ir::lview::derive::derived_extent` on registers): per mode,
    /// `min(⌈max(extent − start, 0) / step⌉, size)`, from the operand's
    /// extents (its mode sizes when it is not masked).
    fn derived_extents(
        &mut self,
        id: OpId,
        view: &ViewRegs,
        derived: &Derived,
        indices: &[Reg],
        coordinate: &[Reg],
    ) -> Result<Vec<Reg>, LowerError> {
        let maps = derived
            .modes
            .as_ref()
            .ok_or_else(|| self.invalid(id, "a regrouping op on a masked layout view"))?;
        let operand = match &view.extents {
            Some(e) => e.clone(),
            None => view
                .layout
                .modes()
                .iter()
                .map(|m| self.constant(Scalar::I64(m.size())))
                .collect(),
        };
        let zero = self.constant(Scalar::I64(0));
        let mut extents = Vec::with_capacity(maps.len());
        for (map, mode) in maps.iter().zip(derived.layout.modes()) {
            let extent = *operand
                .get(map.source)
                .ok_or_else(|| self.invalid(id, "a mode map past the operand's modes"))?;
            let start = match map.start {
                Start::Static(n) => self.constant(Scalar::I64(n)),
                Start::Index { operand, scale } => {
                    let i = *indices
                        .get(operand)
                        .ok_or_else(|| self.invalid(id, "a mode map past the indices"))?;
                    let scale = self.constant(Scalar::I64(scale));
                    self.binary(BinaryOp::Mul, i, scale)
                }
                Start::Thread { mode } => *coordinate
                    .get(mode)
                    .ok_or_else(|| self.invalid(id, "a mode map past the thread coordinate"))?,
            };
            let rest = self.binary(BinaryOp::Sub, extent, start);
            let rest = self.binary(BinaryOp::Max, rest, zero);
            let rest = if map.step > 1 {
                let up = self.constant(Scalar::I64(map.step - 1));
                let step = self.constant(Scalar::I64(map.step));
                let rest = self.binary(BinaryOp::Add, rest, up);
                self.binary(BinaryOp::Div, rest, step)
            } else {
                rest
            };
            let size = self.constant(Scalar::I64(mode.size()));
            extents.push(self.binary(BinaryOp::Min, rest, size));
        }
        Ok(extents)
    }

    /// `(x div d, x mod d)`, Euclidean, for a constant `d > 0` (`x` i64).
    fn div_euclid(&mut self, x: Reg, d: i64) -> (Reg, Reg) {
        if d == 1 {
            let zero = self.constant(Scalar::I64(0));
            return (x, zero);
        }
        let dc = self.constant(Scalar::I64(d));
        let zero = self.constant(Scalar::I64(0));
        let r = self.binary(BinaryOp::Rem, x, dc);
        let negative = self.emit(ThreadOpKind::Cmp(CmpPred::Lt), vec![r, zero], DType::Bool);
        let lifted = self.binary(BinaryOp::Add, r, dc);
        let r = self.select(negative, lifted, r);
        let exact = self.binary(BinaryOp::Sub, x, r);
        let q = self.binary(BinaryOp::Div, exact, dc);
        (q, r)
    }

    /// `layout((c0, c1, ...))` for one `i64` index register per top-level
    /// mode: colexicographic within a mode, the last leaf taking the rest.
    fn at_coordinate(
        &mut self,
        id: OpId,
        layout: &Layout,
        coordinate: &[Reg],
    ) -> Result<Reg, LowerError> {
        let modes = layout.modes();
        if modes.len() != coordinate.len() {
            return Err(self.invalid(
                id,
                format!("{} index(es) for the modes of {layout}", coordinate.len()),
            ));
        }
        let mut total = self.constant(Scalar::I64(0));
        for (mode, &c) in modes.iter().zip(coordinate) {
            let shape = mode.shape().leaves();
            let stride = mode.stride().leaves();
            let mut rest = c;
            for (l, (&s, &d)) in shape.iter().zip(&stride).enumerate() {
                let part = if l + 1 == shape.len() {
                    rest
                } else {
                    let (q, r) = self.div_euclid(rest, s.max(1));
                    rest = q;
                    r
                };
                if d != 0 {
                    let dc = self.constant(Scalar::I64(d));
                    let term = self.binary(BinaryOp::Mul, part, dc);
                    total = self.binary(BinaryOp::Add, total, term);
                }
            }
        }
        Ok(total)
    }

    /// The size of tensor `param`'s element space (hoisted): 0 when an
    /// extent is 0, else `1 + Σ (e_k − 1)·max(s_k, 0)`.
    fn element_space(&mut self, param: usize) -> Result<Reg, LowerError> {
        let rank = match self.program.params.get(param).and_then(|p| p.kind.tensor()) {
            Some(t) => t.rank,
            _ => {
                return Err(LowerError::Invalid {
                    op: "a layout view".into(),
                    reason: format!("parameter {param} is not a tensor"),
                })
            }
        };
        let zero = self.constant(Scalar::I64(0));
        let one = self.constant(Scalar::I64(1));
        let mut space = one;
        let mut empty = self.constant(Scalar::Bool(false));
        for axis in 0..rank {
            let e = self.tensor_meta(param, axis, false);
            let s = self.tensor_meta(param, axis, true);
            let is_empty = self.hoist(ThreadOpKind::Cmp(CmpPred::Eq), vec![e, zero], DType::Bool);
            empty = self.hoist(
                ThreadOpKind::Binary(BinaryOp::Or),
                vec![empty, is_empty],
                DType::Bool,
            );
            let reach = self.hoist(
                ThreadOpKind::Binary(BinaryOp::Sub),
                vec![e, one],
                DType::I64,
            );
            let positive = self.hoist(
                ThreadOpKind::Binary(BinaryOp::Max),
                vec![s, zero],
                DType::I64,
            );
            let term = self.hoist(
                ThreadOpKind::Binary(BinaryOp::Mul),
                vec![reach, positive],
                DType::I64,
            );
            space = self.hoist(
                ThreadOpKind::Binary(BinaryOp::Add),
                vec![space, term],
                DType::I64,
            );
        }
        Ok(self.hoist(ThreadOpKind::Select, vec![empty, zero, space], DType::I64))
    }

    /// The leading operands of an access of the elements at `addresses`
    /// under `masks`: the first's address, and for a vector access the
    /// condition that it is `aligned` and every mask holds, and every
    /// element's address (consecutive, by [`vector_width`]).
    fn lview_addressing(
        &mut self,
        addresses: &[Reg],
        masks: &[Reg],
        aligned: Option<Reg>,
    ) -> Vec<Reg> {
        let mut operands = vec![addresses[0]];
        if let Some(aligned) = aligned {
            let vector = masks.iter().fold(aligned, |all, &m| self.and(all, m));
            operands.push(vector);
            operands.extend(addresses);
        }
        operands
    }

    /// The uniform test that `width`-element vectors of `dtype` at offsets
    /// `base + L(c)` are aligned, where [`vector_width`] has found every
    /// vector's `L(c)` a multiple of `width`: `base` is a multiple of
    /// `width` and the tensor's element zero of `width` elements' bytes.
    fn lview_aligned(&mut self, param: usize, base: Reg, width: usize, dtype: DType) -> Reg {
        let zero = self.constant(Scalar::I64(0));
        let w = self.constant(Scalar::I64(width as i64));
        let bytes = self.constant(Scalar::I64((width * dtype.size_bytes()) as i64));
        let align = self.hoist(ThreadOpKind::TensorAlign { param }, vec![], DType::I64);
        let rem = self.hoist(
            ThreadOpKind::Binary(BinaryOp::Rem),
            vec![align, bytes],
            DType::I64,
        );
        let zero_aligned = self.hoist(ThreadOpKind::Cmp(CmpPred::Eq), vec![rem, zero], DType::Bool);
        let shift = self.binary(BinaryOp::Rem, base, w);
        let base_aligned = self.emit(
            ThreadOpKind::Cmp(CmpPred::Eq),
            vec![shift, zero],
            DType::Bool,
        );
        self.and(zero_aligned, base_aligned)
    }

    /// The note of an access through a layout view (no proofs: its offsets
    /// are checked against the tensor's element space).
    fn lview_note(&self, masked: bool) -> String {
        super::access::bounds_note(&[false], masked, self.bounds_checks)
    }

    /// The address and mask of every register of `tile` for an access
    /// through `view`: stores mask by the owning copy, loads by liveness,
    /// both by the element space and the view's extents; unmasked accesses
    /// get one bounds check (its index operand is the view's base).
    fn lview_access(
        &mut self,
        id: OpId,
        view: &ViewRegs,
        tile: &super::DistLayout,
        masked: bool,
        write: bool,
    ) -> Result<(Vec<Reg>, Vec<Reg>), LowerError> {
        let ViewRegs {
            param,
            ref layout,
            base,
            ref extents,
            swizzle,
        } = *view;
        let coords = self.coords(tile);
        let space = self.element_space(param)?;
        let zero = self.constant(Scalar::I64(0));
        let truth = self.constant(Scalar::Bool(true));
        let mut addresses = Vec::new();
        let mut masks = Vec::new();
        let mut all_ok = truth;
        for v in 0..tile.registers() {
            let c: Vec<Reg> = coords.axes[v]
                .iter()
                .map(|&a| self.hoisted_cast(a, DType::I64))
                .collect();
            let local = self.at_coordinate(id, layout, &c)?;
            let at = self.binary(BinaryOp::Add, base, local);
            let at = self.swizzled(at, swizzle);
            let above = self.emit(ThreadOpKind::Cmp(CmpPred::Ge), vec![at, zero], DType::Bool);
            let below = self.emit(ThreadOpKind::Cmp(CmpPred::Lt), vec![at, space], DType::Bool);
            let mut inside = self.and(above, below);
            for (&j, &extent) in c.iter().zip(extents.iter().flatten()) {
                let within =
                    self.emit(ThreadOpKind::Cmp(CmpPred::Lt), vec![j, extent], DType::Bool);
                inside = self.and(inside, within);
            }
            let live = coords.live[v];
            if !masked && self.bounds_checks {
                let ok = if self.is_true(live) {
                    inside
                } else {
                    self.select(live, inside, truth)
                };
                all_ok = self.and(all_ok, ok);
            }
            let holder = if write { coords.owner[v] } else { live };
            addresses.push(at);
            masks.push(self.and(holder, inside));
        }
        if !masked && self.bounds_checks {
            let op = self.check_site(id);
            self.emit_op(
                ThreadOpKind::Check {
                    kind: CheckKind::Bounds,
                    op,
                },
                vec![all_ok, base],
                &[],
            );
        }
        Ok((addresses, masks))
    }
}

/// A layout-view operand's registers.
struct ViewRegs {
    /// The viewed tensor parameter.
    param: usize,
    /// The view's layout.
    layout: Layout,
    /// Its base offset (`i64`).
    base: Reg,
    /// A masked view's extent per mode (`i64`).
    extents: Option<Vec<Reg>>,
    /// Its swizzle.
    swizzle: Option<Swizzle>,
}

/// The elements per vector of an access of `dtype` through `layout` with
/// the tile layout `tile`: the largest `w ≤ 16 bytes / size` dividing the
/// run of consecutive elements each thread holds along the innermost axis
/// and that axis' extent, such that the innermost mode maps `j + k` to
/// `L(j) + k` for every `j` that is a multiple of `w` and `k < w`, and
/// every vector's first offset (each mode's offsets at those `j`) is a
/// multiple of `w`, and, under a swizzle, `w ≤ 2^base` (the swizzle leaves
/// the low `base` bits alone, so an aligned run of `w` stays one); 1 when
/// none is.
fn vector_width(
    layout: &Layout,
    swizzle: Option<Swizzle>,
    tile: &super::DistLayout,
    dtype: DType,
) -> usize {
    let modes = layout.modes();
    let (Some(inner), Some(&run), Some(&extent)) =
        (modes.last(), tile.size_per_thread.last(), tile.shape.last())
    else {
        return 1;
    };
    if modes.len() != tile.shape.len() || extent as i64 != inner.size() {
        return 1;
    }
    let fits = |w: usize| {
        let w = w as i64;
        let consecutive = (0..extent as i64).step_by(w as usize).all(|j| {
            let start = inner.call(j);
            start % w == 0 && (1..w).all(|k| inner.call(j + k) == start + k)
        });
        consecutive
            && modes[..modes.len() - 1]
                .iter()
                .all(|m| (0..m.size()).all(|c| m.call(c) % w == 0))
    };
    let unswizzled = swizzle.map_or(usize::MAX, |sw| 1usize << sw.base().min(16));
    let mut width = run.min(16 / dtype.size_bytes().max(1)).min(unswizzled);
    while width > 1 && (!run.is_multiple_of(width) || !extent.is_multiple_of(width) || !fits(width))
    {
        width -= 1;
    }
    width.max(1)
}

/// Whether `layout` sends its tile's elements to distinct offsets.
fn injective(layout: &Layout) -> bool {
    let size = layout.size();
    let mut seen = HashSet::new();
    (0..size).all(|i| seen.insert(layout.call(i)))
}

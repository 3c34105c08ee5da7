//! Which elements of a load or store are inside the tensor: for the
//! partition at index `(i_0, …)` of a view, each register `v` with tile
//! coordinate `c_v` gets its position along each axis and its mask,
//!
//! ```text
//! g_d     = i_d * tile[d] + c_v[d]
//! inside  = ∧_d 0 ≤ i_d ∧ g_d < dim[d]
//! mask    = live_v ∧ inside                        (masked or checked)
//! ```
//!
//! A load tests an axis in 32 bits ([`Bound::Narrow`]): every extent is
//! below 2³¹, so once `i_d < ⌈dim[d] / tile[d]⌉` (one 64-bit compare an
//! access) each `g_d` is exact as a `u32`; a store keeps 64-bit positions
//! ([`Bound::Wide`]). An axis whose partition index the analysis of
//! `proofs.rs` proves in bounds (`0 ≤ i_d` and `i_d·tile[d] + tile[d] − 1 <
//! dim[d]` on every execution) contributes nothing to `inside`. An unmasked
//! access with unproven axes gets, in safe mode, a `bounds_check` of
//! `∧_v (live_v ⇒ inside_v)` before the access, whose mask also includes
//! `inside`: a failing check raises the error and touches no memory. With
//! the checks off ([`super::LowerOptions::without_bounds_checks`], the `unsafe`
//! mode) an unmasked access is trusted and only masked by `live`. Every
//! access carries a note saying which of these applies (see
//! [`bounds_note`]).

use super::window::Window;
use super::{LowerError, Lowered, Lowerer};
use crate::layout_assign::DistLayout;
use crate::program::{CheckKind, Reg, ThreadOpKind};
use tile_ir::{BinaryOp, CmpPred, DType, OpId, Scalar, Value};

/// The per-register positions and masks of one access.
pub(super) struct Access {
    pub(super) param: usize,
    /// The view's window of the tensor, if it has one.
    pub(super) window: Option<Window>,
    /// Per register, its element's index along each axis of the tensor
    /// (`i64`); [`Lowerer::address`] makes the offset, where it is needed.
    pub(super) positions: Vec<Vec<Reg>>,
    /// Per axis, the index of the partition's first element (`i64`), and
    /// per register its coordinate in the partition: a position is their
    /// sum.
    pub(super) origins: Vec<Reg>,
    pub(super) coordinates: Vec<Vec<Reg>>,
    /// Where the innermost axis's constants are immediate offsets (see
    /// [`Lowerer::address`]): the thread's coordinate along it (`i64`) and
    /// per register its constant offset from it.
    pub(super) inner_split: Option<(Reg, Vec<i64>)>,
    pub(super) masks: Vec<Reg>,
    /// Per register, the part of its mask that keeps it inside the
    /// tensor, and the part that says its thread accesses it (the mask is
    /// their conjunction).
    pub(super) inside: Vec<Reg>,
    pub(super) holders: Vec<Reg>,
    /// How the access is kept in bounds, for the text form.
    pub(super) note: String,
}

impl Lowerer<'_> {
    /// Addresses and masks of an access through `operands` = view, indices.
    /// A masked access masks elements outside the tensor; an unmasked one is
    /// checked (see [`ThreadOpKind::Check`]) unless checks are off.
    pub(super) fn access(
        &mut self,
        id: OpId,
        operands: &[Value],
        layout: &DistLayout,
        masked: bool,
        write: bool,
    ) -> Result<Access, LowerError> {
        let (view, indices) = operands
            .split_first()
            .ok_or_else(|| self.invalid(id, "no view operand"))?;
        let Lowered::PartitionView {
            param,
            tile,
            window,
        } = self.get(id, *view)?
        else {
            return Err(self.invalid(id, "the operand is not a partition view"));
        };
        if indices.len() != tile.rank() || tile.dims() != layout.shape.as_slice() {
            return Err(self.invalid(id, "indices or tile do not match the view"));
        }
        let proven: Vec<bool> = (0..indices.len())
            .map(|d| self.proofs.proven(id, d))
            .collect();
        let bounded = masked || self.bounds_checks;
        // An unmasked access with an unproven axis is checked (in safe mode).
        let checked = bounded && !masked && proven.contains(&false);
        let coords = self.coords(layout);
        let zero = self.constant(Scalar::I64(0));
        let truth = self.constant(Scalar::Bool(true));
        let mut index_regs = Vec::new();
        let mut origins = Vec::new();
        let mut index_ok = truth;
        // How each axis is kept in bounds.
        let mut narrow: Vec<Bound> = Vec::new();
        for (d, &i) in indices.iter().enumerate() {
            let i = self.scalar(id, i)?;
            let i = self.cast(i, DType::I64);
            index_regs.push(i);
            let size = self.constant(Scalar::I64(tile.dims()[d] as i64));
            let origin = self.binary(BinaryOp::Mul, i, size);
            origins.push(origin);
            let bound = if !bounded || proven[d] {
                Bound::None
            } else {
                let ok = self.emit(ThreadOpKind::Cmp(CmpPred::Ge), vec![i, zero], DType::Bool);
                index_ok = self.and(index_ok, ok);
                let extent = self.view_extent(param, window.as_ref(), d);
                if write {
                    Bound::Wide(extent)
                } else {
                    let tile = (size, tile.dims()[d] as i64);
                    self.narrow_bound(i, origin, extent, tile, &mut index_ok)
                }
            };
            narrow.push(bound);
        }
        let mut positions = Vec::new();
        let mut coordinates = Vec::new();
        let mut masks = Vec::new();
        let mut insides = Vec::new();
        let mut holders = Vec::new();
        let mut all_ok = truth;
        for v in 0..layout.registers() {
            let mut position = Vec::new();
            let mut coordinate = Vec::new();
            let mut inside = index_ok;
            for (d, &origin64) in origins.iter().enumerate() {
                let c = self.hoisted_cast(coords.axes[v][d], DType::I64);
                coordinate.push(c);
                let g = match narrow[d] {
                    // Exact in 32 bits wherever the register is inside;
                    // its address widens it.
                    Bound::Narrow(origin, extent) => {
                        let c32 = self.hoisted_cast(coords.axes[v][d], DType::U32);
                        let g = self.binary(BinaryOp::Add, origin, c32);
                        let lt =
                            self.emit(ThreadOpKind::Cmp(CmpPred::Lt), vec![g, extent], DType::Bool);
                        inside = self.and(inside, lt);
                        self.cast(g, DType::I64)
                    }
                    Bound::Wide(extent) => {
                        let g = self.binary(BinaryOp::Add, origin64, c);
                        let lt =
                            self.emit(ThreadOpKind::Cmp(CmpPred::Lt), vec![g, extent], DType::Bool);
                        inside = self.and(inside, lt);
                        g
                    }
                    Bound::None => self.binary(BinaryOp::Add, origin64, c),
                };
                position.push(g);
            }
            let live = coords.live[v];
            if checked {
                // A dead register never fails the check.
                let ok = if self.is_true(live) {
                    inside
                } else {
                    self.select(live, inside, truth)
                };
                all_ok = self.and(all_ok, ok);
            }
            positions.push(position);
            coordinates.push(coordinate);
            // Every copy loads; only the owner of an element stores it.
            let holder = if write { coords.owner[v] } else { live };
            masks.push(self.and(holder, inside));
            insides.push(inside);
            holders.push(holder);
        }
        if checked {
            self.bounds_check(id, all_ok, &index_regs);
        }
        let note = bounds_note(&proven, masked, bounded);
        // Where masked accesses are branches (AMD), the innermost axis's
        // constants become immediate offsets (`Lowerer::address`).
        let immediates = !self.tensor_cores.predicated_loads();
        let inner = layout.shape.len().checked_sub(1);
        let inner_split = (coords.split.zip(inner))
            .filter(|_| immediates)
            .map(|(split, inner)| {
                let thread = self.hoisted_cast(split.thread[inner], DType::I64);
                (thread, split.offsets.iter().map(|k| k[inner]).collect())
            });
        Ok(Access {
            param,
            window,
            positions,
            origins,
            coordinates,
            inner_split,
            masks,
            inside: insides,
            holders,
            note,
        })
    }

    /// The bounds check of access `id`: the program fails, naming the op and
    /// its partition index `indices`, unless `all_ok` holds.
    pub(super) fn bounds_check(&mut self, id: OpId, all_ok: Reg, indices: &[Reg]) {
        let mut operands = vec![all_ok];
        operands.extend(indices);
        let op = self.check_site(id);
        let kind = ThreadOpKind::Check {
            kind: CheckKind::Bounds,
            op,
        };
        self.emit_op(kind, operands, &[]);
    }

    /// A load's bound along one axis in 32 bits: with the view's extent
    /// `E < 2³¹` (every extent fits `i32`, checked at launch) and the tile's
    /// `T` (`size`), the index `i` is tested once against `⌈E / T⌉` (into
    /// `index_ok`): past it no element of the partition is inside the view,
    /// and below it `i·T < E`, so every position `i·T + c` (`c < T`) is
    /// exact in 32 unsigned bits and each register's test is a 32-bit add and
    /// compare. Stores keep 64-bit positions ([`Bound::Wide`]): an epilogue's
    /// store runs once after its loop, where the 32-bit positions only
    /// lengthened what ptxas keeps across the loop (docs/lowering.md, "Loads
    /// and stores").
    fn narrow_bound(
        &mut self,
        i: Reg,
        origin: Reg,
        extent: Reg,
        (size, tile): (Reg, i64),
        index_ok: &mut Reg,
    ) -> Bound {
        let last = self.constant(Scalar::I64(tile - 1));
        let rounded = self.binary(BinaryOp::Add, extent, last);
        let tiles = self.binary(BinaryOp::Div, rounded, size);
        let below = self.emit(ThreadOpKind::Cmp(CmpPred::Lt), vec![i, tiles], DType::Bool);
        *index_ok = self.and(*index_ok, below);
        let origin = self.cast(origin, DType::U32);
        Bound::Narrow(origin, self.cast(extent, DType::U32))
    }
}

/// How one axis of an access's partition is kept in bounds.
#[derive(Clone, Copy)]
enum Bound {
    /// Proven, or unchecked: no test.
    None,
    /// Each register's 64-bit position against the view's extent.
    Wide(Reg),
    /// Each register's position in 32 bits (the partition's origin, then
    /// the view's extent, both `u32`), the index tested in 64 bits once.
    Narrow(Reg, Reg),
}

/// The note of an access in the text form: `bounds: proven` when every axis
/// of its partition index is proven in bounds, otherwise how the unproven
/// axes are kept in bounds (`masked`, `checked`, or `unchecked (unsafe)`),
/// naming the axes when only some are proven.
pub(super) fn bounds_note(proven: &[bool], masked: bool, bounded: bool) -> String {
    let kept = if masked {
        "masked"
    } else if bounded {
        "checked"
    } else {
        "unchecked (unsafe)"
    };
    let axes = |want: bool| {
        let list: Vec<String> = (0..proven.len())
            .filter(|&d| proven[d] == want)
            .map(|d| d.to_string())
            .collect();
        list.join(", ")
    };
    if !proven.contains(&false) {
        "bounds: proven".into()
    } else if !proven.contains(&true) {
        format!("bounds: {kept}")
    } else {
        format!(
            "bounds: axes [{}] proven, [{}] {kept}",
            axes(true),
            axes(false)
        )
    }
}

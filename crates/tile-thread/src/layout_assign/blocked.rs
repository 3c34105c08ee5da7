//! Blocked distributed layouts, expressed with the CuTe layout algebra.
//!
//! A blocked layout cuts a tile of shape `S` (rank `r`) among the `32 · W`
//! threads of a block. Per axis `d` it has `spt[d]` consecutive elements per
//! thread, `tpw[d]` threads of a warp and `wpb[d]` warps, the thread
//! coordinates varying fastest along the axes listed first in `order`
//! (innermost axis first). The pattern covers `spt·tpw·wpb` elements per axis
//! and repeats `reps[d]` times to cover `S[d]`, so the layout spans a padded
//! shape `P[d] = reps[d] · spt[d] · tpw[d] · wpb[d] ≥ S[d]`.
//!
//! Two CuTe layouts map into the row-major offsets of `P`:
//!
//! * `thread: (lane modes…, warp modes…) → offset` of the first element a
//!   thread holds, colexicographic in the thread index (`tid = lane + 32·warp`);
//! * `value: (spt modes…, rep modes…) → offset` of register `v` relative to it.
//!
//! Register `v` of thread `t` holds the element at `thread(t) + value(v)`,
//! decoded row-major into a coordinate of `P`. The map is a bijection from
//! `(t, v)` onto `P`; the element is **live** when its coordinate lies inside
//! `S` (non-powers of two leave dead registers, which loads and stores mask
//! and reductions skip). Example, `S = [3, 5]` with one warp:
//! `tpw = [4, 8]`, `wpb = [1, 1]`, `P = [4, 8]`,
//! `thread = (8,4):(1,8)`, `value = (1,1,1,1):(1,8,1,8)`.

use std::fmt;
use tile_ir::layout::{coalesce, IntTuple, Layout};

use crate::program::WARP_SIZE;

/// A distributed layout: which thread holds which element of a tile in which
/// register (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DistLayout {
    /// What the layout is made for.
    pub kind: LayoutKind,
    /// The tile's shape `S`.
    pub shape: Vec<usize>,
    /// Consecutive elements per thread along each axis (the vector width on
    /// the innermost axis).
    pub size_per_thread: Vec<usize>,
    /// Threads of a warp along each axis (product 32).
    pub threads_per_warp: Vec<usize>,
    /// Warps along each axis (product the block's warp count).
    pub warps_per_block: Vec<usize>,
    /// The axes from fastest-varying to slowest.
    pub order: Vec<usize>,
    /// The padded extents `P`.
    pub padded: Vec<usize>,
    /// Thread index → row-major offset in `P` of its first element.
    pub thread: Layout,
    /// Register index → row-major offset in `P` relative to the first element.
    pub value: Layout,
    /// Axes of extent 1 along which the layout still spreads threads and
    /// registers (a *slice* of a parent layout, see [`DistLayout::slice`]):
    /// every holder along them has a copy of the element.
    pub replicated: Vec<usize>,
}

/// What a [`DistLayout`] is made for: its `thread` and `value` layouts
/// alone say where each element lives; the kind says what the descriptive
/// fields (`size_per_thread`, `threads_per_warp`, `warps_per_block`,
/// `order`) mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LayoutKind {
    /// A blocked layout (the module docs): the descriptive fields generate
    /// it, and reductions may run as trees over its lanes and warps.
    Blocked,
    /// The accumulator of a tensor-core instruction (`mma.sync.m16n8k16`
    /// or WMMA, `layout_assign::mma`): `size_per_thread` counts the
    /// consecutive columns of a fragment, `warps_per_block` the warps along
    /// M and N.
    MmaAccumulator,
}

/// A layout that cannot be built (an empty or rank-0 tile, or one too large).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no blocked layout for a tile of shape {shape:?}: {reason}")]
pub struct LayoutBuildError {
    /// The tile's shape.
    pub shape: Vec<usize>,
    /// Why.
    pub reason: String,
}

impl DistLayout {
    /// The default blocked layout of a tile of `shape` for `num_warps` warps
    /// with `vec` consecutive elements per thread on the innermost axis: the
    /// lanes of a warp fill the innermost axis first (coalesced rows), the
    /// warps the outermost axis first; threads left over once an axis is
    /// covered go to the outermost axis and hold only dead registers.
    pub fn blocked(
        shape: &[usize],
        num_warps: u32,
        vec: usize,
    ) -> Result<DistLayout, LayoutBuildError> {
        let mut spt = vec![1; shape.len()];
        if let (Some(last), Some(&extent)) = (spt.last_mut(), shape.last()) {
            *last = vec.min(extent);
        }
        DistLayout::blocked_runs(shape, num_warps, &spt)
    }

    /// The blocked layout of a tile of `shape` for `num_warps` warps with
    /// `spt[d]` consecutive elements per thread along each axis `d`, lanes
    /// and warps placed as [`DistLayout::blocked`] places them (a layout
    /// whose threads hold runs along an outer axis too: a dequantization's
    /// group of rows per thread, sharing one scale).
    pub fn blocked_runs(
        shape: &[usize],
        num_warps: u32,
        spt: &[usize],
    ) -> Result<DistLayout, LayoutBuildError> {
        let err = |reason: &str| LayoutBuildError {
            shape: shape.to_vec(),
            reason: reason.into(),
        };
        let rank = shape.len();
        if rank == 0 || shape.contains(&0) {
            return Err(err("tiles need at least one axis and no empty axis"));
        }
        if !num_warps.is_power_of_two() || spt.len() != rank || spt.contains(&0) {
            return Err(err(
                "the warp count must be a power of two and the runs positive, one per axis",
            ));
        }
        let order: Vec<usize> = (0..rank).rev().collect();
        let spt: Vec<usize> = spt.iter().zip(shape).map(|(&s, &e)| s.min(e)).collect();
        let per_thread: Vec<usize> = (0..rank).map(|d| shape[d].div_ceil(spt[d])).collect();
        let mut tpw = vec![1; rank];
        let mut lanes = WARP_SIZE as usize;
        for &d in &order {
            tpw[d] = lanes.min(per_thread[d].next_power_of_two());
            lanes /= tpw[d];
        }
        tpw[order[rank - 1]] *= lanes;
        let mut wpb = vec![1; rank];
        let mut warps = num_warps as usize;
        for &d in order.iter().rev() {
            wpb[d] = warps.min(per_thread[d].div_ceil(tpw[d]).next_power_of_two());
            warps /= wpb[d];
        }
        wpb[order[rank - 1]] *= warps;
        DistLayout::from_fields(shape, spt, tpw, wpb, order).map_err(|e| err(&e))
    }

    /// The blocked layout of a tile of `shape` generated by its descriptive
    /// fields: `spt[d]` consecutive elements per thread along axis `d`,
    /// `tpw[d]` lanes and `wpb[d]` warps along it, axes from fastest to
    /// slowest in `order`, repetitions covering the rest.
    pub(super) fn from_fields(
        shape: &[usize],
        spt: Vec<usize>,
        tpw: Vec<usize>,
        wpb: Vec<usize>,
        order: Vec<usize>,
    ) -> Result<DistLayout, String> {
        let rank = shape.len();
        let cover: Vec<usize> = (0..rank).map(|d| spt[d] * tpw[d] * wpb[d]).collect();
        let reps: Vec<usize> = (0..rank).map(|d| shape[d].div_ceil(cover[d])).collect();
        let padded: Vec<usize> = (0..rank).map(|d| reps[d] * cover[d]).collect();
        let ps = row_major(&padded);
        let mode = |pairs: Vec<(usize, usize)>| -> Result<Layout, String> {
            let (s, d): (Vec<i64>, Vec<i64>) =
                pairs.into_iter().map(|(s, d)| (s as i64, d as i64)).unzip();
            Layout::new(IntTuple::flat(&s), IntTuple::flat(&d)).map_err(|e| e.to_string())
        };
        let thread = mode(
            order
                .iter()
                .map(|&d| (tpw[d], spt[d] * ps[d]))
                .chain(order.iter().map(|&d| (wpb[d], spt[d] * tpw[d] * ps[d])))
                .collect(),
        )?;
        let value = mode(
            order
                .iter()
                .map(|&d| (spt[d], ps[d]))
                .chain(order.iter().map(|&d| (reps[d], cover[d] * ps[d])))
                .collect(),
        )?;
        Ok(DistLayout {
            kind: LayoutKind::Blocked,
            shape: shape.to_vec(),
            size_per_thread: spt,
            threads_per_warp: tpw,
            warps_per_block: wpb,
            order,
            padded,
            thread,
            value,
            replicated: Vec::new(),
        })
    }

    /// The slice of this layout along `axis`: the layout of a tile that has
    /// extent 1 on `axis` (a reduction with `keepdim`) where the threads and
    /// registers spread along `axis` all hold the element of the remaining
    /// coordinates. A tile in the slice layout broadcasts back to this layout
    /// register for register.
    pub fn slice(&self, axis: usize) -> DistLayout {
        let mut sliced = self.clone();
        if let Some(extent) = sliced.shape.get_mut(axis) {
            *extent = 1;
            if !sliced.replicated.contains(&axis) {
                sliced.replicated.push(axis);
                sliced.replicated.sort_unstable();
            }
        }
        sliced
    }

    /// The layout without the axes `axes` (ascending), each of extent 1:
    /// [`Self::drop_axis`] from the last.
    pub fn drop_axes(&self, axes: &[usize]) -> Option<DistLayout> {
        let mut layout = self.clone();
        for &axis in axes.iter().rev() {
            layout = layout.drop_axis(axis)?;
        }
        Some(layout)
    }

    /// The layout of the tile without `axis`, held as this layout holds the
    /// tile: threads and registers spread along the dropped axis hold copies
    /// (their modes get stride 0), so a tile in it broadcasts back register
    /// for register, and a reduction along `axis` can leave each row's result
    /// where the row was. `None` for a rank-1 layout or an axis out of range.
    pub fn drop_axis(&self, axis: usize) -> Option<DistLayout> {
        if self.shape.len() < 2 || axis >= self.shape.len() {
            return None;
        }
        let ps = self.padded_strides();
        let without = |v: &[usize]| -> Vec<usize> {
            v.iter()
                .enumerate()
                .filter(|&(d, _)| d != axis)
                .map(|(_, &x)| x)
                .collect()
        };
        let renumber = |v: &[usize]| -> Vec<usize> {
            v.iter()
                .filter(|&&d| d != axis)
                .map(|&d| if d > axis { d - 1 } else { d })
                .collect()
        };
        let padded = without(&self.padded);
        let new_ps = row_major(&padded);
        let restride = |layout: &Layout| {
            restride(layout, &ps, |d, st| {
                let new_d = if d > axis { d - 1 } else { d };
                Some(if d == axis {
                    0
                } else {
                    (st / ps[d]) * new_ps[new_d]
                })
            })
        };
        Some(DistLayout {
            kind: self.kind,
            shape: without(&self.shape),
            size_per_thread: without(&self.size_per_thread),
            threads_per_warp: without(&self.threads_per_warp),
            warps_per_block: without(&self.warps_per_block),
            order: renumber(&self.order),
            padded,
            thread: restride(&self.thread)?,
            value: restride(&self.value)?,
            replicated: renumber(&self.replicated),
        })
    }

    /// The layout holding the `permute` by `perm` of this layout's tile in
    /// the same registers (result axis `i` is axis `perm[i]`): each mode's
    /// stride moves to its axis's new place, no element moves. `None` unless
    /// `perm` permutes the axes and every stride lies along one axis.
    pub fn permuted(&self, perm: &[usize]) -> Option<DistLayout> {
        let rank = self.shape.len();
        let mut inverse = vec![usize::MAX; rank];
        for (i, &d) in perm.iter().enumerate() {
            *inverse.get_mut(d)? = i;
        }
        if perm.len() != rank || inverse.contains(&usize::MAX) {
            return None;
        }
        let ps = self.padded_strides();
        let permute = |v: &[usize]| -> Vec<usize> { perm.iter().map(|&d| v[d]).collect() };
        let padded = permute(&self.padded);
        let new_ps = row_major(&padded);
        let restride = |layout: &Layout| {
            restride(layout, &ps, |d, st| {
                st.is_multiple_of(ps[d])
                    .then(|| (st / ps[d]) * new_ps[inverse[d]])
            })
        };
        let mut replicated: Vec<usize> = self.replicated.iter().map(|&d| inverse[d]).collect();
        replicated.sort_unstable();
        Some(DistLayout {
            kind: self.kind,
            shape: permute(&self.shape),
            size_per_thread: permute(&self.size_per_thread),
            threads_per_warp: permute(&self.threads_per_warp),
            warps_per_block: permute(&self.warps_per_block),
            order: self.order.iter().map(|&d| inverse[d]).collect(),
            padded,
            thread: restride(&self.thread)?,
            value: restride(&self.value)?,
            replicated,
        })
    }

    /// The layout a tile of shape `shape` should have to broadcast to this
    /// layout's tile in registers: leading axes dropped, axes of extent 1
    /// sliced. `None` if `shape` does not broadcast to this tile.
    pub fn fit(&self, shape: &[usize]) -> Option<DistLayout> {
        let mut layout = self.clone();
        while layout.shape.len() > shape.len() {
            layout = layout.drop_axis(0)?;
        }
        for (d, &extent) in shape.iter().enumerate() {
            if extent == 1 && layout.shape.get(d) != Some(&1) {
                layout = layout.slice(d);
            }
        }
        (layout.shape == shape).then_some(layout)
    }

    /// Whether a tile in this layout broadcasts to `target` by keeping its
    /// registers: it is `target`'s layout [fit](Self::fit) to this shape.
    pub fn broadcasts_to(&self, target: &DistLayout) -> bool {
        if self.shape.len() < target.shape.len() {
            return target.drop_axis(0).is_some_and(|t| self.broadcasts_to(&t));
        }
        self.padded == target.padded
            && self.thread == target.thread
            && self.value == target.value
            && self.shape.len() == target.shape.len()
            && (0..self.shape.len()).all(|d| {
                self.shape[d] == target.shape[d]
                    || (self.replicated.contains(&d) && !target.replicated.contains(&d))
            })
    }

    /// Whether `other` places every element where this layout does, in the
    /// same thread and register: the same shape and replicated axes, and the
    /// same thread and value layouts once their modes of extent 1 are gone
    /// (what [`DistLayout::drop_axis`] leaves of an axis of extent 1).
    pub fn holds_like(&self, other: &DistLayout) -> bool {
        self.kind == other.kind
            && self.shape == other.shape
            && self.replicated == other.replicated
            && coalesce(&self.thread) == coalesce(&other.thread)
            && coalesce(&self.value) == coalesce(&other.value)
    }

    /// Whether some element has several holders: a replicated axis or a copy
    /// mode (extent above 1, stride 0).
    pub fn has_copies(&self) -> bool {
        let copies = |l: &Layout| {
            l.shape()
                .leaves()
                .iter()
                .zip(l.stride().leaves())
                .any(|(&size, stride)| size > 1 && stride == 0)
        };
        !self.replicated.is_empty() || copies(&self.thread) || copies(&self.value)
    }

    /// This layout without the copy modes of its `value` layout (registers
    /// of one thread holding one element, as a dropped axis leaves them),
    /// and for each register of this layout the register of the result
    /// holding its element: a load reads each element once per thread.
    /// `None` when the value layout has no copy modes.
    pub fn without_register_copies(&self) -> Option<(DistLayout, Vec<usize>)> {
        let sizes = self.value.shape().leaves();
        let strides = self.value.stride().leaves();
        let copy = |i: usize| sizes[i] > 1 && strides[i] == 0;
        if !(0..sizes.len()).any(copy) {
            return None;
        }
        let kept: Vec<usize> = (0..sizes.len()).filter(|&i| !copy(i)).collect();
        let flat = |pick: &[i64]| IntTuple::flat(pick);
        let value = Layout::new(
            flat(&kept.iter().map(|&i| sizes[i]).collect::<Vec<_>>()),
            flat(&kept.iter().map(|&i| strides[i]).collect::<Vec<_>>()),
        )
        .ok()?;
        let holder = (0..self.registers())
            .map(|v| {
                // The digits of `v` in the kept modes, colexicographically.
                let (mut index, mut prefix, mut kept_prefix) = (0, 1, 1);
                for (i, &size) in sizes.iter().enumerate() {
                    let size = size as usize;
                    if !copy(i) {
                        index += (v / prefix % size) * kept_prefix;
                        kept_prefix *= size;
                    }
                    prefix *= size;
                }
                index
            })
            .collect();
        Some((
            DistLayout {
                value,
                ..self.clone()
            },
            holder,
        ))
    }

    /// The number of registers each thread holds.
    pub fn registers(&self) -> usize {
        self.value.size() as usize
    }

    /// The row-major strides of the padded shape.
    pub fn padded_strides(&self) -> Vec<usize> {
        row_major(&self.padded)
    }

    /// Whether every padded coordinate splits into a thread part and a
    /// register part, `c_d(t, v) = c_d(T(t)) + c_d(V(v))`: true when, along
    /// every axis, the largest thread part plus the largest register part
    /// stays below `P[d]` (then `T(t) + V(v)` has no carry between axes).
    /// Blocked and tensor-core layouts have it; the lowering then computes
    /// a register's coordinate as the thread's plus a constant.
    pub fn additive(&self) -> bool {
        let ps = self.padded_strides();
        let largest = |layout: &Layout| -> Vec<usize> {
            let mut max = vec![0; self.padded.len()];
            for i in 0..layout.size() {
                let offset = layout.call(i) as usize;
                for (d, m) in max.iter_mut().enumerate() {
                    *m = (*m).max(offset / ps[d] % self.padded[d]);
                }
            }
            max
        };
        let (t, v) = (largest(&self.thread), largest(&self.value));
        (0..self.padded.len()).all(|d| t[d] + v[d] < self.padded[d])
    }

    /// The coordinate in `P` of register `v` of thread `t`.
    pub fn padded_coordinate(&self, t: usize, v: usize) -> Vec<usize> {
        let offset = (self.thread.call(t as i64) + self.value.call(v as i64)) as usize;
        self.padded_strides()
            .iter()
            .zip(&self.padded)
            .map(|(s, p)| offset / s % p)
            .collect()
    }

    /// The tile coordinate of register `v` of thread `t` (0 on replicated
    /// axes), whether it is live (inside the tile), and whether it is the
    /// element's **owner**: the one live copy with padded coordinate 0 on
    /// every replicated axis and digit 0 in every copy mode (stride 0), which
    /// alone writes the element to memory.
    pub fn coordinate(&self, t: usize, v: usize) -> (Vec<usize>, bool, bool) {
        let mut coord = self.padded_coordinate(t, v);
        let mut owner = copy_digits(&self.thread, t)
            .chain(copy_digits(&self.value, v))
            .all(|d| d == 0);
        for &d in &self.replicated {
            owner &= coord[d] == 0;
            coord[d] = 0;
        }
        let live = coord.iter().zip(&self.shape).all(|(c, s)| c < s);
        (coord, live, live && owner)
    }
}

/// `layout` (into row-major offsets of strides `ps`) with each mode's
/// stride `st`, which lies along axis `d` (the first whose stride is at
/// most `st`), replaced by `moved(d, st)`; modes of extent 1 or stride 0
/// get stride 0. `None` if `moved` refuses a mode.
pub(super) fn restride(
    layout: &Layout,
    ps: &[usize],
    moved: impl Fn(usize, usize) -> Option<usize>,
) -> Option<Layout> {
    let sizes = layout.shape().leaves();
    let strides = layout
        .stride()
        .leaves()
        .iter()
        .zip(&sizes)
        .map(|(&st, &size)| {
            let st = st as usize;
            if size == 1 || st == 0 {
                return Some(0);
            }
            let d = ps.iter().position(|&p| p <= st)?;
            moved(d, st).map(|s| s as i64)
        })
        .collect::<Option<Vec<i64>>>()?;
    Layout::new(IntTuple::flat(&sizes), IntTuple::flat(&strides)).ok()
}

/// The digits of index `i` in the copy modes of `layout` (extent above 1,
/// stride 0: the modes of dropped axes), colexicographically.
pub(crate) fn copy_digits(layout: &Layout, i: usize) -> impl Iterator<Item = usize> {
    let sizes = layout.shape().leaves();
    let strides = layout.stride().leaves();
    let mut prefix = 1usize;
    let mut digits = Vec::new();
    for (&size, &stride) in sizes.iter().zip(&strides) {
        if size > 1 && stride == 0 {
            digits.push(i / prefix % size as usize);
        }
        prefix *= size as usize;
    }
    digits.into_iter()
}

/// The flat layout of `(size, stride)` pairs, if it is one.
pub(crate) fn flat_layout(pairs: &[(usize, usize)]) -> Option<Layout> {
    let (s, d): (Vec<i64>, Vec<i64>) = pairs.iter().map(|&(s, d)| (s as i64, d as i64)).unzip();
    Layout::new(IntTuple::flat(&s), IntTuple::flat(&d)).ok()
}

/// Row-major strides of `shape`.
pub(crate) fn row_major(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    strides
}

/// Layouts print as
/// `blocked<[3, 5] spt=[1, 1] tpw=[4, 8] wpb=[1, 1] order=[1, 0]> thread=… value=…`.
impl fmt::Display for DistLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.kind {
            LayoutKind::Blocked => "blocked",
            LayoutKind::MmaAccumulator => "mma",
        };
        write!(
            f,
            "{name}<{:?} spt={:?} tpw={:?} wpb={:?} order={:?}",
            self.shape,
            self.size_per_thread,
            self.threads_per_warp,
            self.warps_per_block,
            self.order,
        )?;
        if !self.replicated.is_empty() {
            write!(f, " replicated={:?}", self.replicated)?;
        }
        write!(f, "> thread={} value={}", self.thread, self.value)
    }
}

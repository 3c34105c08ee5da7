//! The coordinates of each register of a layout in the executing thread.
//!
//! For a layout with thread layout `T` and value layout `V` into the padded
//! shape `P`, thread `tid` computes once, in the kernel's prologue:
//!
//! ```text
//! base = Σ_modes ((tid / prefix_m) % shape_m) * stride_m      // T(tid)
//! off_v = base + V(v)                                          // constant V(v)
//! c_d = (off_v / stride_P[d]) % P[d]
//! live_v = ∧_d c_d < S[d]         (only axes with P[d] > S[d])
//! linear_v = Σ_d c_d * stride_S[d]
//! owner_v = live_v ∧ ∧_{replicated d} c_d == 0 ∧ (digit 0 in every copy mode)
//! ```
//!
//! On a replicated axis (a slice layout) the tile coordinate is 0 whatever
//! `c_d`; only the copy with `c_d == 0` is the owner that writes the element.

use super::Lowerer;
use crate::layout_assign::{copy_digits, row_major, DistLayout};
use crate::program::{Reg, ThreadOpKind};
use tile_ir::{BinaryOp, CmpPred, DType, Scalar};

/// The coordinates of every register of a layout in the executing thread.
#[derive(Clone, Debug)]
pub(super) struct Coords {
    /// Per register, its coordinate along each axis (`i32`).
    pub(super) axes: Vec<Vec<Reg>>,
    /// Per register, its row-major index in the tile (`i32`).
    pub(super) linear: Vec<Reg>,
    /// Per register, whether its element lies in the tile (`bool`).
    pub(super) live: Vec<Reg>,
    /// Per register, whether it is the one copy of its element that writes
    /// it to memory (`live` but for the copies of a slice layout).
    pub(super) owner: Vec<Reg>,
    /// Per register, the first register of the thread holding the same
    /// element (itself unless the layout is a slice).
    pub(super) representative: Vec<usize>,
    /// For an additive layout, each coordinate as the thread's part plus a
    /// constant.
    pub(super) split: Option<SplitCoords>,
}

/// The coordinates of an additive layout's registers
/// ([`crate::layout_assign::DistLayout::additive`]): register `v`'s along
/// axis `d` is `thread[d] + offsets[v][d]` (0 and 0 on replicated axes).
#[derive(Clone, Debug)]
pub(super) struct SplitCoords {
    /// Per axis, the executing thread's coordinate (`i32`).
    pub(super) thread: Vec<Reg>,
    /// Per register, its constant offset from it along each axis.
    pub(super) offsets: Vec<Vec<i64>>,
}

impl Lowerer<'_> {
    /// `a <op> b` hoisted into the prologue.
    pub(super) fn hoist_binary(&mut self, op: BinaryOp, a: Reg, b: Reg) -> Reg {
        let d = self.program.dtype(a);
        self.hoist(ThreadOpKind::Binary(op), vec![a, b], d)
    }

    /// `x <op> k` hoisted, folding the identities `x * 1`, `x / 1`, `x + 0`.
    pub(super) fn hoist_with_const(&mut self, op: BinaryOp, x: Reg, k: i64) -> Reg {
        match (op, k) {
            (BinaryOp::Mul | BinaryOp::Div, 1) | (BinaryOp::Add, 0) => x,
            _ => {
                let k = self.i32c(k);
                self.hoist_binary(op, x, k)
            }
        }
    }

    /// `x` cast to `to`, hoisted (for `x` defined in the prologue), once.
    pub(super) fn hoisted_cast(&mut self, x: Reg, to: DType) -> Reg {
        if let Some(&r) = self.casts.get(&(x, to)) {
            return r;
        }
        let r = self.hoist(ThreadOpKind::Cast { to }, vec![x], to);
        self.casts.insert((x, to), r);
        r
    }

    /// `a ∧ b` hoisted, folding the constant `true`.
    fn hoist_and(&mut self, a: Reg, b: Reg) -> Reg {
        if self.is_true(a) {
            b
        } else if self.is_true(b) {
            a
        } else {
            self.hoist_binary(BinaryOp::And, a, b)
        }
    }

    /// The thread's index in its block.
    pub(super) fn thread_id(&mut self) -> Reg {
        if let Some(r) = self.thread_id {
            return r;
        }
        let r = self.hoist(ThreadOpKind::ThreadId, vec![], DType::I32);
        self.thread_id = Some(r);
        r
    }

    /// The coordinates of `layout`'s registers (computed once per layout).
    pub(super) fn coords(&mut self, layout: &DistLayout) -> Coords {
        if let Some(c) = self.coords.get(layout) {
            return c.clone();
        }
        let tid = self.thread_id();
        let mut base: Option<Reg> = None;
        let mut prefix = 1i64;
        let shapes = layout.thread.shape().leaves();
        let strides = layout.thread.stride().leaves();
        for (&s, &d) in shapes.iter().zip(&strides) {
            if s > 1 {
                let q = self.hoist_with_const(BinaryOp::Div, tid, prefix);
                let q = self.hoist_with_const(BinaryOp::Rem, q, s);
                let term = self.hoist_with_const(BinaryOp::Mul, q, d);
                base = Some(match base {
                    Some(b) => self.hoist_binary(BinaryOp::Add, b, term),
                    None => term,
                });
            }
            prefix *= s;
        }
        let base = base.unwrap_or_else(|| self.i32c(0));
        // Copy modes (stride 0) of the thread layout: only digit 0 owns.
        let mut thread_owner = self.constant(Scalar::Bool(true));
        let mut prefix = 1i64;
        for (&size, &stride) in shapes.iter().zip(&strides) {
            if size > 1 && stride == 0 {
                let q = self.hoist_with_const(BinaryOp::Div, tid, prefix);
                let q = self.hoist_with_const(BinaryOp::Rem, q, size);
                let zero = self.i32c(0);
                let first = self.hoist(ThreadOpKind::Cmp(CmpPred::Eq), vec![q, zero], DType::Bool);
                thread_owner = self.hoist_and(thread_owner, first);
            }
            prefix *= size;
        }
        let ps = layout.padded_strides();
        let ss = row_major(&layout.shape);
        // The thread's own coordinate per axis, when registers add a
        // constant to it (`DistLayout::additive`).
        let thread_coords: Option<Vec<Reg>> = layout.additive().then(|| {
            (0..layout.shape.len())
                .map(|d| self.coordinate_of(base, &ps, &layout.padded, d))
                .collect()
        });
        let truth = self.constant(Scalar::Bool(true));
        let mut coords = Coords {
            axes: Vec::new(),
            linear: Vec::new(),
            live: Vec::new(),
            owner: Vec::new(),
            representative: Vec::new(),
            split: None,
        };
        let mut offsets = Vec::new();
        coords.representative = representatives(layout);
        for v in 0..layout.registers() {
            let value_offset = layout.value.call(v as i64) as usize;
            let off = match thread_coords {
                Some(_) => base,
                None => self.hoist_with_const(BinaryOp::Add, base, value_offset as i64),
            };
            let mut axes = Vec::new();
            let mut live = truth;
            let copy = copy_digits(&layout.value, v).any(|d| d != 0);
            let mut owner = if copy {
                self.constant(Scalar::Bool(false))
            } else {
                thread_owner
            };
            let mut linear: Option<Reg> = None;
            let mut offset = vec![0; layout.shape.len()];
            for d in 0..layout.shape.len() {
                let c = if layout.padded[d] == 1 {
                    self.i32c(0)
                } else if let Some(tc) = &thread_coords {
                    let k = value_offset / ps[d] % layout.padded[d];
                    self.hoist_with_const(BinaryOp::Add, tc[d], k as i64)
                } else {
                    self.coordinate_of(off, &ps, &layout.padded, d)
                };
                if layout.replicated.contains(&d) {
                    if layout.padded[d] > 1 {
                        let zero = self.i32c(0);
                        let first =
                            self.hoist(ThreadOpKind::Cmp(CmpPred::Eq), vec![c, zero], DType::Bool);
                        owner = self.hoist_and(owner, first);
                    }
                    axes.push(self.i32c(0));
                    continue;
                }
                if layout.padded[d] > 1 {
                    offset[d] = (value_offset / ps[d] % layout.padded[d]) as i64;
                }
                if layout.padded[d] > layout.shape[d] {
                    let extent = self.i32c(layout.shape[d] as i64);
                    let inside =
                        self.hoist(ThreadOpKind::Cmp(CmpPred::Lt), vec![c, extent], DType::Bool);
                    live = self.hoist_and(live, inside);
                }
                axes.push(c);
                if layout.padded[d] == 1 {
                    continue;
                }
                let term = self.hoist_with_const(BinaryOp::Mul, c, ss[d] as i64);
                linear = Some(match linear {
                    Some(l) => self.hoist_binary(BinaryOp::Add, l, term),
                    None => term,
                });
            }
            coords.axes.push(axes);
            let linear = linear.unwrap_or_else(|| self.i32c(0));
            coords.linear.push(linear);
            coords.live.push(live);
            let owner = self.hoist_and(live, owner);
            coords.owner.push(owner);
            offsets.push(offset);
        }
        coords.split = thread_coords.map(|tc| {
            let thread = (0..layout.shape.len())
                .map(|d| {
                    let along = layout.padded[d] > 1 && !layout.replicated.contains(&d);
                    if along {
                        tc[d]
                    } else {
                        self.i32c(0)
                    }
                })
                .collect();
            SplitCoords { thread, offsets }
        });
        self.coords.insert(layout.clone(), coords.clone());
        coords
    }

    /// Axis `d` of the padded coordinate of offset `off` (hoisted):
    /// `(off / ps[d]) % P[d]`, without the remainder on the first axis.
    fn coordinate_of(&mut self, off: Reg, ps: &[usize], padded: &[usize], d: usize) -> Reg {
        let c = self.hoist_with_const(BinaryOp::Div, off, ps[d] as i64);
        if d == 0 {
            c
        } else {
            self.hoist_with_const(BinaryOp::Rem, c, padded[d] as i64)
        }
    }
}

/// For each register of `layout`, the first register of the same thread
/// holding the same element: registers whose value offsets differ only
/// along replicated axes (a slice's copies) hold one element, and the
/// first of them represents the others. The same in every thread.
pub(crate) fn representatives(layout: &DistLayout) -> Vec<usize> {
    let ps = layout.padded_strides();
    let mut keys: Vec<Vec<usize>> = Vec::new();
    let mut first = Vec::with_capacity(layout.registers());
    for v in 0..layout.registers() {
        let value_offset = layout.value.call(v as i64) as usize;
        let key: Vec<usize> = (0..layout.shape.len())
            .filter(|d| !layout.replicated.contains(d))
            .map(|d| value_offset / ps[d] % layout.padded[d])
            .collect();
        first.push(keys.iter().position(|k| *k == key).unwrap_or(v));
        keys.push(key);
    }
    first
}

//! Layout conversions inside a warp through `shfl.sync.idx`.
//!
//! A conversion from `from` to `to` (same shape) can use warp shuffles when,
//! for every destination (thread `t`, register `r`), some thread of `t`'s warp
//! holds the same element (same coordinate and liveness, as in
//! [`super::shared`]'s register renaming) in some register `s` of `from`.
//!
//! For each destination register `r`, the holder chosen for lane `l` is the
//! one minimising `(s, l' ^ l)`; its source lane `L_r(l)` and source
//! register `S_r(l)` must be *affine over GF(2)* in the lane bits (the same
//! in every warp), so that the prologue computes them with a few `and`,
//! `shl`/`shr` and `xor` from the lane index (e.g. `lane >> 1`). Blocked layouts with power-of-
//! two extents always satisfy this; others fall back to shared memory. Then
//! for each distinct `s` in the image of `S_r`, one idx shuffle of register
//! `s` from lane `L_r(l)`, selected into the lanes with `S_r(l) = s` (the
//! shuffle is skipped where `L_r(l) = l` in every lane: a plain rename, and
//! shared by destination registers that need the same one, e.g. the copies
//! of a replicated element).
//!
//! The path is taken only when the shuffles number at most
//! [`MAX_SHUFFLES_PER_REGISTER`] times the destination registers; otherwise
//! two shared-memory accesses per register and two barriers are cheaper.

use super::Lowerer;
use crate::layout_assign::DistLayout;
use crate::program::{Reg, ShuffleMode, ThreadOpKind, WARP_SIZE};
use std::collections::{BTreeMap, HashMap, HashSet};
use tile_ir::{BinaryOp, CmpPred, DType};

/// The cost bound of the shuffle path: at most this many distinct shuffles per
/// destination register (a shared-memory conversion costs one store and one
/// load per register plus two barriers).
pub(super) const MAX_SHUFFLES_PER_REGISTER: usize = 2;

/// A function of the lane index, affine over GF(2): `c ^ ⊕_{bit i of lane}
/// g[i]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Affine {
    /// The value at lane 0.
    c: u32,
    /// The contribution of each of the five lane bits.
    g: [u32; 5],
}

impl Affine {
    /// Fits `f` (one value per lane), if it is affine.
    fn fit(f: &[u32]) -> Option<Affine> {
        let c = f[0];
        let g = std::array::from_fn(|i| f[1 << i] ^ c);
        let affine = Affine { c, g };
        (0..WARP_SIZE as usize)
            .all(|l| affine.at(l) == f[l])
            .then_some(affine)
    }

    /// The value at `lane`.
    fn at(&self, lane: usize) -> u32 {
        (0..5)
            .filter(|i| lane >> i & 1 == 1)
            .fold(self.c, |a, i| a ^ self.g[i])
    }

    /// Whether the function is the lane index itself.
    fn is_identity(&self) -> bool {
        self.c == 0 && (0..5).all(|i| self.g[i] == 1 << i)
    }

    /// Whether the function is constant.
    fn is_constant(&self) -> bool {
        self.g.iter().all(|&g| g == 0)
    }
}

/// The plan of one destination register: its source-lane and source-register
/// functions.
struct RegisterPlan {
    /// The source lane of each lane.
    lane: Affine,
    /// The source register of each lane.
    register: Affine,
}

/// For each register of `to`, the source lanes and registers of `from` that
/// supply it within each warp of the block's `threads` threads, if every
/// destination has a holder in its warp, the choice is affine in the lane,
/// and the shuffles needed stay within the cost bound.
fn plan(from: &DistLayout, to: &DistLayout, threads: usize) -> Option<Vec<RegisterPlan>> {
    if from.shape != to.shape || !threads.is_multiple_of(WARP_SIZE as usize) {
        return None;
    }
    let warp = WARP_SIZE as usize;
    // The holders of each element in warp 0.
    let mut holders: HashMap<Element, Vec<(usize, usize)>> = HashMap::new();
    for s in 0..from.registers() {
        for l in 0..warp {
            holders
                .entry(key(from.coordinate(l, s)))
                .or_default()
                .push((s, l));
        }
    }
    let mut plans = Vec::new();
    // The distinct (source lane, source register) shuffles.
    let mut shuffles = HashSet::new();
    for r in 0..to.registers() {
        let (mut lanes, mut regs) = (Vec::new(), Vec::new());
        for lane in 0..warp {
            let &(s, l) = holders
                .get(&key(to.coordinate(lane, r)))?
                .iter()
                .min_by_key(|&&(s, l)| (s, l ^ lane))?;
            lanes.push(l as u32);
            regs.push(s as u32);
        }
        let lane = Affine::fit(&lanes)?;
        let register = Affine::fit(&regs)?;
        // The same choice must serve every warp.
        let serves_all = (warp..threads).all(|t| {
            let (w, l) = (t / warp * warp, t % warp);
            let source = w + lane.at(l) as usize;
            key(to.coordinate(t, r)) == key(from.coordinate(source, register.at(l) as usize))
        });
        if !serves_all {
            return None;
        }
        if !lane.is_identity() {
            shuffles.extend(regs.iter().map(|&s| (lane, s)));
        }
        plans.push(RegisterPlan { lane, register });
    }
    (shuffles.len() <= MAX_SHUFFLES_PER_REGISTER * to.registers()).then_some(plans)
}

/// An element a layout slot holds: its coordinate and liveness.
type Element = (Vec<usize>, bool);

/// The element of a layout slot (from [`DistLayout::coordinate`]).
fn key((coord, live, _): (Vec<usize>, bool, bool)) -> Element {
    (coord, live)
}

impl Lowerer<'_> {
    /// The registers of a tile of `from` (registers `regs`) in layout `to`
    /// through warp shuffles, if the conversion stays inside warps within
    /// the cost bound (see the module docs).
    pub(super) fn shuffle_convert(
        &mut self,
        dtype: DType,
        from: &DistLayout,
        regs: &[Reg],
        to: &DistLayout,
    ) -> Option<Vec<Reg>> {
        let plans = plan(from, to, self.program.block_threads() as usize)?;
        let mut converted = Vec::new();
        // Shuffles already emitted, by source register and lane register.
        let mut emitted: HashMap<(u32, Reg), Reg> = HashMap::new();
        for p in plans {
            let sources: Vec<u32> = {
                let mut v: Vec<u32> = (0..WARP_SIZE as usize).map(|l| p.register.at(l)).collect();
                v.sort_unstable();
                v.dedup();
                v
            };
            if p.lane.is_identity() && p.register.is_constant() {
                converted.push(regs[p.register.c as usize]);
                continue;
            }
            let lane = self.lane_function(&p.lane);
            let chosen = if p.register.is_constant() {
                None
            } else {
                Some(self.lane_function(&p.register))
            };
            let mut value: Option<Reg> = None;
            for s in sources {
                let moved = if p.lane.is_identity() {
                    regs[s as usize]
                } else if let Some(&r) = emitted.get(&(s, lane)) {
                    r
                } else {
                    let kind = ThreadOpKind::Shuffle {
                        mode: ShuffleMode::Idx,
                        width: WARP_SIZE as u8,
                    };
                    let r = self.emit(kind, vec![regs[s as usize], lane], dtype);
                    emitted.insert((s, lane), r);
                    r
                };
                value = Some(match (value, chosen) {
                    (Some(acc), Some(chosen)) => {
                        let k = self.i32c(i64::from(s));
                        let here = self.hoist(
                            ThreadOpKind::Cmp(CmpPred::Eq),
                            vec![chosen, k],
                            DType::Bool,
                        );
                        self.select(here, moved, acc)
                    }
                    _ => moved,
                });
            }
            converted.push(value.expect("every lane has a source register"));
        }
        Some(converted)
    }

    /// An affine function of the lane index, computed in the prologue: the
    /// lane bits that move by the same distance masked and shifted together,
    /// the terms combined with `xor`.
    fn lane_function(&mut self, f: &Affine) -> Reg {
        let tid = self.thread_id();
        let lane_mask = self.i32c(i64::from(WARP_SIZE - 1));
        let lane = self.hoist(
            ThreadOpKind::Binary(BinaryOp::And),
            vec![tid, lane_mask],
            DType::I32,
        );
        let mut acc = (f.c != 0).then(|| self.i32c(i64::from(f.c)));
        // Lane bits moved to another single bit, grouped by the distance
        // moved: `(lane & mask) << d` or `>> -d`; the others bit by bit.
        let mut moved: BTreeMap<i32, i64> = BTreeMap::new();
        let mut terms = Vec::new();
        for i in 0..5 {
            let g = f.g[i];
            if g == 0 {
                continue;
            }
            if g.is_power_of_two() {
                *moved
                    .entry(g.trailing_zeros() as i32 - i as i32)
                    .or_default() |= 1 << i;
                continue;
            }
            let bit = self.hoist_i32(BinaryOp::Shr, lane, i as i64);
            let bit = self.hoist_i32(BinaryOp::And, bit, 1);
            terms.push(self.hoist_i32(BinaryOp::Mul, bit, i64::from(g)));
        }
        for (d, mask) in moved {
            let bits = if mask == i64::from(WARP_SIZE - 1) {
                lane
            } else {
                self.hoist_i32(BinaryOp::And, lane, mask)
            };
            terms.push(match d {
                0 => bits,
                d if d > 0 => self.hoist_i32(BinaryOp::Shl, bits, i64::from(d)),
                d => self.hoist_i32(BinaryOp::Shr, bits, i64::from(-d)),
            });
        }
        for term in terms {
            acc = Some(match acc {
                Some(a) => self.hoist(
                    ThreadOpKind::Binary(BinaryOp::Xor),
                    vec![a, term],
                    DType::I32,
                ),
                None => term,
            });
        }
        acc.unwrap_or_else(|| self.i32c(0))
    }

    /// `x <op> k` for an `i32` constant `k`, in the prologue.
    fn hoist_i32(&mut self, op: BinaryOp, x: Reg, k: i64) -> Reg {
        let k = self.i32c(k);
        self.hoist(ThreadOpKind::Binary(op), vec![x, k], DType::I32)
    }
}

//! Scans in registers, exact: a chain through the lanes of a warp (or of
//! a CDNA wave, whose two warps a width-64 shuffle spans).
//!
//! The interpreter's scan is `y[0] = x[0]`, `y[k] = y[k-1] ⊕ x[k]`, rounded
//! at every step, so its float results depend on that order. Where the
//! operand's layout gives each thread runs of `L` consecutive elements
//! along the axis, the `P` lanes of a warp along it holding consecutive
//! runs (lane position `i` the run at `i·L` of each chunk of `P·L`), the
//! order is chunk by chunk, lane position by lane position, and the scan
//! runs as a chain without shared memory:
//!
//! for each chunk, for `i` in `0..P`: the threads at position `i` keep the
//! running total (`carry`) as their carry-in, every thread folds its own
//! run onto its carry-in, and `carry` becomes the total of the lane at
//! position `i` (`shfl.idx`), the chain's value. After the `P`
//! turns each thread folds its run once more from its own carry-in, in the
//! interpreter's order, into its results. The first element of the first
//! chunk starts the fold, as in the interpreter.
//!
//! A float sum or product in the interpreter's order is the same chain
//! ([`Lowerer::chain_reduce`]) with every turn, the last included, passing
//! its lane's total on: after the last turn every lane along the axis holds
//! the row's total, its result in the operand's layout sliced or with the
//! axis dropped.
//!
//! Cost: `P·(L + 3)` instructions per chunk and row (one shuffle a turn),
//! against the staged path's fold of the whole lane per result register
//! and a shared copy of the tile (128 KiB for FlagGems' `[8, 4096]` f32
//! cumsum, past gfx942's 64 KiB).

use super::reduce_tree::AxisBits;
use super::Lowerer;
use crate::layout_assign::DistLayout;
use crate::program::{Reg, ShuffleMode, ThreadOpKind, WARP_SIZE};
use tile_ir::{BinaryOp, CmpPred, DType};

/// Where a scan's chain runs: the run length, the lanes along the axis
/// and each lane position's bits, the chunks, and each row's registers.
struct Chain {
    /// Consecutive elements of a thread along the axis (`L`).
    run: usize,
    /// The lanes the chain's shuffles span: a warp's 32, or a CDNA wave's
    /// 64 where the wave's two warps lie along the axis.
    span: u32,
    /// Per lane position `i` (`P` of them), its axis bits of the lane index.
    positions: Vec<u32>,
    /// The lane-index bits that move along the axis.
    axis_mask: u32,
    /// Per row of the thread (registers off the axis alike), its registers
    /// by chunk, each chunk's `L` in order along the axis.
    rows: Vec<Vec<Vec<usize>>>,
    /// A register whose axis coordinate is the thread's own part (its
    /// register part is 0).
    first: usize,
}

/// The chain of a scan of a tile in `layout` along `axis`, if the layout
/// has its shape: additive, without copies, the warps off the axis (but
/// for the two warps of a hardware wave of `wave_lanes`), each thread's
/// registers along it runs of `L` that its lanes hold in order.
fn chain(layout: &DistLayout, axis: usize, wave_lanes: u32) -> Option<Chain> {
    let bits = AxisBits::of(layout, axis)?.in_waves(wave_lanes);
    if !bits.warps.is_empty() || bits.lanes.is_empty() || layout.has_copies() || !layout.additive()
    {
        return None;
    }
    let ps = layout.padded_strides();
    let part = |offset: i64| offset as usize / ps[axis] % layout.padded[axis];
    let regs = layout.registers();
    let offsets: Vec<usize> = (0..regs)
        .map(|v| part(layout.value.call(v as i64)))
        .collect();
    let run = (0..).take_while(|o| offsets.contains(o)).count();
    let lanes = 1usize << bits.lanes.len();
    let chunk = run * lanes;
    // Each lane position's bits: lane `t` of warp 0 with the other bits 0.
    let axis_mask: u32 = bits.lanes.iter().map(|b| 1 << b).sum();
    let span = if axis_mask >= WARP_SIZE {
        wave_lanes
    } else {
        WARP_SIZE
    };
    let mut positions = vec![None; lanes];
    for t in 0..span {
        if t & !axis_mask != 0 {
            continue;
        }
        let q = part(layout.thread.call(i64::from(t)));
        if q % run != 0 || q / run >= lanes {
            return None;
        }
        positions[q / run] = Some(t);
    }
    let positions: Vec<u32> = positions.into_iter().collect::<Option<_>>()?;
    // Rows: registers alike off the axis; chunks of `run` in order.
    let mut keys: Vec<usize> = Vec::new();
    let mut rows: Vec<Vec<Vec<Option<usize>>>> = Vec::new();
    let chunks = layout.padded[axis].div_ceil(chunk);
    for (v, &o) in offsets.iter().enumerate() {
        if o % chunk >= run {
            return None;
        }
        let key = layout.value.call(v as i64) as usize - o * ps[axis];
        let row = match keys.iter().position(|&k| k == key) {
            Some(r) => r,
            None => {
                keys.push(key);
                rows.push(vec![vec![None; run]; chunks]);
                rows.len() - 1
            }
        };
        let slot = &mut rows[row][o / chunk][o % chunk];
        if slot.replace(v).is_some() {
            return None;
        }
    }
    let rows: Vec<Vec<Vec<usize>>> = rows
        .into_iter()
        .map(|chunks| {
            chunks
                .into_iter()
                .map(|c| c.into_iter().collect::<Option<Vec<_>>>())
                .collect::<Option<Vec<_>>>()
        })
        .collect::<Option<_>>()?;
    let first = offsets.iter().position(|&o| o == 0)?;
    Some(Chain {
        run,
        span,
        positions,
        axis_mask,
        rows,
        first,
    })
}

/// Whether a reduction of a tile in `layout` along `axis`, on blocks
/// whose shuffles span `wave_lanes`, runs as a chain
/// ([`Lowerer::chain_reduce`]): the layout has the chain's shape.
pub(crate) fn reduces_as_chain(layout: &DistLayout, axis: usize, wave_lanes: u32) -> bool {
    chain(layout, axis, wave_lanes).is_some()
}

/// Where a chain's turns read: the width of its shuffles and, where the
/// axis's lanes are not the low bits of the lane index, the executing
/// thread's other lane bits, which each source lane keeps.
struct Reads {
    width: u32,
    others: Option<Reg>,
}

impl Lowerer<'_> {
    /// Where the turns of `chain` read. Where the axis's lanes are the low
    /// bits of the lane index, each segment of that many lanes is one chain
    /// and its turns read constant lanes of it, which the AMD back end
    /// reads by an immediate pattern; otherwise each thread's source keeps
    /// its other lane bits, across the whole span.
    fn reads(&mut self, chain: &Chain) -> Reads {
        let low = chain.axis_mask & (chain.axis_mask + 1) == 0;
        let width = if low { chain.axis_mask + 1 } else { chain.span };
        let others = (!low).then(|| {
            let tid = self.thread_id();
            let lane_bits = i64::from(!chain.axis_mask & (chain.span - 1));
            self.hoist_with_const(BinaryOp::And, tid, lane_bits)
        });
        Reads { width, others }
    }

    /// The lane a turn at the lane position of axis bits `bits` reads:
    /// hoisted into the prologue, or computed where it is read.
    fn source(&mut self, reads: &Reads, bits: u32, hoisted: bool) -> Reg {
        let bits = i64::from(bits);
        match reads.others {
            Some(others) if hoisted => self.hoist_with_const(BinaryOp::Or, others, bits),
            Some(others) => {
                let bits = self.i32c(bits);
                self.binary(BinaryOp::Or, others, bits)
            }
            None => self.i32c(bits),
        }
    }

    /// The fold with `op` of the registers `run` of `regs`, from `carry`
    /// (from the run's first element where there is none): each step's
    /// value.
    fn fold_run(
        &mut self,
        (op, dtype): (BinaryOp, DType),
        carry: Option<Reg>,
        run: &[usize],
        regs: &[Reg],
    ) -> Vec<Reg> {
        let mut acc = carry;
        run.iter()
            .map(|&v| {
                let y = match acc {
                    Some(a) => self.emit(ThreadOpKind::Binary(op), vec![a, regs[v]], dtype),
                    None => regs[v],
                };
                acc = Some(y);
                y
            })
            .collect()
    }

    /// The reduction with `op` of `regs` (in `layout`) along `axis`, in the
    /// interpreter's order, as a scan's chain whose every turn, the last
    /// included, passes its lane's total on (the module docs): after the
    /// last turn every lane along the axis holds its row's total. A turn
    /// folds only the elements of its run inside the tile, and the turns
    /// past the tile's extent (where the layout pads the axis) are left
    /// out. The results are in `to`, the operand's layout with the axis
    /// sliced or dropped, register for register; `None` where the layout
    /// does not have the chain's shape ([`reduces_as_chain`]).
    pub(super) fn chain_reduce(
        &mut self,
        (op, dtype): (BinaryOp, DType),
        axis: usize,
        (layout, regs): (&DistLayout, &[Reg]),
        to: &DistLayout,
    ) -> Option<Vec<Reg>> {
        let chain = chain(layout, axis, self.wave_lanes())?;
        let extent = layout.shape[axis];
        let reads = self.reads(&chain);
        let rows = self.coords(to);
        let shuffle = ThreadOpKind::Shuffle {
            mode: ShuffleMode::Idx,
            width: reads.width as u8,
        };
        let mut partials = Vec::new();
        let positions = chain.positions.len();
        for row in &chain.rows {
            let mut carry: Option<Reg> = None;
            for (c, run) in row.iter().enumerate() {
                for (i, &bits) in chain.positions.iter().enumerate() {
                    // The run of the lane at this turn's position starts at
                    // `start` along the axis; its elements past the extent
                    // are padding.
                    let start = (c * positions + i) * chain.run;
                    let live = extent.saturating_sub(start).min(chain.run);
                    let Some(run) = run.get(..live).filter(|r| !r.is_empty()) else {
                        break;
                    };
                    // Every lane folds its run from the carry, and the
                    // turn reads that lane's: no select, and the source
                    // computed where the turn reads it, not all of them
                    // live from the prologue (64 on a CDNA wave).
                    let total = *self.fold_run((op, dtype), carry, run, regs).last()?;
                    let source = self.source(&reads, bits, false);
                    carry = Some(self.emit(shuffle.clone(), vec![total, source], dtype));
                }
            }
            partials.push((rows.representative[*row.first()?.first()?], carry?));
        }
        Some(Self::row_results(regs, &rows.representative, &partials))
    }

    /// The scan with `op` of `regs` (in `layout`) along `axis` as a chain
    /// through the lanes (the module docs), in `layout`; `None` where the
    /// layout does not have the chain's shape.
    pub(super) fn chain_scan(
        &mut self,
        op: BinaryOp,
        dtype: DType,
        axis: usize,
        layout: &DistLayout,
        regs: &[Reg],
    ) -> Option<Vec<Reg>> {
        let chain = chain(layout, axis, self.wave_lanes())?;
        let coords = self.coords(layout);
        let own = coords.axes[chain.first][axis];
        let reads = self.reads(&chain);
        let width = reads.width;
        let sources: Vec<Reg> = chain
            .positions
            .iter()
            .map(|&bits| self.source(&reads, bits, true))
            .collect();
        let at: Vec<Reg> = (0..chain.positions.len())
            .map(|i| {
                let q = self.i32c((i * chain.run) as i64);
                self.hoist(ThreadOpKind::Cmp(CmpPred::Eq), vec![own, q], DType::Bool)
            })
            .collect();
        let combine =
            |s: &mut Self, a: Reg, b: Reg| s.emit(ThreadOpKind::Binary(op), vec![a, b], dtype);
        let mut out = regs.to_vec();
        for row in &chain.rows {
            let mut carry: Option<Reg> = None;
            for (c, run) in row.iter().enumerate() {
                // The carry-in of the thread's run; the first thread of the
                // first chunk has none.
                let mut carry_in = regs[run[0]];
                for (i, (&source, &here)) in sources.iter().zip(&at).enumerate() {
                    // The lane at position `i` takes the carry as its
                    // carry-in and folds from it: the turn's shuffle then
                    // reads the select, so each carry dies at its turn
                    // rather than living until the last.
                    let from = carry.map(|cr| {
                        carry_in = self.select(here, cr, carry_in);
                        carry_in
                    });
                    let last = c + 1 == row.len() && i + 1 == sources.len();
                    if !last {
                        let total = *self.fold_run((op, dtype), from, run, regs).last()?;
                        let kind = ThreadOpKind::Shuffle {
                            mode: ShuffleMode::Idx,
                            width: width as u8,
                        };
                        carry = Some(self.emit(kind, vec![total, source], dtype));
                    }
                }
                let mut y = combine(self, carry_in, regs[run[0]]);
                if c == 0 {
                    y = self.select(at[0], regs[run[0]], y);
                }
                out[run[0]] = y;
                for (&v, y) in
                    run[1..]
                        .iter()
                        .zip(self.fold_run((op, dtype), Some(y), &run[1..], regs))
                {
                    out[v] = y;
                }
            }
        }
        Some(out)
    }
}

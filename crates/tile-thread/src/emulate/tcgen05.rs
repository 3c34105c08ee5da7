//! Blackwell's tensor memory and `tcgen05.mma` ([`tile_hw::tcgen05`]):
//!
//! * `tmem.alloc` by warp 0 takes columns from 0 (one allocation at a time,
//!   none after the block's last: the lowering allocates once) and writes
//!   the address to its word of shared memory as thread 0's store; the
//!   block must free it (`tmem.dealloc`, nothing in flight) before it ends.
//! * `tcgen05.mma` reads its operands from shared memory at issue, as the
//!   issuing thread (race-checked, each written element fenced by its
//!   writer's `fence.proxy.async`), and computes D, which lands in tensor
//!   memory only at that thread's next `tcgen05.commit_wait`: until then a
//!   load or store of those cells is an error, as on a GPU they are still
//!   being written. An A in tensor memory is read at issue too, and its
//!   cells stay reserved until that commit: a store to them before it is
//!   an error, as on a GPU the product may not have read them yet. So are
//!   a block-scaled product's scale images, every quarter's copy read
//!   (copies that differ are an error).
//! * Every cell remembers the thread that last reached it and the block
//!   barrier it did so after: another thread reaching it before a barrier
//!   is a race (a `tcgen05.mma` reads and writes all of D; its results, once
//!   landed, every thread has waited for).

use super::{address, Emulator, LockstepError, LockstepFault, Operands};
use crate::program::{DescriptorSwizzle, OpId, SharedId, Tcgen05Kind};
use std::collections::HashMap;
use tile_hw::mbarrier::Wait;
use tile_hw::tcgen05::{
    self, block_mma, block_mma_scaled, split_address, COLUMNS, LANES, M, WARP_LANES,
};
use tile_hw::wgmma::{b_swizzle, Major};
use tile_ir::Scalar;

/// The block's tensor memory.
#[derive(Clone, Debug)]
pub(super) struct TensorMemory {
    /// Each cell's bits, lane-major.
    cells: Vec<u32>,
    /// Who last reached each cell: thread and barrier count.
    last: Vec<Option<(u32, u64)>>,
    /// The block barriers so far.
    epoch: u64,
    /// The columns allocated (from 0), if any.
    allocated: Option<u32>,
    /// The cells products issued and not yet landed write: the issuing
    /// thread and the latest value.
    in_flight: HashMap<usize, (u32, u32)>,
    /// The cells products issued and not yet landed read (an A in tensor
    /// memory): the issuing thread.
    reading: HashMap<usize, u32>,
}

impl Default for TensorMemory {
    fn default() -> Self {
        TensorMemory {
            cells: vec![0; LANES * COLUMNS],
            last: vec![None; LANES * COLUMNS],
            epoch: 0,
            allocated: None,
            in_flight: HashMap::new(),
            reading: HashMap::new(),
        }
    }
}

impl TensorMemory {
    /// A block barrier: accesses before it are ordered before those after.
    pub(super) fn barrier(&mut self) {
        self.epoch += 1;
    }

    /// Why the block may not end now, if it may not.
    pub(super) fn at_exit(&self) -> Option<String> {
        self.allocated.map(|columns| {
            format!("{columns} columns of tensor memory are still allocated when the block ends")
        })
    }
}

/// Where a `tcgen05.mma` reads its A.
#[derive(Clone, Copy)]
pub(super) enum SourceA {
    /// Shared memory, laid out with this swizzle.
    Shared(SharedId, DescriptorSwizzle),
    /// Tensor memory.
    Tensor,
}

/// The threads whose `mask` holds.
fn masked(mask: &[Scalar]) -> Vec<usize> {
    let holds = |(t, m): (usize, &Scalar)| (*m == Scalar::Bool(true)).then_some(t);
    mask.iter().enumerate().filter_map(holds).collect()
}

/// The bits thread `t` stores in column `r` of a `tmem.store` of `values`:
/// value `r`'s, or for 16-bit (8-bit) values two (four) of them packed,
/// the first in the low bits.
fn column_bits(values: &[Vec<Scalar>], r: usize, t: usize) -> u32 {
    let bytes = values.first().map_or(4, |v| v[t].dtype().size_bytes());
    let per = 4 / bytes.clamp(1, 4);
    let mask = u32::MAX >> (32 - 32 / per as u32);
    (0..per).fold(0, |word, i| {
        let bits = values[per * r + i][t].to_bits() as u32 & mask;
        word | bits << (32 / per * i)
    })
}

/// The index of `lane`, `column`.
fn cell(lane: usize, column: usize) -> usize {
    lane * COLUMNS + column
}

impl Emulator<'_> {
    fn tmem_fault(&self, id: OpId, thread: Option<u32>, what: String) -> LockstepError {
        self.error(Some(id), thread, LockstepFault::TensorMemory(what))
    }

    /// Warp 0's `tmem.alloc` of `columns` into word `index` of `slot`.
    pub(super) fn tmem_alloc(
        &mut self,
        id: OpId,
        (columns, slot): (u16, SharedId),
        x: &Operands<'_>,
    ) -> Result<(), LockstepError> {
        let index = self.uniform_address(id, self.role(id, x, "index")?, WARP_LANES)?;
        if self.tmem.allocated.is_some() {
            let what = "tensor memory allocated again while allocated".to_string();
            return Err(self.tmem_fault(id, Some(0), what));
        }
        if tcgen05::allocation_columns(usize::from(columns)) != Some(u32::from(columns)) {
            return Err(self.tmem_fault(
                id,
                Some(0),
                format!("an allocation of {columns} columns"),
            ));
        }
        self.tmem.allocated = Some(u32::from(columns));
        self.shared
            .store(
                slot.index(),
                index,
                Scalar::I32(tcgen05::address(0, 0) as i32),
                0,
                id,
            )
            .map_err(|c| self.race(id, slot.index(), index, 0, true, c))
    }

    /// Warp 0's `tmem.dealloc` of `columns` at `address`.
    pub(super) fn tmem_dealloc(
        &mut self,
        id: OpId,
        columns: u16,
        x: &Operands<'_>,
    ) -> Result<(), LockstepError> {
        let at = self.uniform_address(id, self.role(id, x, "address")?, WARP_LANES)?;
        if self.tmem.allocated != Some(u32::from(columns)) || at != 0 {
            let what = format!(
                "{columns} columns freed at {at:#x}, where {} are allocated at 0",
                self.tmem.allocated.unwrap_or(0)
            );
            return Err(self.tmem_fault(id, Some(0), what));
        }
        if let Some(&(thread, _)) = self.tmem.in_flight.values().next() {
            let what = format!("freed while a tcgen05.mma of thread {thread} is in flight");
            return Err(self.tmem_fault(id, Some(0), what));
        }
        self.tmem.allocated = None;
        Ok(())
    }

    /// The products of a `tcgen05.mma` where the mask holds: D computed
    /// now, landing at the issuer's commit; A, where in tensor memory, and
    /// the scales of a block-scaled one (byte `scaled` of their images)
    /// read until then.
    pub(super) fn tcgen05_products(
        &mut self,
        id: OpId,
        (kind, source, b): (Tcgen05Kind, SourceA, SharedId),
        scaled: Option<u8>,
        x: &Operands<'_>,
    ) -> Result<(), LockstepError> {
        let images = match scaled {
            Some(_) => Some(self.roles(id, x, ["sa", "sb"])?),
            None => None,
        };
        let a_role = match source {
            SourceA::Shared(..) => "ia",
            SourceA::Tensor => "a",
        };
        let [ia, ib, d_at, accumulate, mask] =
            self.roles(id, x, [a_role, "ib", "d", "accumulate", "mask"])?;
        for t in masked(mask) {
            let thread = t as u32;
            let (lane, column) = split_address(address(d_at[t]) as u32);
            let column = column as usize;
            self.tmem_block(id, thread, (lane, column, kind.n), "D")?;
            let cells: Vec<usize> = (0..M * kind.n)
                .map(|e| cell(e / kind.n, column + e % kind.n))
                .collect();
            let mut d = Vec::with_capacity(cells.len());
            for &c in &cells {
                self.tmem_touch(id, thread, c)?;
                // A product this thread issued earlier lands first.
                let pending = self.tmem.in_flight.get(&c).map(|&(_, v)| v);
                d.push(f32::from_bits(pending.unwrap_or(self.tmem.cells[c])));
            }
            let k = kind.k();
            let matrix_a = match source {
                SourceA::Shared(a, a_swizzle) => {
                    let at_a = (a, address(ia[t]));
                    let bits_a = self.operand(id, at_a, (M, k), (a_swizzle, Major::K), thread)?;
                    bits_a.iter().map(|&v| kind.widen(v)).collect()
                }
                SourceA::Tensor => self.tensor_a(id, thread, kind, address(ia[t]) as u32)?,
            };
            let a_swizzle = match source {
                SourceA::Shared(_, swizzle) => swizzle,
                // B is staged under the 128-byte swizzle: a product reads
                // its A from tensor memory only then (`tensor_a_columns`).
                SourceA::Tensor => DescriptorSwizzle::B128,
            };
            let b_layout = (b_swizzle(a_swizzle, kind.b_major), kind.b_major);
            let at_b = (b, address(ib[t]));
            let bits_b = self.operand(id, at_b, (kind.n, k), b_layout, thread)?;
            // B is read as (n, k): transposed to row-major K × N.
            let matrix_b: Vec<f32> = (0..k * kind.n)
                .map(|e| kind.widen(bits_b[(e % kind.n) * k + e / kind.n]))
                .collect();
            let accumulate = accumulate[t] == Scalar::Bool(true);
            let computed = match (images, scaled) {
                (Some([sa, sb]), Some(byte)) => {
                    let at = |image: &[Scalar]| address(image[t]) as u32;
                    let sa = self.scales(id, thread, (at(sa), M), byte)?;
                    let sb = self.scales(id, thread, (at(sb), kind.n), byte)?;
                    let operands = (&matrix_a[..], &matrix_b[..]);
                    block_mma_scaled(kind, operands, [&sa, &sb], &mut d, accumulate)
                }
                _ => block_mma(kind, &matrix_a, &matrix_b, &mut d, accumulate),
            };
            computed.map_err(|what| self.tmem_fault(id, Some(thread), what))?;
            for (c, v) in cells.into_iter().zip(d) {
                self.tmem.in_flight.insert(c, (thread, v.to_bits()));
            }
        }
        Ok(())
    }

    /// An error unless `columns` columns from `column` at `lane` are a
    /// product's operand `what` inside the allocation (lane 0).
    fn tmem_block(
        &self,
        id: OpId,
        thread: u32,
        (lane, column, columns): (u32, usize, usize),
        what: &str,
    ) -> Result<(), LockstepError> {
        let end = column + columns;
        let allocated = self.tmem.allocated.unwrap_or(0) as usize;
        if lane != 0 || end > allocated {
            let what = format!(
                "{what} at lane {lane}, columns {column}..{end} outside the {allocated} columns allocated"
            );
            return Err(self.tmem_fault(id, Some(thread), what));
        }
        Ok(())
    }

    /// The 128×`K` A of `kind` that `thread`'s product reads from tensor
    /// memory at `at`: read at issue, its cells then reserved until the
    /// thread's commit (a store to them before it is an error).
    fn tensor_a(
        &mut self,
        id: OpId,
        thread: u32,
        kind: Tcgen05Kind,
        at: u32,
    ) -> Result<Vec<f32>, LockstepError> {
        let (lane, column) = split_address(at);
        let columns = tcgen05::tensor_a_columns(kind);
        self.tmem_block(id, thread, (lane, column as usize, columns), "A")?;
        tcgen05::read_tensor_a(kind, column as usize, |lane, column| {
            let c = cell(lane, column);
            self.tmem_touch(id, thread, c)?;
            if self.tmem.in_flight.contains_key(&c) {
                let what = format!(
                    "A at lane {lane}, column {column} is read while a tcgen05.mma is still writing it"
                );
                return Err(self.tmem_fault(id, Some(thread), what));
            }
            self.tmem.reading.insert(c, thread);
            Ok(self.tmem.cells[c])
        })
    }

    /// The `rows` scales of the image at `at` that `thread`'s product reads
    /// from byte `byte`: read at issue, its cells then reserved until the
    /// thread's commit, as an A's are.
    fn scales(
        &mut self,
        id: OpId,
        thread: u32,
        (at, rows): (u32, usize),
        byte: u8,
    ) -> Result<Vec<u32>, LockstepError> {
        let (lane, column) = split_address(at);
        let columns = tcgen05::scale_columns(rows);
        self.tmem_block(id, thread, (lane, column as usize, columns), "scales")?;
        let read = (rows, column as usize, u32::from(byte));
        let scales = tcgen05::read_scales(read, |lane, column| {
            let c = cell(lane, column);
            self.tmem_touch(id, thread, c)?;
            if self.tmem.in_flight.contains_key(&c) {
                let what = format!(
                    "scales at lane {lane}, column {column} are read while a tcgen05.mma is still writing them"
                );
                return Err(self.tmem_fault(id, Some(thread), what));
            }
            self.tmem.reading.insert(c, thread);
            Ok(self.tmem.cells[c])
        })?;
        scales.map_err(|what| self.tmem_fault(id, Some(thread), what))
    }

    /// `tcgen05.commit_wait` on the barrier at `index` of `bar`, the masked
    /// thread committing: its products land, and every thread has waited
    /// for them.
    pub(super) fn tcgen05_commit_wait(
        &mut self,
        id: OpId,
        bar: SharedId,
        x: &Operands<'_>,
    ) -> Result<(), LockstepError> {
        let [index, mask] = self.roles(id, x, ["index", "mask"])?;
        let index = self.uniform_address(id, index, self.threads as usize)?;
        let parity = self.barrier_of(id, (bar, index), 0)?.phase();
        for t in 1..self.threads {
            self.barrier_of(id, (bar, index), t)?;
        }
        for t in masked(mask) {
            let barrier = self.barrier_of(id, (bar, index), t as u32)?;
            if barrier.arrive_expect_tx(0).is_err() {
                let what = format!(
                    "@s{}[{index}] arrived at more often than its count",
                    bar.index()
                );
                return Err(self.error(Some(id), Some(t as u32), LockstepFault::Mbarrier(what)));
            }
            let tm = &mut self.tmem;
            tm.in_flight.retain(|&c, &mut (issuer, v)| {
                let lands = issuer == t as u32;
                if lands {
                    tm.cells[c] = v;
                    tm.last[c] = None;
                }
                !lands
            });
            // Every thread waits for the commit: its reads are done before
            // what any thread does next.
            tm.reading.retain(|&c, &mut issuer| {
                let done = issuer == t as u32;
                if done {
                    tm.last[c] = None;
                }
                !done
            });
        }
        let barrier = self.barrier_of(id, (bar, index), 0)?;
        match barrier.wait(parity) {
            Ok(Wait::Finished(_)) => Ok(()),
            Ok(Wait::Over) | Err(_) => {
                let what = format!(
                    "@s{}[{index}]: the phase waited for cannot finish (no thread committed, or other arrivals are missing): the block would hang",
                    bar.index()
                );
                Err(self.error(Some(id), None, LockstepFault::Mbarrier(what)))
            }
        }
    }

    /// A warp's `tmem.load` of `columns` (a `store` of its values) at
    /// `address`: each thread's row of its warp's lanes; the loaded values.
    pub(super) fn tmem_access(
        &mut self,
        id: OpId,
        columns: usize,
        x: &Operands<'_>,
        store: bool,
    ) -> Result<Vec<Vec<Scalar>>, LockstepError> {
        let at = self.role(id, x, "address")?;
        let values = x.list("values");
        let threads = self.threads as usize;
        let mut results = vec![vec![Scalar::F32(0.0); threads]; if store { 0 } else { columns }];
        for warp in 0..threads / WARP_LANES {
            let base = self.uniform_address(id, &at[warp * WARP_LANES..], WARP_LANES)?;
            let (lane0, column) = split_address(base as u32);
            let allocated = self.tmem.allocated.unwrap_or(0) as usize;
            if lane0 != 0 || column as usize + columns > allocated {
                let what = format!(
                    "warp {warp} reaches columns {column}..{} at lane {lane0}, outside the {allocated} columns allocated",
                    column as usize + columns
                );
                return Err(self.tmem_fault(id, Some((warp * WARP_LANES) as u32), what));
            }
            for l in 0..WARP_LANES {
                let t = warp * WARP_LANES + l;
                for r in 0..columns {
                    let (row, col) = tcgen05::load_element(warp % 4, l, r);
                    let c = cell(row, column as usize + col);
                    self.tmem_touch(id, t as u32, c)?;
                    if self.tmem.in_flight.contains_key(&c) {
                        let what = format!(
                            "lane {row}, column {} is reached while a tcgen05.mma is still writing it (no tcgen05.commit_wait since)",
                            column as usize + col
                        );
                        return Err(self.tmem_fault(id, Some(t as u32), what));
                    }
                    if store && self.tmem.reading.contains_key(&c) {
                        let what = format!(
                            "lane {row}, column {} is written while a tcgen05.mma still reads it as A (no tcgen05.commit_wait since)",
                            column as usize + col
                        );
                        return Err(self.tmem_fault(id, Some(t as u32), what));
                    }
                    if store {
                        self.tmem.cells[c] = column_bits(values, r, t);
                    } else if let Some(loaded) = results.get_mut(r) {
                        loaded[t] = Scalar::F32(f32::from_bits(self.tmem.cells[c]));
                    }
                }
            }
        }
        Ok(results)
    }

    /// Records `thread` reaching cell `c`: an error if another thread
    /// reached it since the last block barrier.
    fn tmem_touch(&mut self, id: OpId, thread: u32, c: usize) -> Result<(), LockstepError> {
        let epoch = self.tmem.epoch;
        if let Some((other, at)) = self.tmem.last[c] {
            if other != thread && at == epoch {
                let what = format!(
                    "lane {}, column {} is reached by threads {other} and {thread} with no barrier between",
                    c / COLUMNS,
                    c % COLUMNS
                );
                return Err(self.tmem_fault(id, Some(thread), what));
            }
        }
        self.tmem.last[c] = Some((thread, epoch));
        Ok(())
    }

    /// The value of `regs` in its first `group` threads, which must agree.
    fn uniform_address(
        &self,
        id: OpId,
        regs: &[Scalar],
        group: usize,
    ) -> Result<i64, LockstepError> {
        let group = &regs[..group.min(regs.len())];
        let first = address(group[0]);
        match group.iter().all(|&r| address(r) == first) {
            true => Ok(first),
            false => {
                let what = "threads that act together pass different addresses".to_string();
                Err(self.tmem_fault(id, None, what))
            }
        }
    }
}

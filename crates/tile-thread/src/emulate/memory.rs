//! Emulated memories: global tensors on host buffers, and per-block shared
//! memory that records every access since the last barrier to find races.

use super::error::LockstepFault;
use crate::program::{OpId, Program};
use tile_hw::happens::{Sync, ThreadId};
use tile_hw::races::Place;
pub(super) use tile_hw::races::Touch;
use tile_ir::interp::HostTensor;
use tile_ir::{DType, Scalar};

/// A tensor argument in global memory.
pub(super) struct Global {
    /// The parameter's name.
    pub name: String,
    dtype: DType,
    shape: Vec<usize>,
    strides: Vec<isize>,
    /// The buffer offset of element zero.
    base: usize,
    data: Vec<u8>,
    /// The lowest and highest element offsets reachable from element zero.
    low: i64,
    high: i64,
    /// Per buffer element, the threads that read, wrote and atomically
    /// updated it during the launch, and when (empty until the first
    /// access).
    touches: Vec<Place>,
}

impl Global {
    /// Copies a host tensor into emulated global memory.
    pub fn new(name: &str, t: &HostTensor) -> Global {
        let (mut low, mut high) = (0i64, 0i64);
        for (&extent, &stride) in t.shape().iter().zip(t.strides()) {
            let span = (extent as i64 - 1).max(0) * stride as i64;
            low += span.min(0);
            high += span.max(0);
        }
        if t.numel() == 0 {
            // Nothing is reachable: every access is out of bounds.
            (low, high) = (0, -1);
        }
        Global {
            name: name.to_string(),
            dtype: t.dtype(),
            shape: t.shape().to_vec(),
            strides: t.strides().to_vec(),
            base: t.offset(),
            data: t.data().to_vec(),
            low,
            high,
            touches: Vec::new(),
        }
    }

    /// Records that `who` touches the element at `address` now (in
    /// `sync`); an error if that races with an earlier access. Returns the
    /// element's place in the buffer.
    pub fn touch(
        &mut self,
        address: i64,
        (sync, who): (&Sync, ThreadId),
        touch: Touch,
    ) -> Result<usize, LockstepFault> {
        let at = self.place(address, touch.name())?;
        if self.touches.is_empty() {
            let elements = self.data.len() / self.dtype.size_bytes().max(1);
            self.touches = vec![Place::default(); elements];
        }
        let Some(element) = self.touches.get_mut(at) else {
            return Err(LockstepFault::Malformed(format!(
                "element {at} outside the buffer"
            )));
        };
        element
            .access(sync, who, touch)
            .map_err(|earlier| LockstepFault::GlobalRace {
                param: self.name.clone(),
                address,
                access: touch.described(),
                earlier: earlier.touch.described(),
                other: earlier.who,
            })?;
        Ok(at)
    }

    /// The tensor's extent along `axis`, as the `i32` the program sees.
    pub fn dim(&self, axis: usize) -> Option<Scalar> {
        let e = *self.shape.get(axis)?;
        Some(Scalar::I32(i32::try_from(e).unwrap_or(i32::MAX)))
    }

    /// The tensor's stride along `axis`, `i64`.
    pub fn stride(&self, axis: usize) -> Option<Scalar> {
        Some(Scalar::I64(*self.strides.get(axis)? as i64))
    }

    /// The alignment in bytes of element zero, `i64`: device buffers are
    /// 256-byte aligned (as `cudaMalloc`'s), so this is the largest power of
    /// two dividing the byte offset of element zero, at most 256.
    pub fn align(&self) -> Scalar {
        let bytes = self.base * self.dtype.size_bytes();
        let align = if bytes == 0 {
            256
        } else {
            (1usize << bytes.trailing_zeros()).min(256)
        };
        Scalar::I64(align as i64)
    }

    fn place(&self, address: i64, access: &'static str) -> Result<usize, LockstepFault> {
        let fault = || LockstepFault::GlobalOutOfBounds {
            access,
            param: self.name.clone(),
            address,
            low: self.low,
            high: self.high,
        };
        if address < self.low || address > self.high {
            return Err(fault());
        }
        usize::try_from(self.base as i64 + address).map_err(|_| fault())
    }

    /// The address of element zero in a buffer at address 0 (device
    /// buffers are 256-byte aligned, as `cudaMalloc`'s): what alignment
    /// checks see.
    pub fn base_address(&self) -> u64 {
        (self.base * self.dtype.size_bytes()) as u64
    }

    /// The dtype, shape and strides (in elements).
    pub fn layout(&self) -> (DType, &[usize], &[isize]) {
        (self.dtype, &self.shape, &self.strides)
    }

    /// The element at `address`.
    pub fn load(&self, address: i64) -> Result<Scalar, LockstepFault> {
        let at = self.place(address, "load")?;
        let size = self.dtype.size_bytes();
        self.data
            .get(at * size..)
            .and_then(|bytes| Scalar::read_le(self.dtype, bytes))
            .ok_or_else(|| LockstepFault::Malformed(format!("element {at} outside the buffer")))
    }

    /// Writes the element at `address`.
    pub fn store(&mut self, address: i64, value: Scalar) -> Result<(), LockstepFault> {
        let at = self.place(address, "store")?;
        if value.dtype() != self.dtype {
            return Err(LockstepFault::Malformed(format!(
                "a {} stored to a tensor of {}",
                value.dtype(),
                self.dtype
            )));
        }
        let size = self.dtype.size_bytes();
        self.data
            .get_mut(at * size..)
            .and_then(|bytes| value.write_le(bytes))
            .ok_or_else(|| LockstepFault::Malformed(format!("element {at} outside the buffer")))
    }

    /// The tensor with the emulated writes.
    pub fn into_tensor(self) -> Result<HostTensor, LockstepFault> {
        HostTensor::with_strides(self.dtype, &self.shape, &self.strides, self.base, self.data)
            .map_err(|e| LockstepFault::Malformed(e.to_string()))
    }
}

/// One access of a shared address in the current barrier interval.
#[derive(Clone, Copy)]
struct Access {
    thread: u32,
    op: OpId,
}

/// The accesses of one address in the current interval: the writer and up to
/// two readers of distinct threads (enough to find a reader other than any
/// given writer).
#[derive(Clone, Copy, Default)]
struct Record {
    interval: u64,
    writer: Option<Access>,
    readers: [Option<Access>; 2],
}

/// One block's shared memory.
pub(super) struct Shared {
    values: Vec<Vec<Option<Scalar>>>,
    records: Vec<Vec<Record>>,
    /// Per element, the `cp.async` writing it that has not landed.
    in_flight: Vec<Vec<Option<Access>>>,
    /// Per element, the thread whose write to it no `fence.proxy.async`
    /// has made visible to the asynchronous proxy yet.
    unfenced: Vec<Vec<Option<u32>>>,
    /// Incremented by each barrier; records of older intervals are stale.
    interval: u64,
}

/// A race found by [`Shared`]: the earlier access.
pub(super) struct Conflict {
    pub thread: u32,
    pub op: OpId,
    pub was_write: bool,
    /// The earlier access is a `cp.async` still in flight.
    pub in_flight: bool,
}

impl Shared {
    /// Fresh, uninitialized shared memory for `program`'s allocations.
    pub fn new(program: &Program) -> Shared {
        Shared {
            values: program
                .shared
                .iter()
                .map(|(_, a)| vec![None; a.len])
                .collect(),
            records: program
                .shared
                .iter()
                .map(|(_, a)| vec![Record::default(); a.len])
                .collect(),
            in_flight: program
                .shared
                .iter()
                .map(|(_, a)| vec![None; a.len])
                .collect(),
            unfenced: program
                .shared
                .iter()
                .map(|(_, a)| vec![None; a.len])
                .collect(),
            interval: 1,
        }
    }

    /// A barrier: later accesses do not race with earlier ones.
    pub fn barrier(&mut self) {
        self.interval += 1;
    }

    fn slot(&self, alloc: usize, index: i64) -> Result<usize, LockstepFault> {
        let len = self.values.get(alloc).map_or(0, Vec::len);
        usize::try_from(index)
            .ok()
            .filter(|&i| i < len)
            .ok_or(LockstepFault::SharedOutOfBounds { alloc, index, len })
    }

    /// Reads `alloc[index]` by `thread` in `op`; `Err(Ok(conflict))` is a race.
    pub fn load(
        &mut self,
        alloc: usize,
        index: i64,
        thread: u32,
        op: OpId,
    ) -> Result<Scalar, Result<Conflict, LockstepFault>> {
        let i = self.slot(alloc, index).map_err(Err)?;
        self.not_in_flight(alloc, i)?;
        let interval = self.interval;
        let record = &mut self.records[alloc][i];
        if record.interval != interval {
            *record = Record {
                interval,
                ..Record::default()
            };
        }
        if let Some(w) = record.writer.filter(|w| w.thread != thread) {
            return Err(Ok(Conflict {
                thread: w.thread,
                op: w.op,
                was_write: true,
                in_flight: false,
            }));
        }
        let me = Access { thread, op };
        match record.readers {
            [None, _] => record.readers[0] = Some(me),
            [Some(a), None] if a.thread != thread => record.readers[1] = Some(me),
            _ => {}
        }
        self.values[alloc][i].ok_or(Err(LockstepFault::UninitializedShared { alloc, index: i }))
    }

    /// Writes `alloc[index]` by `thread` in `op`; `Err(Ok(conflict))` is a race.
    pub fn store(
        &mut self,
        alloc: usize,
        index: i64,
        value: Scalar,
        thread: u32,
        op: OpId,
    ) -> Result<(), Result<Conflict, LockstepFault>> {
        let i = self.slot(alloc, index).map_err(Err)?;
        self.not_in_flight(alloc, i)?;
        self.record_write(alloc, i, thread, op)?;
        self.values[alloc][i] = Some(value);
        self.unfenced[alloc][i] = Some(thread);
        Ok(())
    }

    /// `fence.proxy.async` in every thread: every earlier write is visible
    /// to the asynchronous proxy after the next barrier.
    pub fn fence_proxy(&mut self) {
        for alloc in &mut self.unfenced {
            alloc.fill(None);
        }
    }

    /// The thread whose write to `alloc[index]` no `fence.proxy.async` has
    /// covered, if any: an asynchronous-proxy read of it is not ordered
    /// after the write.
    pub fn unfenced_writer(&self, alloc: usize, index: i64) -> Option<u32> {
        let i = usize::try_from(index).ok()?;
        self.unfenced.get(alloc)?.get(i).copied().flatten()
    }

    /// A `cp.async` of `thread` in `op` starts writing `alloc[index]`: a
    /// write that may happen at once (checked as one now), and in flight
    /// until [`Shared::land_copy`], every access before which conflicts.
    pub fn start_copy(
        &mut self,
        alloc: usize,
        index: i64,
        thread: u32,
        op: OpId,
    ) -> Result<(), Result<Conflict, LockstepFault>> {
        let i = self.slot(alloc, index).map_err(Err)?;
        self.not_in_flight(alloc, i)?;
        self.record_write(alloc, i, thread, op)?;
        self.in_flight[alloc][i] = Some(Access { thread, op });
        Ok(())
    }

    /// The copy into `alloc[index]` lands with `value`: a write of its
    /// thread in the current interval.
    pub fn land_copy(
        &mut self,
        alloc: usize,
        index: i64,
        value: Scalar,
        thread: u32,
        op: OpId,
    ) -> Result<(), Result<Conflict, LockstepFault>> {
        let i = self.slot(alloc, index).map_err(Err)?;
        self.in_flight[alloc][i] = None;
        self.store(alloc, index, value, thread, op)
    }

    /// The TMA's copy into `alloc[index]` lands with `value`: as
    /// [`Shared::land_copy`], but a write of the asynchronous proxy, which
    /// `wgmma` reads with no `fence.proxy.async` between.
    pub fn land_async_copy(
        &mut self,
        alloc: usize,
        index: i64,
        value: Scalar,
        thread: u32,
        op: OpId,
    ) -> Result<(), Result<Conflict, LockstepFault>> {
        self.land_copy(alloc, index, value, thread, op)?;
        let i = self.slot(alloc, index).map_err(Err)?;
        self.unfenced[alloc][i] = None;
        Ok(())
    }

    /// A conflict if a copy into `alloc[i]` is in flight.
    fn not_in_flight(&self, alloc: usize, i: usize) -> Result<(), Result<Conflict, LockstepFault>> {
        match self.in_flight[alloc][i] {
            Some(copy) => Err(Ok(Conflict {
                thread: copy.thread,
                op: copy.op,
                was_write: true,
                in_flight: true,
            })),
            None => Ok(()),
        }
    }

    /// Records a write of `alloc[i]` by `thread` in `op` in the current
    /// interval, unless another thread touched it there.
    fn record_write(
        &mut self,
        alloc: usize,
        i: usize,
        thread: u32,
        op: OpId,
    ) -> Result<(), Result<Conflict, LockstepFault>> {
        let interval = self.interval;
        let record = &mut self.records[alloc][i];
        if record.interval != interval {
            *record = Record {
                interval,
                ..Record::default()
            };
        }
        let other = |a: &Option<Access>| a.filter(|a| a.thread != thread);
        if let Some(w) = other(&record.writer) {
            return Err(Ok(Conflict {
                thread: w.thread,
                op: w.op,
                was_write: true,
                in_flight: false,
            }));
        }
        if let Some(r) = record.readers.iter().find_map(other) {
            return Err(Ok(Conflict {
                thread: r.thread,
                op: r.op,
                was_write: false,
                in_flight: false,
            }));
        }
        record.writer = Some(Access { thread, op });
        Ok(())
    }
}

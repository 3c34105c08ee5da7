//! Stream capture and graphs.
//!
//! A stream in capture records the work enqueued on it instead of running
//! it: launches (with their parameters' bytes, copied at the call, as a
//! driver copies them, so the caller may free them once it returns),
//! copies and fills. Ending the capture on the stream that began it (the
//! origin) gives a graph: the recorded operations in enqueue order, which
//! a graph launch replays, in that order, on the calling thread.
//!
//! Other streams join a capture by waiting on an event recorded in it;
//! their work goes into the same graph. The capture ends only if every
//! joined stream's work is joined back: an ancestor of the origin's end
//! through event waits ([`Capture::unjoined`]); otherwise the end fails
//! with `STREAM_CAPTURE_UNJOINED`.
//!
//! What a capture forbids, as the CUDA programming guide's rules of stream
//! capture have it ([`Driver::admit`]):
//!
//! * synchronizing or querying a capturing stream, or the whole context
//!   while any capture is open: `STREAM_CAPTURE_UNSUPPORTED`, and the
//!   capture is invalidated;
//! * any use of the legacy stream while a blocking stream captures (the
//!   legacy stream would depend on it), synchronous copies and fills
//!   among them: `STREAM_CAPTURE_IMPLICIT`, and the capture is
//!   invalidated;
//! * calls a capture cannot see and that would break its graph
//!   (allocations, frees, synchronous copies and fills, module unloads,
//!   destroying an executable graph) while a capture forbids them to this
//!   thread: one begun in `GLOBAL` mode by any thread, or in
//!   `THREAD_LOCAL` mode by this one (`RELAXED` forbids nothing):
//!   `STREAM_CAPTURE_UNSUPPORTED`, and the capture is invalidated;
//! * waiting, in a capture, on an event recorded outside it:
//!   `STREAM_CAPTURE_ISOLATION`; on one recorded in another capture:
//!   `STREAM_CAPTURE_MERGE`; both invalidate.
//!
//! Once invalidated, work on the capture's streams fails with
//! `STREAM_CAPTURE_INVALIDATED` until the capture is ended, which fails
//! the same way and gives no graph.

use crate::driver::{self, Driver, Fault, Kernel, Loaded};
use crate::streams::{is_legacy, Mark};
use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::Arc;
use std::thread::ThreadId;

/// `STREAM_CAPTURE_UNSUPPORTED`: the operation is not permitted while the
/// stream captures.
pub(crate) const UNSUPPORTED: c_int = 900;
/// `STREAM_CAPTURE_INVALIDATED`: an earlier error invalidated the capture.
pub(crate) const INVALIDATED: c_int = 901;
/// `STREAM_CAPTURE_MERGE`: the operation would merge two captures.
pub(crate) const MERGE: c_int = 902;
/// `STREAM_CAPTURE_UNMATCHED`: the capture did not begin on this stream.
pub(crate) const UNMATCHED: c_int = 903;
/// `STREAM_CAPTURE_UNJOINED`: a joined stream's work is not joined back.
pub(crate) const UNJOINED: c_int = 904;
/// `STREAM_CAPTURE_ISOLATION`: a dependency on work outside the capture.
pub(crate) const ISOLATION: c_int = 905;
/// `STREAM_CAPTURE_IMPLICIT`: the legacy stream would depend on a
/// capturing blocking stream.
pub(crate) const IMPLICIT: c_int = 906;
/// `CAPTURED_EVENT`: the event was last recorded in a capture.
pub(crate) const CAPTURED_EVENT: c_int = 907;
/// `STREAM_CAPTURE_WRONG_THREAD`: a capture not begun `RELAXED` ended on
/// another thread.
pub(crate) const WRONG_THREAD: c_int = 908;
/// `ILLEGAL_STATE`: the stream is not in the state the call needs
/// (ending a capture that is not open, beginning one twice).
pub(crate) const ILLEGAL_STATE: c_int = 401;

/// `CUstreamCaptureStatus`: not capturing, capturing, invalidated.
pub(crate) const STATUS_NONE: c_int = 0;
pub(crate) const STATUS_ACTIVE: c_int = 1;
pub(crate) const STATUS_INVALIDATED: c_int = 2;

/// `CUstreamCaptureMode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Forbids unsafe calls to every thread.
    Global,
    /// Forbids unsafe calls to the thread that began it.
    ThreadLocal,
    /// Forbids nothing.
    Relaxed,
}

impl Mode {
    /// The mode of `CU_STREAM_CAPTURE_MODE_*` 0, 1, 2.
    pub(crate) fn from_raw(raw: c_int) -> Option<Mode> {
        [Mode::Global, Mode::ThreadLocal, Mode::Relaxed]
            .get(usize::try_from(raw).ok()?)
            .copied()
    }
}

/// A recorded operation.
pub(crate) enum Op {
    /// A kernel launch over `grid` blocks of `threads` threads, with a
    /// copy of its parameters' values (one 16-byte aligned buffer each, as
    /// CUDA's `kernelParams` points at them).
    Launch {
        loaded: Arc<Loaded>,
        kernel: Kernel,
        grid: [u32; 3],
        threads: u32,
        params: Vec<Vec<u128>>,
    },
    /// A copy; `device` says which ends are device addresses.
    Copy {
        to: u64,
        from: u64,
        bytes: usize,
        device: [bool; 2],
    },
    /// A fill of `count` values of `width` bytes.
    Fill {
        to: u64,
        value: u32,
        width: usize,
        count: usize,
    },
}

impl Op {
    /// Whether a copy's or fill's device ranges lie inside allocations the
    /// device addresses, and its host ends are not null.
    pub(crate) fn in_bounds(&self) -> bool {
        match *self {
            Op::Launch { .. } => true,
            Op::Copy {
                to,
                from,
                bytes,
                device,
            } => driver::copyable(to, from, bytes, device),
            Op::Fill {
                to, width, count, ..
            } => driver::fillable(to, width, count),
        }
    }

    /// Runs the operation, as a replay of its graph does; a copy or fill
    /// whose memory is gone since the capture faults, as on hardware.
    ///
    /// # Safety
    ///
    /// A copy's host end is valid for its bytes, as the driver API
    /// requires of copies and of a graph's memcpy nodes.
    pub(crate) unsafe fn run(&self) -> Result<(), Fault> {
        let gone = |what: &str| {
            eprintln!("tile-standin: a graph's {what} reaches memory outside every allocation");
            Fault::IllegalAddress
        };
        match self {
            Op::Launch {
                loaded,
                kernel,
                grid,
                threads,
                params,
            } => {
                let pointers: Vec<*const u128> = params.iter().map(|b| b.as_ptr()).collect();
                // SAFETY: one buffer per parameter, each holding the
                // parameter's bytes, copied at capture.
                unsafe { driver::run(loaded, kernel, *grid, *threads, pointers.as_ptr().cast()) }
            }
            &Op::Copy {
                to,
                from,
                bytes,
                device,
            } => driver::copy(to, from, bytes, device).map_err(|()| gone("copy")),
            &Op::Fill {
                to,
                value,
                width,
                count,
            } => driver::fill(to, value, width, count).map_err(|()| gone("fill")),
        }
    }
}

/// Replays `ops` in order; the first fault stops it.
///
/// # Safety
///
/// As [`Op::run`], for each operation.
pub(crate) unsafe fn replay(ops: &[Op]) -> Result<(), Fault> {
    // SAFETY: the caller's contract.
    ops.iter().try_for_each(|op| unsafe { op.run() })
}

/// What one stream did in a capture: its items (operations and waits) in
/// order, numbered from 1.
#[derive(Default)]
struct Lane {
    /// Its items so far.
    items: u64,
    /// The number of its last operation (0: none).
    last_op: u64,
    /// Its waits on events of the capture: (its item, the event's stream,
    /// that stream's items the event follows).
    waits: Vec<(u64, u64, u64)>,
}

/// An open capture.
pub(crate) struct Capture {
    /// The stream that began it.
    origin: u64,
    mode: Mode,
    /// The thread that began it.
    thread: ThreadId,
    /// Whether a forbidden call invalidated it.
    invalidated: bool,
    /// The operations, in enqueue order.
    ops: Vec<Op>,
    /// The streams in it, the origin among them.
    lanes: HashMap<u64, Lane>,
}

impl Capture {
    /// Whether it forbids unsafe calls to the calling thread.
    fn forbids_unsafe(&self) -> bool {
        match self.mode {
            Mode::Global => true,
            Mode::ThreadLocal => self.thread == std::thread::current().id(),
            Mode::Relaxed => false,
        }
    }

    /// Whether some joined stream has an operation that the origin's end
    /// does not follow through event waits. The origin's end follows all
    /// its items; an item of a stream reached up to item `n` is followed
    /// if its number is at most `n`, and a followed wait on an event
    /// reaches the event's stream up to the items the event follows.
    fn unjoined(&self) -> bool {
        let mut reached = HashMap::from([(self.origin, u64::MAX)]);
        let mut work = vec![self.origin];
        while let Some(stream) = work.pop() {
            let upto = reached[&stream];
            let Some(lane) = self.lanes.get(&stream) else {
                continue;
            };
            for &(item, other, items) in &lane.waits {
                if item <= upto && reached.get(&other).is_none_or(|&r| r < items) {
                    reached.insert(other, items);
                    work.push(other);
                }
            }
        }
        self.lanes
            .iter()
            .any(|(stream, lane)| lane.last_op > reached.get(stream).copied().unwrap_or(0))
    }
}

/// Why [`Driver::enqueue`] refuses an operation.
pub(crate) enum Denied {
    /// A stream handle the driver did not hand out.
    Handle,
    /// A range outside the allocations, a null host pointer.
    Value,
    /// An earlier launch's fault, sticky.
    Fault(Fault),
    /// The rules of capture: the code.
    Capture(c_int),
}

/// How a call uses the streams, for [`Driver::admit`].
#[derive(Clone, Copy)]
pub(crate) enum Use {
    /// Enqueues work on the stream.
    Enqueue(u64),
    /// Synchronizes or queries the stream.
    Wait(u64),
    /// Synchronizes the whole context.
    WaitAll,
    /// A synchronous copy or fill: legacy-stream work, and unsafe.
    SyncCopy,
    /// A call the capture cannot see (an allocation, a free).
    Unsafe,
}

impl Driver {
    /// Invalidates capture `capture`; whether it already was.
    pub(crate) fn invalidate(&mut self, capture: u64) -> bool {
        self.captures
            .get_mut(&capture)
            .is_some_and(|c| std::mem::replace(&mut c.invalidated, true))
    }

    /// Invalidates every capture `pick` picks; whether there was one.
    fn invalidate_all(&mut self, pick: impl Fn(&Driver, &Capture) -> bool) -> bool {
        let picked: Vec<u64> = (self.captures.iter())
            .filter(|(_, c)| pick(self, c))
            .map(|(&id, _)| id)
            .collect();
        for &id in &picked {
            self.invalidate(id);
        }
        !picked.is_empty()
    }

    /// Whether a blocking stream is in `capture`: then the legacy stream
    /// would depend on it.
    fn holds_blocking(&self, capture: &Capture) -> bool {
        (capture.lanes.keys()).any(|&s| !self.stream(s).is_some_and(|s| s.non_blocking))
    }

    /// Whether a call that `usage` describes may run now, under the rules
    /// of stream capture (module docs): `Ok(Some(capture))` if it is to be
    /// recorded into `capture`, `Ok(None)` if it is to run, or the code it
    /// fails with (the capture it breaks is invalidated). Handles are
    /// checked before.
    pub(crate) fn admit(&mut self, usage: Use) -> Result<Option<u64>, c_int> {
        let on_legacy = match usage {
            Use::Enqueue(s) | Use::Wait(s) => is_legacy(s),
            Use::SyncCopy => true,
            Use::WaitAll | Use::Unsafe => false,
        };
        if on_legacy && self.invalidate_all(Driver::holds_blocking) {
            return Err(IMPLICIT);
        }
        match usage {
            Use::Enqueue(stream) => match self.capture_of(stream) {
                Some(c) if self.captures[&c].invalidated => Err(INVALIDATED),
                found => Ok(found),
            },
            Use::Wait(stream) => match self.capture_of(stream) {
                Some(c) if self.invalidate(c) => Err(INVALIDATED),
                Some(_) => Err(UNSUPPORTED),
                None => Ok(None),
            },
            Use::WaitAll if self.invalidate_all(|_, _| true) => Err(UNSUPPORTED),
            Use::SyncCopy | Use::Unsafe if self.invalidate_all(|_, c| c.forbids_unsafe()) => {
                Err(UNSUPPORTED)
            }
            _ => Ok(None),
        }
    }

    /// Enqueues a copy or fill `op` on `stream`: recorded if the stream
    /// captures, else run now. Checked as a driver checks it: the stream,
    /// the rules of capture, a sticky fault, the op's ranges.
    ///
    /// # Safety
    ///
    /// A copy's host end is valid for its bytes (until the graph's last
    /// replay, if captured).
    pub(crate) unsafe fn enqueue(&mut self, stream: u64, op: Op) -> Result<(), Denied> {
        if !self.is_stream(stream) {
            return Err(Denied::Handle);
        }
        let capture = self.admit(Use::Enqueue(stream)).map_err(Denied::Capture)?;
        if let Some(fault) = self.sticky {
            return Err(Denied::Fault(fault));
        }
        if !op.in_bounds() {
            return Err(Denied::Value);
        }
        match capture {
            Some(capture) => self.record_op(capture, stream, op),
            // SAFETY: in bounds (checked); host ends by the caller's
            // contract.
            None => unsafe { op.run() }.map_err(Denied::Fault)?,
        }
        Ok(())
    }

    /// Begins a capture on `stream` (a known handle).
    pub(crate) fn begin_capture(&mut self, stream: u64, mode: Mode) -> Result<(), c_int> {
        let id = self.handle();
        let Some(state) = self.stream_mut(stream) else {
            // The legacy stream cannot capture.
            return Err(UNSUPPORTED);
        };
        if state.capture.is_some() {
            return Err(ILLEGAL_STATE);
        }
        state.capture = Some(id);
        let capture = Capture {
            origin: stream,
            mode,
            thread: std::thread::current().id(),
            invalidated: false,
            ops: Vec::new(),
            lanes: HashMap::from([(stream, Lane::default())]),
        };
        self.captures.insert(id, capture);
        Ok(())
    }

    /// Records `op`, enqueued on `stream`, into `capture` (which
    /// [`Driver::admit`] gave).
    pub(crate) fn record_op(&mut self, capture: u64, stream: u64, op: Op) {
        let capture = self.captures.get_mut(&capture).expect("an open capture");
        let lane = capture.lanes.entry(stream).or_default();
        lane.items += 1;
        lane.last_op = lane.items;
        capture.ops.push(op);
    }

    /// The mark of an event recorded on `stream` in `capture`.
    pub(crate) fn capture_mark(&self, capture: u64, stream: u64) -> Mark {
        let items = self.captures[&capture]
            .lanes
            .get(&stream)
            .map_or(0, |l| l.items);
        Mark::Captured {
            capture,
            stream,
            items,
        }
    }

    /// Makes `stream` (a known handle, admitted) wait for an event marked
    /// `mark`. Outside a capture there is nothing to wait for, unless the
    /// event is in an open capture, which `stream` then joins; in a
    /// capture, the wait is an item of the stream's lane, and the event
    /// must be empty or in the same capture.
    pub(crate) fn wait_for(&mut self, stream: u64, mark: Mark) -> Result<(), c_int> {
        let mine = self.capture_of(stream);
        let theirs = match mark {
            Mark::Captured {
                capture,
                stream,
                items,
            } if self.captures.contains_key(&capture) => Some((capture, stream, items)),
            _ => None,
        };
        match (mine, theirs) {
            (None, None) => Ok(()),
            (Some(_), None) if mark == Mark::Empty => Ok(()),
            (Some(mine), None) => {
                self.invalidate(mine);
                Err(ISOLATION)
            }
            (Some(mine), Some((capture, ..))) if capture != mine => {
                self.invalidate(mine);
                self.invalidate(capture);
                Err(MERGE)
            }
            (_, Some((capture, other, items))) => {
                if self.captures[&capture].invalidated {
                    return Err(INVALIDATED);
                }
                if mine.is_none() {
                    let Some(state) = self.stream_mut(stream) else {
                        // The legacy stream cannot join a capture.
                        self.invalidate(capture);
                        return Err(UNSUPPORTED);
                    };
                    state.capture = Some(capture);
                }
                let capture = self.captures.get_mut(&capture).expect("open");
                let lane = capture.lanes.entry(stream).or_default();
                lane.items += 1;
                lane.waits.push((lane.items, other, items));
                Ok(())
            }
        }
    }

    /// The capture status of `stream` (a known handle), or the code if the
    /// legacy stream is asked while a blocking stream captures.
    pub(crate) fn capture_status(&self, stream: u64) -> Result<c_int, c_int> {
        if is_legacy(stream) {
            let blocking = self.captures.values().any(|c| {
                (c.lanes.keys()).any(|&s| !self.stream(s).is_some_and(|s| s.non_blocking))
            });
            return if blocking {
                Err(IMPLICIT)
            } else {
                Ok(STATUS_NONE)
            };
        }
        Ok(match self.capture_of(stream) {
            None => STATUS_NONE,
            Some(c) if self.captures[&c].invalidated => STATUS_INVALIDATED,
            Some(_) => STATUS_ACTIVE,
        })
    }

    /// Ends the capture `stream` (a known handle) began: its operations,
    /// or the code it fails with. The capture's streams leave it either
    /// way, unless the end is refused (another stream, another thread).
    pub(crate) fn end_capture(&mut self, stream: u64) -> Result<Vec<Op>, c_int> {
        let Some(id) = self.capture_of(stream) else {
            return Err(ILLEGAL_STATE);
        };
        let capture = &self.captures[&id];
        if capture.origin != stream {
            self.invalidate(id);
            return Err(UNMATCHED);
        }
        if capture.mode != Mode::Relaxed && capture.thread != std::thread::current().id() {
            return Err(WRONG_THREAD);
        }
        let capture = self.captures.remove(&id).expect("open");
        for &member in capture.lanes.keys() {
            if let Some(state) = self.stream_mut(member) {
                state.capture = None;
            }
        }
        if capture.invalidated {
            Err(INVALIDATED)
        } else if capture.unjoined() {
            Err(UNJOINED)
        } else {
            Ok(capture.ops)
        }
    }

    /// Takes `stream` (being destroyed) out of its capture, which it
    /// invalidates; a capture it began is dropped.
    pub(crate) fn leave_capture(&mut self, stream: u64) {
        if let Some(id) = self.capture_of(stream) {
            self.invalidate(id);
            if self.captures[&id].origin == stream {
                let capture = self.captures.remove(&id).expect("open");
                for &member in capture.lanes.keys() {
                    if let Some(state) = self.stream_mut(member) {
                        state.capture = None;
                    }
                }
            }
        }
    }
}

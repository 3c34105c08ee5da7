//! Streams and events, as both stand-ins keep them.
//!
//! Launches, copies and fills run on the calling thread before the call
//! returns, so every stream is always idle and every recorded event
//! complete: an event's time is the host's clock at its record. What a
//! stream keeps is what changes a call's meaning: whether it is
//! non-blocking (its work is not ordered with the legacy stream's), and
//! the capture it records into, if any (`capture.rs`).
//!
//! Besides the streams it creates, the driver knows three by number, as
//! `cuda.h` and `hip_runtime_api.h` define them: 0, the NULL stream, which
//! is the legacy stream; `CU_STREAM_LEGACY` (1), the legacy stream named
//! explicitly; and `CU_STREAM_PER_THREAD` (2), the calling thread's default
//! stream, a blocking stream (the stand-in keeps one for all threads).

use crate::driver::Driver;
use std::time::Instant;

/// The NULL stream: the legacy stream.
pub(crate) const NULL: u64 = 0;
/// `CU_STREAM_LEGACY`, `hipStreamLegacy`.
pub(crate) const LEGACY: u64 = 1;
/// `CU_STREAM_PER_THREAD`, `hipStreamPerThread`.
pub(crate) const PER_THREAD: u64 = 2;

/// `CU_STREAM_NON_BLOCKING`, `hipStreamNonBlocking`.
pub(crate) const NON_BLOCKING: u32 = 1;

/// Whether `stream` names the legacy stream.
pub(crate) fn is_legacy(stream: u64) -> bool {
    stream == NULL || stream == LEGACY
}

/// A stream's state.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Stream {
    /// Created with `CU_STREAM_NON_BLOCKING`: not ordered with the legacy
    /// stream.
    pub(crate) non_blocking: bool,
    /// The capture it records into.
    pub(crate) capture: Option<u64>,
}

/// What an event marks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Mark {
    /// Never recorded: an empty set of work, complete.
    Empty,
    /// Recorded outside a capture, at this time.
    At(Instant),
    /// Recorded into capture `capture` on `stream`, after that stream's
    /// first `items` captured items.
    Captured {
        capture: u64,
        stream: u64,
        items: u64,
    },
}

/// An event's state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Event {
    /// Whether it keeps its time (not created with `DISABLE_TIMING`).
    pub(crate) timing: bool,
    /// Its last record.
    pub(crate) mark: Mark,
}

impl Event {
    /// A fresh event, never recorded.
    pub(crate) fn new(timing: bool) -> Event {
        Event {
            timing,
            mark: Mark::Empty,
        }
    }
}

/// Why `elapsed` has no time.
#[derive(Debug, PartialEq)]
pub(crate) enum Untimed {
    /// A handle the driver did not hand out, an event without timing, or
    /// one never recorded.
    Handle,
    /// One is recorded in a capture that is still open.
    Captured,
}

impl Driver {
    /// Whether `stream` is the legacy stream, the per-thread stream or a
    /// live one.
    pub(crate) fn is_stream(&self, stream: u64) -> bool {
        stream <= PER_THREAD || self.streams.contains_key(&stream)
    }

    /// The state of `stream`: `None` for the legacy stream (which neither
    /// captures nor is non-blocking) and for unknown handles.
    pub(crate) fn stream(&self, stream: u64) -> Option<&Stream> {
        match stream {
            NULL | LEGACY => None,
            PER_THREAD => Some(&self.per_thread),
            _ => self.streams.get(&stream),
        }
    }

    /// The state of `stream`, to change; as [`Driver::stream`].
    pub(crate) fn stream_mut(&mut self, stream: u64) -> Option<&mut Stream> {
        match stream {
            NULL | LEGACY => None,
            PER_THREAD => Some(&mut self.per_thread),
            _ => self.streams.get_mut(&stream),
        }
    }

    /// Whether work on `stream` is ordered with the legacy stream's: the
    /// legacy stream itself, the per-thread stream and blocking streams;
    /// not non-blocking streams (nor unknown handles).
    pub(crate) fn serializes_with_legacy(&self, stream: u64) -> bool {
        is_legacy(stream) || self.stream(stream).is_some_and(|s| !s.non_blocking)
    }

    /// The capture `stream` records into.
    pub(crate) fn capture_of(&self, stream: u64) -> Option<u64> {
        self.stream(stream).and_then(|s| s.capture)
    }

    /// Creates a stream; its handle.
    pub(crate) fn add_stream(&mut self, non_blocking: bool) -> u64 {
        let handle = self.handle();
        let stream = Stream {
            non_blocking,
            capture: None,
        };
        self.streams.insert(handle, stream);
        handle
    }

    /// Creates an event; its handle.
    pub(crate) fn add_event(&mut self, timing: bool) -> u64 {
        let handle = self.handle();
        self.events.insert(handle, Event::new(timing));
        handle
    }

    /// Whether `mark` is a record in a capture still open.
    pub(crate) fn in_open_capture(&self, mark: Mark) -> bool {
        matches!(mark, Mark::Captured { capture, .. } if self.captures.contains_key(&capture))
    }

    /// The milliseconds from event `start` to event `end`, both recorded
    /// with timing.
    pub(crate) fn elapsed(&self, start: u64, end: u64) -> Result<f32, Untimed> {
        let (Some(a), Some(b)) = (self.events.get(&start), self.events.get(&end)) else {
            return Err(Untimed::Handle);
        };
        if self.in_open_capture(a.mark) || self.in_open_capture(b.mark) {
            return Err(Untimed::Captured);
        }
        match (a.timing, a.mark, b.timing, b.mark) {
            (true, Mark::At(a), true, Mark::At(b)) => {
                let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
                let elapsed = match b.checked_duration_since(a) {
                    Some(d) => ms(d),
                    None => -ms(a - b),
                };
                Ok(elapsed as f32)
            }
            _ => Err(Untimed::Handle),
        }
    }
}

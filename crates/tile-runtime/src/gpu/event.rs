//! Events: points in a stream's work, to wait for from the host or from
//! another stream, and to time the work between two of them on the
//! device.

use super::backend::Raw;
use super::Context;
use crate::error::Error;
use std::sync::Arc;
use std::time::Instant;

/// A point in a [`crate::Stream`]'s work, made by
/// [`crate::Stream::record`]: everything queued on the stream before it.
///
/// On a GPU it is a driver event, timed on the device; on the CPU, where
/// launches are done when `launch_on` returns, it is the host clock at the
/// record.
#[derive(Debug)]
pub struct Event {
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    Cpu(Instant),
    Gpu { context: Arc<Context>, raw: Raw },
}

// SAFETY: event handles may be used from any thread; the backend makes the
// device current first.
unsafe impl Send for Event {}
// SAFETY: as above; the drivers are thread-safe.
unsafe impl Sync for Event {}

impl Event {
    /// The CPU's event: now.
    pub(crate) fn cpu() -> Event {
        Event {
            inner: Inner::Cpu(Instant::now()),
        }
    }

    /// A timing event recorded on `stream` of `context`.
    pub(crate) fn record(context: &Arc<Context>, stream: Raw) -> Result<Event, Error> {
        let raw = context.backend.event_create(true)?;
        let event = Event {
            inner: Inner::Gpu {
                context: Arc::clone(context),
                raw,
            },
        };
        context.backend.event_record(raw, stream)?;
        Ok(event)
    }

    /// The driver's event, if on a GPU, and its device.
    pub(crate) fn gpu(&self) -> Option<(&Arc<Context>, Raw)> {
        match &self.inner {
            Inner::Cpu(_) => None,
            Inner::Gpu { context, raw } => Some((context, *raw)),
        }
    }

    /// Waits until the work before the event has run.
    pub fn synchronize(&self) -> Result<(), Error> {
        match &self.inner {
            Inner::Cpu(_) => Ok(()),
            Inner::Gpu { context, raw } => context.backend.event_synchronize(*raw),
        }
    }

    /// Whether the work before the event has run, without waiting.
    pub fn is_done(&self) -> Result<bool, Error> {
        match &self.inner {
            Inner::Cpu(_) => Ok(true),
            Inner::Gpu { context, raw } => context.backend.event_done(*raw),
        }
    }

    /// Milliseconds from `start` to this event, measured on the device
    /// (waits for this event first). Both must be of the same device.
    pub fn elapsed_ms(&self, start: &Event) -> Result<f32, Error> {
        match (&start.inner, &self.inner) {
            (Inner::Cpu(a), Inner::Cpu(b)) => Ok(b.duration_since(*a).as_secs_f32() * 1e3),
            (Inner::Gpu { context: c, raw: a }, Inner::Gpu { context, raw: b })
                if Arc::ptr_eq(c, context) =>
            {
                context.backend.event_synchronize(*b)?;
                context.backend.event_elapsed(*a, *b)
            }
            (a, b) => Err(Error::DeviceMismatch {
                what: "timing one event against another".into(),
                first: device_of(a),
                second: device_of(b),
            }),
        }
    }
}

/// The device an event is of, as `cpu` or `cuda:0`.
fn device_of(inner: &Inner) -> String {
    match inner {
        Inner::Cpu(_) => "cpu".into(),
        Inner::Gpu { context, .. } => context.to_string(),
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        if let Inner::Gpu { context, raw } = &self.inner {
            if let Err(e) = context.backend.event_destroy(*raw) {
                tracing::warn!(device = %context, error = %e, "destroying an event failed");
            }
        }
    }
}

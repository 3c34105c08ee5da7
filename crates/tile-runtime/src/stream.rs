//! Streams: queues of launches on one device that run in order,
//! asynchronously with the host.

use crate::device::Device;
use crate::error::Error;
use crate::gpu::{Captured, Event, Graph, Pending, Queue, Queued};
use std::ffi::c_void;
use std::sync::{Arc, Mutex, PoisonError};

/// An in-order queue of kernel launches on one device.
///
/// On a GPU, [`launch_on`](crate::launch_on) (or a kernel's generated
/// `launch_on`) checks the arguments and queues the launch, then returns
/// without waiting: the host can queue the next kernel while this one runs,
/// and a kernel reading what the previous one wrote sees it (the stream
/// runs them in order). What a launch reports from the device — a failed
/// bounds check — comes from [`Stream::synchronize`], which waits for every
/// queued launch and returns the first such error in launch order.
///
/// A GPU stream is non-blocking: it does not wait for, nor hold up, the
/// work of other streams (the legacy default stream included), so
/// launches on two streams may overlap. A steady-state launch is one
/// driver call: its status record comes from a slab of mapped pinned
/// memory the stream owns and reuses (`gpu/queue.rs`).
///
/// Safe by construction: a queued launch keeps the memory of its tensors
/// alive until it is done, even if the tensors are dropped; reading a
/// tensor back or writing into one (`Tensor::to_vec`,
/// `Tensor::copy_from_slice`) first waits for the whole device, so it sees
/// every queued launch's writes. Dropping the stream waits for its
/// launches; errors nobody asked for are logged (`tracing`, warning
/// level). Ordering launches on two streams is the caller's, with
/// [`Stream::record`] and [`Stream::wait`].
///
/// On the CPU a launch runs to completion before `launch_on` returns, as
/// [`launch`](crate::launch) does, and reports its errors there.
///
/// **A failure stops the stream.** Once a launch has failed while running
/// (a `device_assert!` whose condition is false, or another run-time
/// check: [`Error::Execution`], [`Error::DeviceCheck`]), every later
/// `launch_on` and `synchronize` on the stream returns
/// [`Error::StreamFailed`] naming the first failure, and nothing more
/// runs, as a GPU context refuses work after a device-side assertion. An
/// argument error found before anything runs does not stop the stream. On
/// the CPU the failing launch is known when `launch_on` returns, so
/// nothing after it runs. On a GPU it is known at the next `synchronize`:
/// launches queued behind it before then have run on the device (they are
/// not cancelled; their outputs are whatever they computed).
#[derive(Debug)]
pub struct Stream {
    device: Device,
    /// The GPU stream (`None` on the CPU).
    queue: Option<Arc<Queue>>,
    /// Launches and graph replays queued since the last synchronization,
    /// in order.
    pending: Mutex<Vec<Queued>>,
    /// The launches of a capture under way.
    captured: Mutex<Option<Vec<Pending>>>,
    /// The first failure of a launch while running, as its error wrote it.
    failed: Mutex<Option<String>>,
}

impl Stream {
    /// A new stream on `device`.
    pub(crate) fn new(device: &Device) -> Result<Stream, Error> {
        let queue = match &device.gpu {
            Some(context) => Some(Arc::new(Queue::new(context)?)),
            None => None,
        };
        Ok(Self::with(device, queue))
    }

    /// A stream on `device` over `queue`.
    pub(crate) fn with(device: &Device, queue: Option<Arc<Queue>>) -> Stream {
        Stream {
            device: device.clone(),
            queue,
            pending: Mutex::new(Vec::new()),
            captured: Mutex::new(None),
            failed: Mutex::new(None),
        }
    }

    /// The device the stream belongs to.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The GPU stream, if the device is a GPU.
    pub(crate) fn queue(&self) -> Option<&Arc<Queue>> {
        self.queue.as_ref()
    }

    /// The driver's stream (`CUstream`, `hipStream_t`), for passing to
    /// other libraries; `None` on the CPU. It stays valid while this
    /// `Stream` lives.
    pub fn as_raw(&self) -> Option<*mut c_void> {
        self.queue.as_ref().map(|q| q.raw)
    }

    /// An event after everything queued on the stream so far: wait for it
    /// ([`Event::synchronize`]), make another stream wait for it
    /// ([`Stream::wait`]), or time the work between two events
    /// ([`Event::elapsed_ms`], on the device).
    pub fn record(&self) -> Result<Event, Error> {
        match &self.queue {
            Some(queue) => Event::record(&queue.context, queue.raw),
            None => Ok(Event::cpu()),
        }
    }

    /// Makes the work queued on this stream from now on wait until
    /// `event`'s work has run, without blocking the host. The event must
    /// be of this stream's device ([`Error::DeviceMismatch`]).
    pub fn wait(&self, event: &Event) -> Result<(), Error> {
        match (&self.queue, event.gpu()) {
            (None, None) => Ok(()),
            (Some(queue), Some((context, raw))) if Arc::ptr_eq(&queue.context, context) => {
                queue.context.backend_wait(queue.raw, raw)
            }
            (_, gpu) => Err(Error::DeviceMismatch {
                what: "a stream waiting for an event".into(),
                first: self.device.to_string(),
                second: gpu.map_or_else(|| "cpu".into(), |(c, _)| c.to_string()),
            }),
        }
    }

    /// Whether a graph capture is under way.
    pub(crate) fn capturing(&self) -> bool {
        self.captured
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// Adds a record to what the stream finishes when synchronized.
    pub(crate) fn queue_record(&self, record: Queued) {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(record);
    }

    /// Records a queued launch (into the graph, while capturing).
    pub(crate) fn push(&self, launch: Pending) {
        let mut captured = self.captured.lock().unwrap_or_else(PoisonError::into_inner);
        match captured.as_mut() {
            Some(launches) => launches.push(launch),
            None => self
                .pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(Queued::Launch(launch)),
        }
    }

    /// Captures the launches `body` queues on this stream into a
    /// [`Graph`] instead of running them: replaying the graph
    /// ([`Graph::launch`]) then queues all of them with one driver call.
    /// The launches are checked as `launch_on` checks them when captured,
    /// and each replay's device checks are reported by the
    /// synchronization of the stream it was queued on. The graph keeps the
    /// memory of the tensors the launches use alive. A GPU only
    /// ([`Error::Unsupported`] on the CPU, whose launches run at once).
    pub fn capture(&self, body: impl FnOnce(&Stream) -> Result<(), Error>) -> Result<Graph, Error> {
        self.usable(|| "capture".to_string())?;
        let Some(queue) = &self.queue else {
            return Err(Error::Unsupported {
                what: "capturing a graph".into(),
                device: self.device.to_string(),
            });
        };
        let backend = &queue.context;
        backend.capture_begin(queue.raw)?;
        *self.captured.lock().unwrap_or_else(PoisonError::into_inner) = Some(Vec::new());
        let ran = body(self);
        let launches = self
            .captured
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .unwrap_or_default();
        let ended = backend.capture_end(queue.raw);
        let release = |launches: Vec<Pending>| launches.into_iter().for_each(Pending::release);
        match (ran, ended) {
            (Ok(()), Ok(exec)) => Ok(Graph {
                inner: Arc::new(Captured::new(&queue.context, exec, launches)),
            }),
            (Err(e), ended) => {
                if let Ok(exec) = ended {
                    // The graph of a failed capture is destroyed unused.
                    drop(Captured::new(&queue.context, exec, Vec::new()));
                }
                release(launches);
                Err(e)
            }
            (Ok(()), Err(e)) => {
                release(launches);
                Err(e)
            }
        }
    }

    /// `Ok` while no launch on the stream has failed while running; else
    /// the [`Error::StreamFailed`] that refuses what `refused` says.
    pub(crate) fn usable(&self, refused: impl FnOnce() -> String) -> Result<(), Error> {
        match &*self.failed.lock().unwrap_or_else(PoisonError::into_inner) {
            None => Ok(()),
            Some(first) => Err(Error::StreamFailed {
                refused: refused(),
                device: self.device.to_string(),
                first: first.clone(),
            }),
        }
    }

    /// Passes `result` on, first stopping the stream if it is the failure
    /// of a launch while running (the first such failure is kept).
    pub(crate) fn record_outcome<T>(&self, result: Result<T, Error>) -> Result<T, Error> {
        if let Err(e @ (Error::Execution { .. } | Error::DeviceCheck { .. })) = &result {
            self.failed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_or_insert_with(|| e.to_string());
        }
        result
    }

    /// Waits for every launch queued so far, then reports the first that
    /// failed on the device (the others' failures are logged); `Ok` at
    /// once on the CPU. Once a launch on the stream has failed, every
    /// later call returns [`Error::StreamFailed`].
    pub fn synchronize(&self) -> Result<(), Error> {
        self.usable(|| "synchronize".to_string())?;
        let Some(queue) = &self.queue else {
            return Ok(());
        };
        queue.synchronize()?;
        let launches =
            std::mem::take(&mut *self.pending.lock().unwrap_or_else(PoisonError::into_inner));
        let mut first = None;
        for launch in launches {
            if let Err(e) = launch.finish() {
                match first {
                    None => first = Some(e),
                    Some(_) => {
                        tracing::warn!(error = %e, "a later launch on the stream failed too")
                    }
                }
            }
        }
        self.record_outcome(first.map_or(Ok(()), Err))
    }
}

impl Graph {
    /// Queues a replay of the graph's launches on `stream`, a stream of
    /// the device it was captured on ([`Error::DeviceMismatch`]), which
    /// reports the replay's device checks when synchronized.
    pub fn launch(&self, stream: &Stream) -> Result<(), Error> {
        stream.usable(|| "graph not launched".to_string())?;
        let context = &self.inner.context;
        match stream.queue() {
            Some(queue) if Arc::ptr_eq(&queue.context, context) => {
                self.inner.launch(queue.raw)?;
                stream
                    .pending
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(Queued::Graph(Arc::clone(&self.inner)));
                Ok(())
            }
            _ => Err(Error::DeviceMismatch {
                what: "a graph launched on a stream".into(),
                first: context.to_string(),
                second: stream.device.to_string(),
            }),
        }
    }
}

/// Dropping a stream waits for its work, then releases what its queued
/// launches and copies held (also after a failure, when `synchronize`
/// stops early: the memory is released only once the device is done).
impl Drop for Stream {
    fn drop(&mut self) {
        if let Err(e) = self.synchronize() {
            tracing::warn!(device = %self.device, error = %e, "a launch on a dropped stream failed");
        }
        if let Some(queue) = &self.queue {
            if let Err(e) = queue.synchronize() {
                tracing::warn!(device = %self.device, error = %e, "waiting for a dropped stream failed");
            }
        }
        let left = std::mem::take(
            self.pending
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for record in left {
            if let Err(e) = record.finish() {
                tracing::warn!(error = %e, "a launch on a dropped, failed stream failed too");
            }
        }
    }
}

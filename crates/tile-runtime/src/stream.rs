//! Streams: queues of launches on one device that run in order,
//! asynchronously with the host.

use crate::device::Device;
use crate::error::Error;
use crate::gpu::{Pending, Queue};
use std::sync::{Mutex, PoisonError};

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
/// Safe by construction: a queued launch keeps the memory of its tensors
/// alive until it is done, even if the tensors are dropped, and every copy
/// between host and device (`Tensor::to_vec`, `Device::tensor_from_slice`,
/// the copy a write to a shared tensor makes) waits for the stream's launches first. Dropping the
/// stream waits for its launches; errors nobody asked for are logged
/// (`tracing`, warning level).
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
pub struct Stream<'d> {
    device: &'d Device,
    /// The GPU stream (`None` on the CPU).
    queue: Option<Queue>,
    /// Launches queued since the last synchronization, in order.
    pending: Mutex<Vec<Pending>>,
    /// The first failure of a launch while running, as its error wrote it.
    failed: Mutex<Option<String>>,
}

impl<'d> Stream<'d> {
    /// A new stream on `device`.
    pub(crate) fn new(device: &'d Device) -> Result<Stream<'d>, Error> {
        let queue = match &device.gpu {
            Some(context) => Some(Queue::new(context)?),
            None => None,
        };
        Ok(Stream {
            device,
            queue,
            pending: Mutex::new(Vec::new()),
            failed: Mutex::new(None),
        })
    }

    /// The device the stream belongs to.
    pub fn device(&self) -> &'d Device {
        self.device
    }

    /// The GPU stream, if the device is a GPU.
    pub(crate) fn queue(&self) -> Option<&Queue> {
        self.queue.as_ref()
    }

    /// Records a queued launch.
    pub(crate) fn push(&self, launch: Pending) {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(launch);
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
    pub(crate) fn record<T>(&self, result: Result<T, Error>) -> Result<T, Error> {
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
        self.record(first.map_or(Ok(()), Err))
    }
}

impl Drop for Stream<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.synchronize() {
            tracing::warn!(device = %self.device, error = %e, "a launch on a dropped stream failed");
        }
    }
}

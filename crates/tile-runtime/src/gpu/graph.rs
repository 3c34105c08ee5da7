//! Graphs: a sequence of launches captured once from a stream and
//! replayed as one driver call (CUDA graphs, HIP graphs).
//!
//! The captured launches keep their status slots (and print areas), their
//! tensors' memory and their kernels; each replay queued on a stream is
//! checked when that stream is synchronized, from the same slots, which
//! are reset after each check. Replays in flight together (before a
//! synchronization, or on two streams) report through the same slots: a
//! failure is still reported, by one of them.

use super::backend::Raw;
use super::{Context, Pending};
use crate::error::Error;
use std::sync::Arc;

/// Launches captured from a [`crate::Stream`] by
/// [`crate::Stream::capture`], replayed with [`Graph::launch`].
#[derive(Debug, Clone)]
pub struct Graph {
    pub(crate) inner: Arc<Captured>,
}

/// The instantiated graph and the launches in it.
#[derive(Debug)]
pub(crate) struct Captured {
    pub(crate) context: Arc<Context>,
    exec: Raw,
    launches: Vec<Pending>,
}

// SAFETY: an instantiated graph may be launched from any thread; the
// backend makes the device current first.
unsafe impl Send for Captured {}
// SAFETY: as above; the drivers are thread-safe.
unsafe impl Sync for Captured {}

impl Captured {
    /// An instantiated graph of `launches`.
    pub(crate) fn new(context: &Arc<Context>, exec: Raw, launches: Vec<Pending>) -> Captured {
        Captured {
            context: Arc::clone(context),
            exec,
            launches,
        }
    }

    /// Queues a replay on `stream`.
    pub(crate) fn launch(&self, stream: Raw) -> Result<(), Error> {
        self.context.backend.graph_launch(self.exec, stream)
    }

    /// The outcome of the last replay: the first failed launch in capture
    /// order (the others' failures logged).
    pub(crate) fn outcome(&self) -> Result<(), Error> {
        let mut first = None;
        for launch in &self.launches {
            if let Err(e) = launch.outcome() {
                match first {
                    None => first = Some(e),
                    Some(_) => tracing::warn!(error = %e, "a later launch of the graph failed too"),
                }
            }
        }
        first.map_or(Ok(()), Err)
    }
}

impl Drop for Captured {
    fn drop(&mut self) {
        if let Err(e) = self.context.backend.graph_destroy(self.exec) {
            tracing::warn!(device = %self.context, error = %e, "destroying a graph failed");
        }
        for launch in self.launches.drain(..) {
            launch.release();
        }
    }
}

/// What a stream has queued and checks (or releases) when synchronized.
#[derive(Debug)]
pub(crate) enum Queued {
    /// One launch.
    Launch(Pending),
    /// A replay of a graph.
    Graph(Arc<Captured>),
    /// An asynchronous copy: its staging buffer and device memory, kept
    /// until it is done.
    Copy(Copying),
}

impl Queued {
    /// The outcome, once the stream is synchronized.
    pub(crate) fn finish(self) -> Result<(), Error> {
        match self {
            Queued::Launch(pending) => pending.finish(),
            Queued::Graph(graph) => graph.outcome(),
            Queued::Copy(copying) => {
                copying.release();
                Ok(())
            }
        }
    }
}

/// An asynchronous copy in flight: what must live until it is done.
#[derive(Debug)]
pub(crate) struct Copying {
    pub(crate) queue: Arc<super::Queue>,
    pub(crate) staging: super::queue::Staging,
    pub(crate) _buffer: Arc<super::Buffer>,
}

impl Copying {
    /// Returns the staging buffer to its queue (the copy is done).
    pub(crate) fn release(self) {
        self.queue.give_back_staging(self.staging);
    }
}

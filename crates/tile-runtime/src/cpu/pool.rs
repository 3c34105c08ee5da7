//! The CPU device's worker threads: started by the first launch that wants
//! help, then kept for the life of the process and shared by every launch
//! (a launch used to start and join threads of its own, which cost a small
//! grid more than running it: docs/benchmarks.md).
//!
//! A launch hands its work to [`broadcast`]: the calling thread runs it,
//! and so does each worker that picks it up before the caller has finished.
//! The caller then closes the job, so a worker that comes to it later
//! leaves it alone, and waits for the workers inside it to leave: when
//! `broadcast` returns, nothing runs the work any more. The caller never
//! waits for a worker that has not started, so a busy pool (launches from
//! several threads at once) slows a launch down but never blocks it.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

/// Work shared by the caller and the workers that take part.
struct Job {
    work: Box<dyn Fn() + Send + Sync>,
    state: Mutex<JobState>,
    left: Condvar,
}

#[derive(Default)]
struct JobState {
    /// The caller has finished: no worker may start the work any more.
    closed: bool,
    /// Workers inside the work.
    running: usize,
}

/// The workers' queue of jobs, one entry per helper a job asks for.
struct Pool {
    queue: Mutex<VecDeque<Arc<Job>>>,
    ready: Condvar,
    workers: usize,
}

/// Locks `mutex`, which no holder leaves inconsistent (a panic inside the
/// work happens outside every lock).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// The threads that run a launch's programs at once: the pool's workers and
/// the calling thread, one per core.
pub(crate) fn parallelism() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(u32::MAX))
}

/// The process's pool: one worker per core beside the calling thread,
/// started on first use.
fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    static STARTED: OnceLock<()> = OnceLock::new();
    let pool = POOL.get_or_init(|| Pool {
        queue: Mutex::new(VecDeque::new()),
        ready: Condvar::new(),
        workers: parallelism() as usize - 1,
    });
    STARTED.get_or_init(|| {
        for i in 0..pool.workers {
            // A worker that cannot be started leaves its share to the others
            // and the callers, who run every job themselves.
            let _ = std::thread::Builder::new()
                .name(format!("tile-cpu-{i}"))
                .spawn(move || pool.serve());
        }
    });
    pool
}

impl Pool {
    /// A worker's loop: take a job, run it unless its caller has finished.
    fn serve(&self) {
        loop {
            let job = {
                let mut queue = lock(&self.queue);
                loop {
                    match queue.pop_front() {
                        Some(job) => break job,
                        None => queue = self.ready.wait(queue).unwrap_or_else(|e| e.into_inner()),
                    }
                }
            };
            {
                let mut state = lock(&job.state);
                if state.closed {
                    continue;
                }
                state.running += 1;
            }
            let _leave = Leave(&job);
            (job.work)();
        }
    }
}

/// Leaves a job when dropped, even if its work panicked, so that its
/// caller is never left waiting.
struct Leave<'a>(&'a Job);

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        let mut state = lock(&self.0.state);
        state.running -= 1;
        if state.running == 0 {
            self.0.left.notify_all();
        }
    }
}

/// The threads that can run work at once: the pool's workers and the
/// calling thread.
pub(super) fn threads() -> usize {
    pool().workers + 1
}

/// Runs `work` on the calling thread and on up to `helpers` of the pool's
/// workers at once, and returns once no thread runs it any more. `work`
/// must share what it does among the threads that call it (each call
/// returns when nothing is left for it).
pub(super) fn broadcast(helpers: usize, work: impl Fn() + Send + Sync + 'static) {
    let job = Arc::new(Job {
        work: Box::new(work),
        state: Mutex::new(JobState::default()),
        left: Condvar::new(),
    });
    let pool = pool();
    let helpers = helpers.min(pool.workers);
    if helpers > 0 {
        let mut queue = lock(&pool.queue);
        queue.extend(std::iter::repeat_n(job.clone(), helpers));
        drop(queue);
        for _ in 0..helpers {
            pool.ready.notify_one();
        }
    }
    (job.work)();
    if helpers == 0 {
        return;
    }
    lock(&job.state).closed = true;
    lock(&pool.queue).retain(|queued| !Arc::ptr_eq(queued, &job));
    let mut state = lock(&job.state);
    while state.running > 0 {
        state = job.left.wait(state).unwrap_or_else(|e| e.into_inner());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn every_call_has_returned_when_broadcast_returns() {
        for helpers in [0, 1, 3, 64] {
            let calls = Arc::new(AtomicUsize::new(0));
            let finished = Arc::new(AtomicUsize::new(0));
            let (c, f) = (calls.clone(), finished.clone());
            broadcast(helpers, move || {
                c.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(20));
                f.fetch_add(1, Ordering::SeqCst);
            });
            let calls = calls.load(Ordering::SeqCst);
            assert_eq!(finished.load(Ordering::SeqCst), calls, "{helpers}");
            assert!((1..=1 + helpers.min(threads() - 1)).contains(&calls));
        }
    }

    #[test]
    fn work_is_shared_and_launches_from_several_threads_all_finish() {
        let launches: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    let left = Arc::new(AtomicUsize::new(1000));
                    let done = Arc::new(AtomicUsize::new(0));
                    let (l, d) = (left.clone(), done.clone());
                    broadcast(threads() - 1, move || {
                        while l
                            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                            .is_ok()
                        {
                            d.fetch_add(1, Ordering::SeqCst);
                        }
                    });
                    done.load(Ordering::SeqCst)
                })
            })
            .collect();
        for launch in launches {
            assert_eq!(launch.join().unwrap(), 1000);
        }
    }
}

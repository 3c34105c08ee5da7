//! Running a specialization's target jobs concurrently: the calling thread
//! works through the jobs in order, and before each job it starts a helper
//! thread for the work left if a slot is free: a jobserver token when the
//! build has a jobserver ([`super::jobserver`]), else a core of the
//! machine. Each job creates its own LLVM context, so jobs share nothing
//! but the program they read.

use super::jobserver::{Jobserver, Token};
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread;

/// What lets one more thread run: a token of the build's jobserver
/// (returned when dropped), or without a jobserver a core of the machine.
struct Slot<'a> {
    _token: Option<Token<'a>>,
}

/// Runs `job(0)`, …, `job(count - 1)` on at most `max_threads` threads at
/// once (the calling thread among them), and returns their results in
/// order. Jobs start in order: put the longest first.
pub(crate) fn run<T: Send>(
    count: usize,
    max_threads: NonZeroUsize,
    job: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let jobserver = Jobserver::of_this_build();
    let cores = thread::available_parallelism().map_or(1, NonZeroUsize::get);
    let free_slot = |threads: usize| match jobserver {
        Some(server) => server.try_acquire().map(|token| Slot {
            _token: Some(token),
        }),
        None => (threads < cores).then_some(Slot { _token: None }),
    };
    run_with(count, max_threads, free_slot, job)
}

/// [`run`] with `free_slot(threads running)` saying whether one more
/// thread may start.
fn run_with<'s, T: Send>(
    count: usize,
    max_threads: NonZeroUsize,
    free_slot: impl Fn(usize) -> Option<Slot<'s>>,
    job: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    let limit = max_threads.get().min(count);
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<T>>> = (0..count).map(|_| Mutex::new(None)).collect();
    let work = || loop {
        let index = next.fetch_add(1, Ordering::Relaxed);
        if index >= count {
            return;
        }
        let result = job(index);
        *results[index].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
    };
    thread::scope(|scope| {
        let mut threads = 1;
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            if index >= count {
                break;
            }
            // Jobs left beside this one, for a helper to take.
            while threads < limit && next.load(Ordering::Relaxed) < count {
                let Some(slot) = free_slot(threads) else {
                    break;
                };
                threads += 1;
                let work = &work;
                scope.spawn(move || {
                    work();
                    drop(slot);
                });
            }
            let result = job(index);
            *results[index].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
        }
    });
    results
        .into_iter()
        .map(|r| {
            r.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every job ran")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::time::Duration;

    #[test]
    fn results_come_back_in_order_whatever_the_threads() {
        for max in [1, 2, 8] {
            let out = run(10, NonZeroUsize::new(max).unwrap(), |i| i * i);
            assert_eq!(out, (0..10).map(|i| i * i).collect::<Vec<_>>());
        }
        assert!(run(0, NonZeroUsize::MIN, |i| i).is_empty());
    }

    #[test]
    fn one_thread_means_the_calling_thread() {
        let caller = thread::current().id();
        let ids = run(4, NonZeroUsize::MIN, |_| thread::current().id());
        assert!(ids.iter().all(|id| *id == caller));
    }

    #[test]
    fn jobs_run_concurrently_within_the_limit() {
        let running = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let job = |_| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            // Wait (a while at most) for a second job to run beside this one.
            for _ in 0..500 {
                if running.load(Ordering::SeqCst) >= 2 {
                    break;
                }
                thread::sleep(Duration::from_millis(10));
            }
            thread::sleep(Duration::from_millis(10));
            running.fetch_sub(1, Ordering::SeqCst);
            thread::current().id()
        };
        let ids = run_with(
            6,
            NonZeroUsize::new(2).unwrap(),
            |_| Some(Slot { _token: None }),
            job,
        );
        assert_eq!(most.load(Ordering::SeqCst), 2);
        assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 2);
        // Without a free slot, the calling thread runs everything.
        let ids = run_with(
            3,
            NonZeroUsize::new(2).unwrap(),
            |_| None,
            |_| thread::current().id(),
        );
        assert!(ids.iter().all(|id| *id == thread::current().id()));
    }
}

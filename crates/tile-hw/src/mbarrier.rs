//! An mbarrier's phases, as both emulators model them (PTX ISA,
//! "Parallel Synchronization and Communication Instructions: mbarrier"):
//!
//! * init gives the barrier its arrival count; its phase is 0;
//! * `mbarrier.arrive.expect_tx` is one arrival, and adds the bytes the
//!   phase also waits for; more arrivals than the count is an error;
//! * a bulk copy (`cp.async.bulk.tensor`) completes on the current phase:
//!   its bytes count towards the expected ones when it lands;
//! * a wait for parity `p` returns at once when the phase of that parity is
//!   over. Otherwise the current phase must be able to finish now, as the
//!   emulators run threads one at a time and a thread cannot spin while
//!   another arrives: no arrival missing and the copies exactly the bytes
//!   expected. Its copies then land and the phase advances. A phase that
//!   cannot finish is an error: on a GPU the block would hang.
//!
//! The copies are the emulator's own records ([`InFlight`]): the lockstep
//! emulator keeps elements and values, the emulation target bytes.

/// A copy completing on a phase: how many bytes it brings.
pub trait InFlight {
    /// The bytes the copy writes.
    fn bytes(&self) -> u64;
}

/// One mbarrier's state, with the copies of type `C` in flight on it.
#[derive(Clone, Debug)]
pub struct Mbarrier<C> {
    /// The arrivals a phase needs.
    count: u64,
    /// The arrivals the current phase still needs.
    pending: u64,
    /// The bytes the current phase expects.
    tx: u64,
    /// The current phase (0, 1, 2, …).
    phase: u64,
    /// The copies completing on the current phase.
    copies: Vec<C>,
}

/// An arrival when the current phase needs none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooManyArrivals;

/// A wait on the current phase, which cannot finish.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NeverReturns {
    /// The arrivals missing.
    pub pending: u64,
    /// The bytes the phase expects.
    pub expected: u64,
    /// The bytes its copies bring.
    pub copied: u64,
}

/// What a wait found.
#[derive(Debug)]
pub enum Wait<C> {
    /// The phase of the parity was already over.
    Over,
    /// The current phase finished: these copies land now, in issue order.
    Finished(Vec<C>),
}

impl<C: InFlight> Mbarrier<C> {
    /// A barrier of `count` arrivals per phase, at phase 0.
    pub fn new(count: u64) -> Self {
        Mbarrier {
            count,
            pending: count,
            tx: 0,
            phase: 0,
            copies: Vec::new(),
        }
    }

    /// The current phase (0, 1, 2, …).
    pub fn phase(&self) -> u64 {
        self.phase
    }

    /// One arrival, expecting `bytes` more.
    pub fn arrive_expect_tx(&mut self, bytes: u64) -> Result<(), TooManyArrivals> {
        if self.pending == 0 {
            return Err(TooManyArrivals);
        }
        self.pending -= 1;
        self.tx += bytes;
        Ok(())
    }

    /// `copy` completes on the current phase.
    pub fn complete_on(&mut self, copy: C) {
        self.copies.push(copy);
    }

    /// A wait for the phase of `parity` (its low bit).
    pub fn wait(&mut self, parity: u64) -> Result<Wait<C>, NeverReturns> {
        if self.phase % 2 != parity % 2 {
            return Ok(Wait::Over);
        }
        let copied: u64 = self.copies.iter().map(InFlight::bytes).sum();
        if self.pending != 0 || copied != self.tx {
            return Err(NeverReturns {
                pending: self.pending,
                expected: self.tx,
                copied,
            });
        }
        self.phase += 1;
        self.pending = self.count;
        self.tx = 0;
        Ok(Wait::Finished(std::mem::take(&mut self.copies)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Copy(u64);

    impl InFlight for Copy {
        fn bytes(&self) -> u64 {
            self.0
        }
    }

    #[test]
    fn a_phase_finishes_when_its_arrivals_and_bytes_are_in() {
        let mut bar = Mbarrier::new(1);
        bar.arrive_expect_tx(96).unwrap();
        bar.complete_on(Copy(64));
        bar.complete_on(Copy(32));
        let Ok(Wait::Finished(landed)) = bar.wait(0) else {
            panic!("phase 0 finishes");
        };
        assert_eq!(landed.iter().map(|c| c.0).collect::<Vec<_>>(), [64, 32]);
        // Phase 0 is over; phase 1 has started with the full count again.
        assert!(matches!(bar.wait(0), Ok(Wait::Over)));
        assert_eq!(
            bar.wait(1).unwrap_err(),
            NeverReturns {
                pending: 1,
                expected: 0,
                copied: 0
            }
        );
    }

    #[test]
    fn missing_bytes_or_extra_arrivals_are_errors() {
        let mut bar = Mbarrier::new(1);
        bar.arrive_expect_tx(128).unwrap();
        assert_eq!(bar.arrive_expect_tx(0), Err(TooManyArrivals));
        bar.complete_on(Copy(64));
        assert_eq!(
            bar.wait(0).unwrap_err(),
            NeverReturns {
                pending: 0,
                expected: 128,
                copied: 64
            }
        );
    }
}

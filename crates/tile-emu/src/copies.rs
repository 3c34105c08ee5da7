//! `cp.async` of each GPU thread: copies checked when issued (the source's
//! bytes as a global read, the 16 destination bytes as a shared write) and
//! carried out only when a `cp.async.wait_group` completes their group, so
//! a kernel that reads its destination before waiting reads what was there
//! before: poison, on a block's first use.

/// One copy in flight: `bytes` of the 16 from `src`, the rest zeros.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Copy {
    pub(crate) dst: u64,
    pub(crate) src: u64,
    pub(crate) bytes: u64,
}

/// A thread's groups of copies: the closed ones, oldest first, and the open
/// one.
#[derive(Clone, Debug, Default)]
pub(crate) struct Groups {
    closed: Vec<Vec<Copy>>,
    open: Vec<Copy>,
}

impl Groups {
    /// Adds a copy to the open group.
    pub(crate) fn issue(&mut self, copy: Copy) {
        self.open.push(copy);
    }

    /// Closes the open group.
    pub(crate) fn commit(&mut self) {
        let open = std::mem::take(&mut self.open);
        self.closed.push(open);
    }

    /// Carries out every closed group but the `pending` most recent;
    /// returns the copies that landed.
    ///
    /// # Safety
    ///
    /// Every copy's source bytes and 16 destination bytes must have been
    /// checked as accesses of live memory when it was issued, and still be.
    pub(crate) unsafe fn land(&mut self, pending: usize) -> Vec<Copy> {
        let landing = self.closed.len().saturating_sub(pending);
        let landed: Vec<Copy> = self.closed.drain(..landing).flatten().collect();
        for &copy in &landed {
            let mut chunk = [0u8; 16];
            let read = (copy.bytes as usize).min(16);
            // SAFETY: the caller's contract: both ranges were checked when
            // the copy was issued.
            unsafe {
                std::ptr::copy_nonoverlapping(copy.src as *const u8, chunk.as_mut_ptr(), read);
                std::ptr::copy_nonoverlapping(chunk.as_ptr(), copy.dst as *mut u8, 16);
            }
        }
        landed
    }
}

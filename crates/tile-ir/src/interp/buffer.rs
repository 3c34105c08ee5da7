//! Cache-line-aligned byte buffers: the storage of a [`HostTensor`].
//!
//! The host back end's compiled kernels stream through tensor buffers with
//! full-width vector loads and stores, and store large outputs with
//! non-temporal (streaming) stores. Those want every buffer to start on a
//! cache line: a buffer from `malloc` starts 16 bytes past one (and a large
//! one 16 bytes past a page), so every vector of a row straddles two lines
//! and the streaming stores of a line's first and last vectors each fill a
//! separate, partial write-combining buffer. A [`HostBuffer`] starts on a
//! [`HostBuffer::ALIGN`]-byte (64-byte) boundary, whatever the allocator.
//!
//! # How, without `unsafe`
//!
//! The obvious type, a `Vec` of `#[repr(align(64))]` lines, is aligned but
//! defeats the second aim of this type: zeroed storage that is not written.
//! Rust's system allocator on Unix serves a zeroed allocation aligned past 16
//! bytes with `posix_memalign` and then `memset`, which touches every page
//! (measured: 16,385 page faults for 64 MiB, against one with `calloc`).
//! Untouched pages matter for the CPU device, which advises the kernel to
//! back large buffers with transparent huge pages: that advice only shapes
//! pages faulted in after it. So a buffer is a zeroed `Vec<u8>` (which the
//! system allocator serves with `calloc`, fresh pages for large sizes) of
//! `ALIGN - 1` more bytes than asked, used from its first 64-byte boundary.
//!
//! [`HostTensor`]: super::HostTensor

use std::fmt;
use std::ops::{Deref, DerefMut};

/// A byte buffer whose first byte is [`HostBuffer::ALIGN`]-byte aligned.
///
/// It dereferences to its bytes; equality and `Debug` see those bytes only,
/// exactly as for a `Vec<u8>` of them. Clones are aligned too.
pub struct HostBuffer {
    /// The allocation: `start + len <= storage.len()`, and
    /// `storage[start..]` begins on an `ALIGN`-byte boundary. Its length
    /// never changes, so neither does its address.
    storage: Vec<u8>,
    /// The offset of the first used byte in `storage`, below `ALIGN`.
    start: usize,
    /// The number of bytes in use.
    len: usize,
}

impl HostBuffer {
    /// The alignment of every buffer's first byte: a cache line, and the
    /// widest vector (AVX-512) the host back end could store.
    pub const ALIGN: usize = 64;

    /// A buffer of `len` zero bytes. The bytes are not written: large
    /// buffers are fresh pages from the operating system, untouched until
    /// first used.
    ///
    /// # Panics
    ///
    /// Panics when `len + ALIGN - 1` overflows a `usize` (as a `Vec` of that
    /// size would), and aborts when the allocation fails.
    pub fn zeroed(len: usize) -> HostBuffer {
        let padded = len
            .checked_add(Self::ALIGN - 1)
            .expect("a host buffer's size overflows a usize");
        // `vec![0; n]` of bytes is one `alloc_zeroed` of alignment 1: `calloc`.
        let storage = vec![0u8; padded];
        let start = storage.as_ptr().addr().wrapping_neg() % Self::ALIGN;
        HostBuffer {
            storage,
            start,
            len,
        }
    }

    /// A buffer holding a copy of `bytes`.
    pub fn from_slice(bytes: &[u8]) -> HostBuffer {
        let mut buffer = HostBuffer::zeroed(bytes.len());
        buffer.copy_from_slice(bytes);
        buffer
    }

    /// The number of bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.storage[self.start..self.start + self.len]
    }

    /// The bytes, to write.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + self.len]
    }
}

impl Deref for HostBuffer {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl DerefMut for HostBuffer {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.as_mut_slice()
    }
}

impl AsRef<[u8]> for HostBuffer {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsMut<[u8]> for HostBuffer {
    fn as_mut(&mut self) -> &mut [u8] {
        self.as_mut_slice()
    }
}

/// An empty buffer (which still has an aligned address).
impl Default for HostBuffer {
    fn default() -> Self {
        HostBuffer::zeroed(0)
    }
}

/// A new aligned allocation holding the same bytes.
impl Clone for HostBuffer {
    fn clone(&self) -> Self {
        HostBuffer::from_slice(self.as_slice())
    }
}

/// Copies the bytes into aligned storage.
impl From<Vec<u8>> for HostBuffer {
    fn from(bytes: Vec<u8>) -> Self {
        HostBuffer::from_slice(&bytes)
    }
}

/// Copies the bytes into aligned storage.
impl From<&[u8]> for HostBuffer {
    fn from(bytes: &[u8]) -> Self {
        HostBuffer::from_slice(bytes)
    }
}

/// Buffers are equal when their bytes are (wherever they are stored).
impl PartialEq for HostBuffer {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for HostBuffer {}

/// Prints the bytes as a `Vec<u8>` of them prints.
impl fmt::Debug for HostBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_slice().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::HostBuffer;

    fn aligned(bytes: &[u8]) -> bool {
        bytes.as_ptr().addr().is_multiple_of(HostBuffer::ALIGN)
    }

    #[test]
    fn every_size_is_aligned_and_zeroed() {
        for len in (0..300).chain([4095, 4096, 4097, (1 << 20) + 3]) {
            let mut b = HostBuffer::zeroed(len);
            assert_eq!(b.len(), len);
            assert_eq!(b.is_empty(), len == 0);
            assert!(aligned(&b), "len {len}");
            assert!(aligned(b.as_mut_slice()), "len {len}");
            assert!(b.iter().all(|&x| x == 0), "len {len}");
        }
    }

    #[test]
    fn copies_and_clones_keep_the_bytes_and_the_alignment() {
        for len in [0, 1, 3, 63, 64, 65, 1000] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + 1) as u8).collect();
            let b = HostBuffer::from(bytes.clone());
            assert!(aligned(&b));
            assert_eq!(&b[..], &bytes[..]);
            let c = b.clone();
            assert!(aligned(&c));
            assert_eq!(c, b);
            assert_eq!(&c[..], &bytes[..]);
            assert_eq!(HostBuffer::from(&bytes[..]), b);
        }
    }

    #[test]
    fn equality_and_debug_see_only_the_used_bytes() {
        // Two buffers whose storage starts differ (the padding before the
        // first aligned byte, and after the last used one, are never seen).
        let a = HostBuffer::from_slice(&[1, 2, 3]);
        let mut b = HostBuffer::zeroed(3);
        b.copy_from_slice(&[1, 2, 3]);
        assert_eq!(a, b);
        b[2] = 4;
        assert_ne!(a, b);
        assert_ne!(a, HostBuffer::from_slice(&[1, 2]));
        assert_eq!(format!("{a:?}"), format!("{:?}", vec![1u8, 2, 3]));
        assert_eq!(format!("{:?}", HostBuffer::default()), "[]");
    }

    #[test]
    fn writes_land_in_the_used_bytes() {
        let mut b = HostBuffer::zeroed(5);
        b.as_mut_slice().copy_from_slice(&[9, 8, 7, 6, 5]);
        assert_eq!(b.as_slice(), &[9, 8, 7, 6, 5]);
        assert_eq!(b.as_ref(), &[9, 8, 7, 6, 5]);
        b.as_mut()[0] = 1;
        assert_eq!(b[0], 1);
    }
}

//! The kinds of device code a kernel specialization embeds, and how each
//! receives its block's shared memory.
//!
//! An NVIDIA kernel declares at most [`NVIDIA_STATIC_SHARED`] bytes of
//! shared memory statically (what the CUDA driver grants any kernel); a
//! kernel that needs more (a software pipeline's stage buffers) declares
//! one dynamic array (`.extern .shared .b8 shared_dynamic[]`) and places its
//! allocations in it, and the launch passes the bytes as the kernel's
//! dynamic shared memory, after opting the function in to that much
//! (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`). AMDGPU and host
//! images declare all of theirs statically.

/// What a compiled image holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImageKind {
    /// PTX text for the CUDA driver's JIT.
    Ptx,
    /// An AMDGPU code object (HSACO) for HIP.
    Hsaco,
    /// A shared object of host code for the CPU device.
    Host,
}

/// The shared memory an NVIDIA kernel may declare statically, in bytes.
pub const NVIDIA_STATIC_SHARED: usize = 48 * 1024;

/// The symbol of an NVIDIA kernel's dynamic shared memory.
pub const DYNAMIC_SHARED_SYMBOL: &str = "shared_dynamic";

impl ImageKind {
    /// The dynamic shared memory a launch passes to a kernel of this kind
    /// that needs `bytes` per block: all of it for a PTX kernel above
    /// [`NVIDIA_STATIC_SHARED`], none otherwise (the kernel declares it).
    pub fn dynamic_shared_bytes(self, bytes: usize) -> usize {
        match self {
            ImageKind::Ptx if bytes > NVIDIA_STATIC_SHARED => bytes,
            _ => 0,
        }
    }

    /// The name of the kind, as dumps and errors print it.
    pub fn name(self) -> &'static str {
        match self {
            ImageKind::Ptx => "PTX",
            ImageKind::Hsaco => "HSACO",
            ImageKind::Host => "host",
        }
    }
}

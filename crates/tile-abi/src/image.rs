//! The kinds of device code a kernel specialization embeds.

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

impl ImageKind {
    /// The name of the kind, as dumps and errors print it.
    pub fn name(self) -> &'static str {
        match self {
            ImageKind::Ptx => "PTX",
            ImageKind::Hsaco => "HSACO",
            ImageKind::Host => "host",
        }
    }
}

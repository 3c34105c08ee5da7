//! Compiled kernels as the front end embeds them, and the per-device cache of
//! loaded ones.

use crate::cpu::{HostIsa, HostLibrary};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use tile_abi::HostCheck;
use tile_ir::Function;

/// One specialization of a kernel, as embedded by `#[tile_kernel]`
/// (`kernel::<..>::kernel_spec()`).
///
/// The runtime runs a spec's images as the compiled code of its IR, so a
/// spec with images can only be made by the `unsafe` [`KernelSpec::new`],
/// whose caller vouches for them (`#[tile_kernel]` does, for the code it
/// compiled). A spec without images is safe to make
/// ([`KernelSpec::without_images`]): the CPU device interprets its IR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelSpec {
    pub(crate) name: &'static str,
    pub(crate) specialization: &'static str,
    pub(crate) ir: &'static str,
    pub(crate) num_warps: u32,
    pub(crate) images: &'static [Image],
    pub(crate) bounds_checks: &'static [&'static str],
    pub(crate) host_checks: &'static [HostCheck],
}

impl KernelSpec {
    /// A spec whose `images` run as the code of `ir`: `bounds_checks` names
    /// the ops of the GPU images' run-time checks in the order their status
    /// records count them, `host_checks` the checks of the host images.
    ///
    /// # Safety
    ///
    /// Each image must be the compilation of exactly `ir` for its target by
    /// this version of `tile` (`#[tile_kernel]`'s), with the shared memory
    /// and threads per block that compilation gave it and these check lists:
    /// a launch runs the image's machine code over the arguments' memory,
    /// trusting it to stay inside what the kernel ABI gives it.
    #[allow(clippy::too_many_arguments)]
    pub const unsafe fn new(
        name: &'static str,
        specialization: &'static str,
        ir: &'static str,
        num_warps: u32,
        images: &'static [Image],
        bounds_checks: &'static [&'static str],
        host_checks: &'static [HostCheck],
    ) -> KernelSpec {
        KernelSpec {
            name,
            specialization,
            ir,
            num_warps,
            images,
            bounds_checks,
            host_checks,
        }
    }

    /// A spec with no device code: the CPU device interprets `ir`, a GPU
    /// reports [`crate::Error::NoImage`].
    pub const fn without_images(
        name: &'static str,
        specialization: &'static str,
        ir: &'static str,
        num_warps: u32,
    ) -> KernelSpec {
        KernelSpec {
            name,
            specialization,
            ir,
            num_warps,
            images: &[],
            bounds_checks: &[],
            host_checks: &[],
        }
    }

    /// The kernel's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The specialization's constant parameters, e.g. `BLOCK=1024`.
    pub fn specialization(&self) -> &'static str {
        self.specialization
    }

    /// The tile IR text of this specialization (after the pass pipeline).
    pub fn ir(&self) -> &'static str {
        self.ir
    }

    /// The number of warps each program instance runs with on a GPU.
    pub fn num_warps(&self) -> u32 {
        self.num_warps
    }

    /// The device code compiled ahead of time, one image per target.
    pub fn images(&self) -> &'static [Image] {
        self.images
    }

    /// The tile-IR ops of the kernel's device-side checks, in program
    /// order: a failed check reports its position in this list.
    pub fn bounds_checks(&self) -> &'static [&'static str] {
        self.bounds_checks
    }

    /// The run-time checks of the host images (the same for each), in the
    /// order their status records name them.
    pub fn host_checks(&self) -> &'static [HostCheck] {
        self.host_checks
    }
}

pub use tile_abi::ImageKind;

/// Device code of one kernel specialization for one target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Image {
    /// The format.
    pub kind: ImageKind,
    /// The target it was compiled for: `sm_80`, `gfx90a`, or for host code
    /// its instruction-set level (`x86_64-v3`, `x86_64`, `aarch64`: see
    /// [`crate::cpu::HostIsa`]).
    pub target: &'static str,
    /// The bytes (PTX text as UTF-8).
    pub bytes: &'static [u8],
    /// The shared memory a block of this image needs, in bytes (0 for
    /// host code); on NVIDIA, what the launch passes as dynamic shared
    /// memory when it is more than a kernel declares statically
    /// (`tile_abi::image`).
    pub shared_memory_bytes: usize,
    /// The threads of a block of this image (0 for host code): `32 ·
    /// num_warps` on NVIDIA and RDNA, `64 · num_warps` on CDNA, whose
    /// `num_warps` counts 64-lane wavefronts as Triton's does.
    pub block_threads: u32,
}

/// What runs a kernel on a device ([`crate::Device::kernel_code`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelCode {
    /// The tile IR's reference interpreter: the CPU device, for a kernel
    /// without a host image this CPU runs.
    Interpreter,
    /// Host code compiled ahead of time for this instruction-set level.
    Host(HostIsa),
    /// The GPU image of this target (`sm_80`, `gfx90a`, ...).
    Gpu(&'static str),
}

impl fmt::Display for KernelCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelCode::Interpreter => f.pad("interpreter"),
            KernelCode::Host(isa) => f.pad(isa.name()),
            KernelCode::Gpu(target) => f.pad(target),
        }
    }
}

/// A loaded kernel: its IR, which tensor parameters it writes and its
/// device code: on the CPU the compiled host code when the spec has an image
/// this CPU runs, on a GPU the module loaded through the driver.
#[derive(Debug)]
pub(crate) struct LoadedKernel {
    pub(crate) function: Function,
    /// Per parameter: whether the kernel stores through it.
    pub(crate) writes: Vec<bool>,
    /// Per grid axis: whether the kernel reads its `program_id`.
    pub(crate) grid_axes: [bool; 3],
    /// Whether it prints (`device_print!`), so a GPU launch gives it a
    /// print area.
    pub(crate) prints: bool,
    /// The host code; without it the CPU device interprets `function`.
    pub(crate) host: Option<HostLibrary>,
    /// The loaded GPU module (`None` on the CPU).
    pub(crate) module: Option<crate::gpu::Module>,
}

impl LoadedKernel {
    /// What runs this kernel.
    pub(crate) fn code(&self) -> KernelCode {
        match (&self.module, &self.host) {
            (Some(module), _) => KernelCode::Gpu(module.target),
            (None, Some(host)) => KernelCode::Host(host.isa()),
            (None, None) => KernelCode::Interpreter,
        }
    }
}

/// Kernels loaded on one device, keyed by everything that makes their code:
/// the IR text, the block size, and the embedded images (whose bytes carry
/// every other option, `fast_math` among them).
#[derive(Debug, Default)]
pub(crate) struct ModuleCache {
    loaded: Mutex<HashMap<CacheKey, Arc<LoadedKernel>>>,
}

/// What identifies a loaded kernel: two specs load the same code when
/// these agree. The IR text is known by its address and length (the same
/// address holds the same text), so a launch's lookup hashes a few words,
/// not the text; two copies of one text at two addresses load twice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct CacheKey {
    ir: (usize, usize),
    num_warps: u32,
    /// The address of the spec's embedded images: distinct compilations
    /// embed distinct images.
    images: usize,
}

impl CacheKey {
    fn of(spec: &KernelSpec) -> CacheKey {
        CacheKey {
            ir: (spec.ir.as_ptr() as usize, spec.ir.len()),
            num_warps: spec.num_warps,
            images: spec.images.as_ptr() as usize,
        }
    }
}

impl ModuleCache {
    /// The loaded kernel for `spec`, loading it with `load` the first time.
    pub(crate) fn get_or_load<E>(
        &self,
        spec: &KernelSpec,
        load: impl FnOnce() -> Result<LoadedKernel, E>,
    ) -> Result<Arc<LoadedKernel>, E> {
        // A poisoned lock only means another launch panicked mid-insert; the
        // map itself is still consistent.
        let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        let key = CacheKey::of(spec);
        if let Some(kernel) = loaded.get(&key) {
            return Ok(Arc::clone(kernel));
        }
        let kernel = Arc::new(load()?);
        loaded.insert(key, Arc::clone(&kernel));
        Ok(kernel)
    }

    /// How many kernels are loaded.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.loaded.lock().map_or(0, |l| l.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IR: &str = "kernel @k() {\n}";

    fn loaded() -> Result<LoadedKernel, String> {
        let function = tile_ir::text::parse_function(IR).map_err(|e| e.to_string())?;
        Ok(LoadedKernel {
            function,
            writes: Vec::new(),
            grid_axes: [false; 3],
            prints: false,
            host: None,
            module: None,
        })
    }

    #[test]
    fn specs_that_differ_in_block_size_or_images_load_apart() {
        static FAST: [Image; 1] = [Image {
            kind: ImageKind::Ptx,
            target: "sm_80",
            bytes: b"fast",
            shared_memory_bytes: 0,
            block_threads: 128,
        }];
        static EXACT: [Image; 1] = [Image {
            kind: ImageKind::Ptx,
            target: "sm_80",
            bytes: b"exact",
            shared_memory_bytes: 0,
            block_threads: 128,
        }];
        // SAFETY: these specs are never launched; only their keys are used.
        let specs = unsafe {
            [
                KernelSpec::new("k", "default", IR, 4, &FAST, &[], &[]),
                KernelSpec::new("k", "default", IR, 8, &FAST, &[], &[]),
                KernelSpec::new("k", "default", IR, 4, &EXACT, &[], &[]),
                KernelSpec::new("k", "default", IR, 4, &FAST, &[], &[]),
            ]
        };
        let cache = ModuleCache::default();
        let mut loads = 0;
        for spec in &specs {
            cache
                .get_or_load(spec, || {
                    loads += 1;
                    loaded()
                })
                .unwrap();
        }
        assert_eq!((loads, cache.len()), (3, 3));
    }
}

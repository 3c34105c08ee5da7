//! A HIP device's `gcnArchName`, read from the documented field of the
//! `hipDeviceProp_t` layout that the entry point called fills.
//!
//! ROCm 6 renamed the struct and the call: its headers map
//! `hipGetDeviceProperties` to `hipGetDevicePropertiesR0600`, which fills
//! `hipDeviceProp_tR0600`, and its library keeps the old symbol
//! `hipGetDeviceProperties` (and `hipGetDevicePropertiesR0000`) filling
//! ROCm 5's `hipDeviceProp_t`, which `hip_deprecated.h` calls
//! `hipDeviceProp_tR0000`. ROCm 5 (4.5 to 5.7, one layout) exports only the
//! old symbol. The symbol's name fixes the layout, so the runtime calls
//! `hipGetDevicePropertiesR0600` when the library exports it and
//! `hipGetDeviceProperties` otherwise, and reads each struct as its header
//! declares it (64-bit targets; `size_t` is `usize`).

use super::check;
use super::sys::{entry, HipResult};
use crate::error::Error;
use libloading::Library;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::mem::MaybeUninit;

/// `hipGetDeviceProperties*(prop, deviceId)`, of either layout.
type GetProperties = unsafe extern "C" fn(*mut c_void, c_int) -> HipResult;

/// The bytes of a `char[256]` field: `name` and `gcnArchName`.
const NAME_BYTES: usize = 256;

/// `hipUUID`: 16 bytes.
#[repr(C)]
struct Uuid {
    /// `bytes`.
    bytes: [c_char; 16],
}

/// `hipDeviceArch_t`: seventeen one-bit `unsigned` fields, stored in one
/// `unsigned`.
type DeviceArch = c_uint;

/// ROCm 5's `hipDeviceProp_t` (ROCm 6's `hipDeviceProp_tR0000`), field by
/// field.
#[repr(C)]
struct PropertiesR0000 {
    name: [c_char; NAME_BYTES],
    total_global_mem: usize,
    shared_mem_per_block: usize,
    regs_per_block: c_int,
    warp_size: c_int,
    max_threads_per_block: c_int,
    max_threads_dim: [c_int; 3],
    max_grid_size: [c_int; 3],
    clock_rate: c_int,
    memory_clock_rate: c_int,
    memory_bus_width: c_int,
    total_const_mem: usize,
    major: c_int,
    minor: c_int,
    multi_processor_count: c_int,
    l2_cache_size: c_int,
    max_threads_per_multi_processor: c_int,
    compute_mode: c_int,
    clock_instruction_rate: c_int,
    arch: DeviceArch,
    concurrent_kernels: c_int,
    pci_domain_id: c_int,
    pci_bus_id: c_int,
    pci_device_id: c_int,
    max_shared_memory_per_multi_processor: usize,
    is_multi_gpu_board: c_int,
    can_map_host_memory: c_int,
    gcn_arch: c_int,
    gcn_arch_name: [c_char; NAME_BYTES],
    integrated: c_int,
    cooperative_launch: c_int,
    cooperative_multi_device_launch: c_int,
    max_texture_1d_linear: c_int,
    max_texture_1d: c_int,
    max_texture_2d: [c_int; 2],
    max_texture_3d: [c_int; 3],
    hdp_mem_flush_cntl: *mut c_uint,
    hdp_reg_flush_cntl: *mut c_uint,
    mem_pitch: usize,
    texture_alignment: usize,
    texture_pitch_alignment: usize,
    kernel_exec_timeout_enabled: c_int,
    ecc_enabled: c_int,
    tcc_driver: c_int,
    cooperative_multi_device_unmatched_func: c_int,
    cooperative_multi_device_unmatched_grid_dim: c_int,
    cooperative_multi_device_unmatched_block_dim: c_int,
    cooperative_multi_device_unmatched_shared_mem: c_int,
    is_large_bar: c_int,
    asic_revision: c_int,
    managed_memory: c_int,
    direct_managed_mem_access_from_host: c_int,
    concurrent_managed_access: c_int,
    pageable_memory_access: c_int,
    pageable_memory_access_uses_host_page_tables: c_int,
}

// The header's layout on 64-bit targets (ROCm's only ones; the mirror
// follows the header's types on any): `gcnArchName` at byte 396 of 792.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::offset_of!(PropertiesR0000, gcn_arch_name) == 396);
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::offset_of!(PropertiesR0000, multi_processor_count) == 336);
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<PropertiesR0000>() == 792);

/// ROCm 6's `hipDeviceProp_tR0600`, field by field.
#[repr(C)]
struct PropertiesR0600 {
    name: [c_char; NAME_BYTES],
    uuid: Uuid,
    luid: [c_char; 8],
    luid_device_node_mask: c_uint,
    total_global_mem: usize,
    shared_mem_per_block: usize,
    regs_per_block: c_int,
    warp_size: c_int,
    mem_pitch: usize,
    max_threads_per_block: c_int,
    max_threads_dim: [c_int; 3],
    max_grid_size: [c_int; 3],
    clock_rate: c_int,
    total_const_mem: usize,
    major: c_int,
    minor: c_int,
    texture_alignment: usize,
    texture_pitch_alignment: usize,
    device_overlap: c_int,
    multi_processor_count: c_int,
    kernel_exec_timeout_enabled: c_int,
    integrated: c_int,
    can_map_host_memory: c_int,
    compute_mode: c_int,
    max_texture_1d: c_int,
    max_texture_1d_mipmap: c_int,
    max_texture_1d_linear: c_int,
    max_texture_2d: [c_int; 2],
    max_texture_2d_mipmap: [c_int; 2],
    max_texture_2d_linear: [c_int; 3],
    max_texture_2d_gather: [c_int; 2],
    max_texture_3d: [c_int; 3],
    max_texture_3d_alt: [c_int; 3],
    max_texture_cubemap: c_int,
    max_texture_1d_layered: [c_int; 2],
    max_texture_2d_layered: [c_int; 3],
    max_texture_cubemap_layered: [c_int; 2],
    max_surface_1d: c_int,
    max_surface_2d: [c_int; 2],
    max_surface_3d: [c_int; 3],
    max_surface_1d_layered: [c_int; 2],
    max_surface_2d_layered: [c_int; 3],
    max_surface_cubemap: c_int,
    max_surface_cubemap_layered: [c_int; 2],
    surface_alignment: usize,
    concurrent_kernels: c_int,
    ecc_enabled: c_int,
    pci_bus_id: c_int,
    pci_device_id: c_int,
    pci_domain_id: c_int,
    tcc_driver: c_int,
    async_engine_count: c_int,
    unified_addressing: c_int,
    memory_clock_rate: c_int,
    memory_bus_width: c_int,
    l2_cache_size: c_int,
    persisting_l2_cache_max_size: c_int,
    max_threads_per_multi_processor: c_int,
    stream_priorities_supported: c_int,
    global_l1_cache_supported: c_int,
    local_l1_cache_supported: c_int,
    shared_mem_per_multiprocessor: usize,
    regs_per_multiprocessor: c_int,
    managed_memory: c_int,
    is_multi_gpu_board: c_int,
    multi_gpu_board_group_id: c_int,
    host_native_atomic_supported: c_int,
    single_to_double_precision_perf_ratio: c_int,
    pageable_memory_access: c_int,
    concurrent_managed_access: c_int,
    compute_preemption_supported: c_int,
    can_use_host_pointer_for_registered_mem: c_int,
    cooperative_launch: c_int,
    cooperative_multi_device_launch: c_int,
    shared_mem_per_block_optin: usize,
    pageable_memory_access_uses_host_page_tables: c_int,
    direct_managed_mem_access_from_host: c_int,
    max_blocks_per_multi_processor: c_int,
    access_policy_max_window_size: c_int,
    reserved_shared_mem_per_block: usize,
    host_register_supported: c_int,
    sparse_hip_array_supported: c_int,
    host_register_read_only_supported: c_int,
    timeline_semaphore_interop_supported: c_int,
    memory_pools_supported: c_int,
    gpu_direct_rdma_supported: c_int,
    gpu_direct_rdma_flush_writes_options: c_uint,
    gpu_direct_rdma_writes_ordering: c_int,
    memory_pool_supported_handle_types: c_uint,
    deferred_mapping_hip_array_supported: c_int,
    ipc_event_supported: c_int,
    cluster_launch: c_int,
    unified_function_pointers: c_int,
    reserved: [c_int; 63],
    hip_reserved: [c_int; 32],
    gcn_arch_name: [c_char; NAME_BYTES],
    max_shared_memory_per_multi_processor: usize,
    clock_instruction_rate: c_int,
    arch: DeviceArch,
    hdp_mem_flush_cntl: *mut c_uint,
    hdp_reg_flush_cntl: *mut c_uint,
    cooperative_multi_device_unmatched_func: c_int,
    cooperative_multi_device_unmatched_grid_dim: c_int,
    cooperative_multi_device_unmatched_block_dim: c_int,
    cooperative_multi_device_unmatched_shared_mem: c_int,
    is_large_bar: c_int,
    asic_revision: c_int,
}

// The header's layout on 64-bit targets: `gcnArchName` at byte 1,160 of
// 1,472.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::offset_of!(PropertiesR0600, gcn_arch_name) == 1160);
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::offset_of!(PropertiesR0600, multi_processor_count) == 388);
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<PropertiesR0600>() == 1472);

/// A `hipDeviceProp_t` layout and the entry point that fills it.
///
/// # Safety
///
/// The type is a `#[repr(C)]` mirror of the struct [`Layout::SYMBOL`]
/// fills, and all-zero bytes are a value of it.
unsafe trait Layout: Sized {
    /// The entry point filling this layout.
    const SYMBOL: &'static str;

    /// The `gcnArchName` field.
    fn gcn_arch_name(&self) -> &[c_char; NAME_BYTES];

    /// The `multiProcessorCount` field: the device's compute units.
    fn multi_processor_count(&self) -> c_int;
}

// SAFETY: the mirror of ROCm 5's `hipDeviceProp_t` (checked above against
// the header's offset and size), which the old symbol fills in ROCm 5 and
// 6; its fields are integers, arrays of them, and raw pointers.
unsafe impl Layout for PropertiesR0000 {
    const SYMBOL: &'static str = "hipGetDeviceProperties";

    fn gcn_arch_name(&self) -> &[c_char; NAME_BYTES] {
        &self.gcn_arch_name
    }

    fn multi_processor_count(&self) -> c_int {
        self.multi_processor_count
    }
}

// SAFETY: the mirror of `hipDeviceProp_tR0600` (checked above against the
// header's offset and size); its fields are integers, arrays of them, and
// raw pointers.
unsafe impl Layout for PropertiesR0600 {
    const SYMBOL: &'static str = "hipGetDevicePropertiesR0600";

    fn gcn_arch_name(&self) -> &[c_char; NAME_BYTES] {
        &self.gcn_arch_name
    }

    fn multi_processor_count(&self) -> c_int {
        self.multi_processor_count
    }
}

/// The properties entry point a library exports, by the layout it fills.
#[derive(Clone, Copy, Debug)]
pub(super) enum Properties {
    /// `hipGetDevicePropertiesR0600` (ROCm 6 and later).
    R0600(GetProperties),
    /// `hipGetDeviceProperties`, ROCm 5's layout (ROCm 5, or a library
    /// without the ROCm 6 symbol).
    R0000(GetProperties),
}

impl Properties {
    /// The newest entry point `library` exports: `hipGetDevicePropertiesR0600`
    /// if it has it, else `hipGetDeviceProperties`.
    pub(super) fn find(library: &Library) -> Result<Properties, Error> {
        match entry(library, PropertiesR0600::SYMBOL) {
            Ok(get) => Ok(Properties::R0600(get)),
            Err(_) => entry(library, PropertiesR0000::SYMBOL).map(Properties::R0000),
        }
    }

    /// The entry point's name.
    pub(super) fn symbol(self) -> &'static str {
        match self {
            Properties::R0600(_) => PropertiesR0600::SYMBOL,
            Properties::R0000(_) => PropertiesR0000::SYMBOL,
        }
    }

    /// The `gcnArchName` and compute units of device `ordinal` (`device`
    /// names it in errors).
    pub(super) fn describe(self, ordinal: c_int, device: &str) -> Result<(String, u32), Error> {
        match self {
            Properties::R0600(get) => describe(&query::<PropertiesR0600>(get, ordinal)?, device),
            Properties::R0000(get) => describe(&query::<PropertiesR0000>(get, ordinal)?, device),
        }
    }
}

/// The properties of device `ordinal` through `get`, which must be
/// `L::SYMBOL`.
fn query<L: Layout>(get: GetProperties, ordinal: c_int) -> Result<L, Error> {
    let mut properties = MaybeUninit::<L>::zeroed();
    // SAFETY: `get` is `L::SYMBOL` (its C signature is `GetProperties`),
    // which writes an `L` (the `Layout` contract) through a pointer
    // to a whole, aligned `L`; `ordinal` is below the probed device count.
    let status = unsafe { get(properties.as_mut_ptr().cast(), ordinal) };
    check(
        &format!("reading the device properties ({})", L::SYMBOL),
        status,
    )?;
    // SAFETY: the bytes were zeroed, a value of `L` (the `Layout`
    // contract), and the driver wrote a value of the struct `L` mirrors.
    Ok(unsafe { properties.assume_init() })
}

/// The `gcnArchName` of `properties` and its compute units (at least 1).
fn describe<L: Layout>(properties: &L, device: &str) -> Result<(String, u32), Error> {
    let units = u32::try_from(properties.multi_processor_count().max(1)).unwrap_or(1);
    Ok((arch_name(properties, device)?, units))
}

/// The `gcnArchName` of `properties`, read through `L::SYMBOL` for
/// `device`: NUL-terminated, non-empty UTF-8.
fn arch_name<L: Layout>(properties: &L, device: &str) -> Result<String, Error> {
    let bytes = properties.gcn_arch_name().map(|c| c as u8);
    let reason = match CStr::from_bytes_until_nul(&bytes) {
        Err(_) => format!("its {NAME_BYTES} bytes hold no NUL"),
        Ok(text) if text.is_empty() => "it is empty".to_string(),
        Ok(text) => match text.to_str() {
            Ok(name) => return Ok(name.to_string()),
            Err(e) => format!("it is not UTF-8 ({e})"),
        },
    };
    Err(Error::DriverReply {
        api: "HIP",
        call: L::SYMBOL.to_string(),
        device: device.to_string(),
        reply: "gcnArchName".to_string(),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zeroed `L`.
    fn zeroed<L: Layout>() -> L {
        // SAFETY: all-zero bytes are a value of `L` (the `Layout` contract).
        unsafe { MaybeUninit::<L>::zeroed().assume_init() }
    }

    /// `text` and a NUL in a `char[256]` field.
    fn put(field: &mut [c_char; NAME_BYTES], text: &[u8]) {
        for (to, &from) in field.iter_mut().zip(text.iter().chain(&[0])) {
            *to = from as c_char;
        }
    }

    /// ROCm 6's layout, `name` and other fields holding `gfx` text too.
    fn r0600(arch: &[u8]) -> PropertiesR0600 {
        let mut p = zeroed::<PropertiesR0600>();
        put(&mut p.name, b"gfx1100 lookalike device");
        p.luid = [b'g', b'f', b'x', b'9', 0, 0, 0, 0].map(|b| b as c_char);
        p.reserved = [0x0078_6667; 63]; // "gfx\0", little-endian
        p.max_texture_1d = 0x0078_6667;
        put(&mut p.gcn_arch_name, arch);
        p.asic_revision = 0x0078_6667;
        p
    }

    /// ROCm 5's layout, `name` and other fields holding `gfx` text too.
    fn r0000(arch: &[u8]) -> PropertiesR0000 {
        let mut p = zeroed::<PropertiesR0000>();
        put(&mut p.name, b"gfx90a:sramecc+:xnack- lookalike");
        p.gcn_arch = 0x0078_6667;
        p.pci_device_id = 0x0078_6667;
        put(&mut p.gcn_arch_name, arch);
        p.asic_revision = 0x0078_6667;
        p
    }

    #[test]
    fn each_layout_gives_its_own_gcn_arch_name() {
        let rocm6 = r0600(b"gfx90a:sramecc+:xnack-");
        assert_eq!(
            arch_name(&rocm6, "hip:0").unwrap(),
            "gfx90a:sramecc+:xnack-"
        );
        assert_eq!(arch_name(&r0000(b"gfx1100"), "hip:1").unwrap(), "gfx1100");
    }

    #[test]
    fn a_name_without_nul_empty_or_not_utf8_is_an_error_naming_call_and_device() {
        let mut no_nul = r0600(b"");
        no_nul.gcn_arch_name = [b'g' as c_char; NAME_BYTES];
        // Each message, or its beginning (the UTF-8 error's is the standard
        // library's).
        let cases: [(Result<String, Error>, &str); 4] = [
            (
                arch_name(&no_nul, "hip:0"),
                "HIP driver call hipGetDevicePropertiesR0600 for device hip:0 returned an unusable gcnArchName: its 256 bytes hold no NUL",
            ),
            (
                arch_name(&r0600(b""), "hip:0"),
                "HIP driver call hipGetDevicePropertiesR0600 for device hip:0 returned an unusable gcnArchName: it is empty",
            ),
            (
                arch_name(&r0000(b""), "hip:2"),
                "HIP driver call hipGetDeviceProperties for device hip:2 returned an unusable gcnArchName: it is empty",
            ),
            (
                arch_name(&r0000(b"gfx\xff90a"), "hip:1"),
                "HIP driver call hipGetDeviceProperties for device hip:1 returned an unusable gcnArchName: it is not UTF-8 (invalid utf-8 sequence",
            ),
        ];
        for (result, message) in cases {
            let error = result.unwrap_err();
            assert!(matches!(error, Error::DriverReply { .. }), "{error:?}");
            assert!(error.to_string().starts_with(message), "{error}");
        }
    }

    /// A `hipGetDevicePropertiesR0600` writing `gfx942` at the header's byte
    /// offset of `gcnArchName`, 1,160, 104 compute units at that of
    /// `multiProcessorCount`, 388, and `gfx` text in `name`.
    unsafe extern "C" fn fake_r0600(properties: *mut c_void, _device: c_int) -> HipResult {
        // SAFETY: the caller passes a whole `hipDeviceProp_tR0600`.
        unsafe { fill(properties.cast(), 1160, 388) };
        0
    }

    /// A `hipGetDeviceProperties` writing `gfx942` at the header's byte
    /// offset of ROCm 5's `gcnArchName`, 396, 104 compute units at that of
    /// its `multiProcessorCount`, 336, and `gfx` text in `name`.
    unsafe extern "C" fn fake_r0000(properties: *mut c_void, _device: c_int) -> HipResult {
        // SAFETY: the caller passes a whole ROCm 5 `hipDeviceProp_t`.
        unsafe { fill(properties.cast(), 396, 336) };
        0
    }

    /// Writes `gfx1100 lookalike` at `out`, `gfx942` at `arch_at`, each
    /// NUL-terminated, and the `int` 104 at `units_at`.
    ///
    /// # Safety
    ///
    /// `out` is valid for writes of `arch_at + 7` and `units_at + 4` bytes,
    /// both above 18.
    unsafe fn fill(out: *mut u8, arch_at: usize, units_at: usize) {
        let units = 104 as c_int;
        for (at, bytes) in [
            (0, c"gfx1100 lookalike".to_bytes_with_nul()),
            (arch_at, c"gfx942".to_bytes_with_nul()),
            (units_at, &units.to_ne_bytes()[..]),
        ] {
            // SAFETY: inside the caller's bytes (the contract).
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.add(at), bytes.len()) };
        }
    }

    /// A failing entry point: `hipErrorInvalidDevice`.
    unsafe extern "C" fn failing(_properties: *mut c_void, _device: c_int) -> HipResult {
        101
    }

    #[test]
    fn each_entry_point_is_read_at_its_layouts_offset() {
        for properties in [Properties::R0600(fake_r0600), Properties::R0000(fake_r0000)] {
            assert_eq!(
                properties.describe(0, "hip:0").unwrap(),
                ("gfx942".to_string(), 104)
            );
        }
        let error = Properties::R0600(failing).describe(0, "hip:0").unwrap_err();
        assert_eq!(
            error.to_string(),
            "HIP driver call failed while reading the device properties (hipGetDevicePropertiesR0600): hipErrorInvalidDevice (101)"
        );
    }
}

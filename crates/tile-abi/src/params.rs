//! The kernel ABI of the GPU targets: a kernel's parameters, and the bytes
//! a launch passes for them.
//!
//! A kernel's parameters are, in order: per tensor of rank `r` its base
//! pointer (the address of element `[0, .., 0]`), `r` extents as `i32` and
//! `r` strides in elements as `i64`; per tensor array a pointer to its
//! tensors' records ([`TensorRecord`], one after another in device memory)
//! and their number as `i32`; per scalar its value in its memory type
//! (bool as `i8`, f16/bf16 as their `i16` bits, FP8 as `i8` bits); then a
//! pointer to the status record ([`crate::status`]).

use std::ffi::c_void;
use tile_ir::{Function, Scalar, Type};

/// Where one tensor of a tensor array is, as the kernel reads it from
/// device memory: for rank `r`, `1 + 2r` little-endian 64-bit words, the
/// base pointer, the `r` extents, then the `r` strides in elements.
pub struct TensorRecord;

impl TensorRecord {
    /// The bytes of the record of a tensor of `rank` axes.
    pub const fn bytes(rank: usize) -> usize {
        8 * (1 + 2 * rank)
    }

    /// The byte offset of the extent of `axis` in the record.
    pub const fn extent_at(axis: usize) -> usize {
        8 * (1 + axis)
    }

    /// The byte offset of the stride of `axis` in a record of `rank` axes.
    pub const fn stride_at(rank: usize, axis: usize) -> usize {
        8 * (1 + rank + axis)
    }

    /// The record of a tensor at `base` of `shape` and `strides`.
    pub fn encode(base: u64, shape: &[usize], strides: &[isize]) -> Vec<u8> {
        let mut bytes = base.to_le_bytes().to_vec();
        for &extent in shape {
            bytes.extend((extent as u64).to_le_bytes());
        }
        for &stride in strides {
            bytes.extend((stride as i64).to_le_bytes());
        }
        bytes
    }
}

/// The parameters of one launch, each as its little-endian bytes, in one
/// buffer (each at a multiple of 8 bytes), so packing a launch allocates
/// twice at most, whatever its parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    bytes: Vec<u8>,
    /// Each parameter's offset in `bytes` and length.
    spans: Vec<(usize, usize)>,
}

/// Room for the parameters of most kernels: a handful of rank-2 tensors,
/// scalars and the status pointer.
impl Default for Packet {
    fn default() -> Packet {
        Packet {
            bytes: Vec::with_capacity(256),
            spans: Vec::with_capacity(32),
        }
    }
}

impl Packet {
    /// Appends one parameter's bytes.
    fn push(&mut self, param: &[u8]) {
        let at = self.bytes.len().next_multiple_of(8);
        self.bytes.resize(at, 0);
        self.bytes.extend_from_slice(param);
        self.spans.push((at, param.len()));
    }

    /// Appends a tensor: its base pointer, extents and strides. Extents
    /// above `i32::MAX` are clamped (the runtime refuses such tensors before
    /// packing them).
    pub fn push_tensor(&mut self, base: u64, shape: &[usize], strides: &[isize]) {
        self.push_pointer(base);
        for &extent in shape {
            let extent = i32::try_from(extent).unwrap_or(i32::MAX);
            self.push(&extent.to_le_bytes());
        }
        for &stride in strides {
            self.push(&(stride as i64).to_le_bytes());
        }
    }

    /// Appends a tensor array: where its records are and how many.
    /// Counts above `i32::MAX` are clamped (the runtime refuses such arrays
    /// before packing them).
    pub fn push_tensors(&mut self, records: u64, count: usize) {
        self.push_pointer(records);
        let count = i32::try_from(count).unwrap_or(i32::MAX);
        self.push(&count.to_le_bytes());
    }

    /// Appends a scalar in its memory type.
    pub fn push_scalar(&mut self, value: Scalar) {
        let size = value.dtype().size_bytes();
        self.push(&value.to_bits().to_le_bytes()[..size]);
    }

    /// Appends a tensor map's bytes (passed by value, `tile_abi::tma`).
    pub fn push_tensor_map(&mut self, map: [u8; crate::tma::MAP_BYTES]) {
        self.push(&map);
    }

    /// Appends a device pointer.
    pub fn push_pointer(&mut self, pointer: u64) {
        self.push(&pointer.to_le_bytes());
    }

    /// Each parameter's bytes, in order.
    pub fn params(&self) -> Vec<&[u8]> {
        self.spans
            .iter()
            .map(|&(at, len)| &self.bytes[at..at + len])
            .collect()
    }

    /// One pointer per parameter to its bytes, as CUDA's `kernelParams`
    /// takes them. The pointers are valid while `self` is neither moved nor
    /// changed.
    pub fn pointers(&mut self) -> Vec<*mut c_void> {
        let base = self.bytes.as_mut_ptr();
        self.spans
            .iter()
            .map(|&(at, _)| base.wrapping_add(at).cast::<c_void>())
            .collect()
    }

    /// The parameters in one buffer, each at the next multiple of its own
    /// size (the C layout of a struct of them), the total rounded up to 8:
    /// what HIP's `HIP_LAUNCH_PARAM_BUFFER_POINTER` takes and what an AMDGPU
    /// kernel reads from its kernarg segment.
    pub fn packed(&self) -> Vec<u8> {
        let mut buffer = Vec::new();
        for param in self.params() {
            let align = param.len().max(1);
            buffer.resize(buffer.len().next_multiple_of(align), 0);
            buffer.extend_from_slice(param);
        }
        buffer.resize(buffer.len().next_multiple_of(8), 0);
        buffer
    }
}

/// The size in bytes of each kernel parameter of `function` under the ABI,
/// the status pointer last.
pub fn param_sizes(function: &Function) -> Vec<usize> {
    let mut sizes = Vec::new();
    for param in &function.params {
        match function.ty(param.value) {
            Type::Tensor(t) => {
                sizes.push(8);
                sizes.extend(std::iter::repeat_n(4, t.rank));
                sizes.extend(std::iter::repeat_n(8, t.rank));
            }
            Type::Tensors(_) => sizes.extend([8, 4]),
            other => sizes.push(other.dtype().size_bytes()),
        }
    }
    sizes.push(8);
    sizes
}

/// The size in bytes of each parameter of the PTX entry `name` (from its
/// `.param .u64 name_param_0, ...` list), or why it could not be read.
pub fn ptx_param_sizes(ptx: &str, name: &str) -> Result<Vec<usize>, String> {
    let entry = format!(".entry {name}(");
    let start = ptx
        .find(&entry)
        .ok_or_else(|| format!("the PTX has no entry `{name}`"))?
        + entry.len();
    let end = ptx[start..]
        .find(')')
        .ok_or_else(|| format!("the parameter list of `{name}` is not closed"))?;
    ptx[start..start + end]
        .split(',')
        .map(str::trim)
        .filter(|decl| !decl.is_empty())
        .map(|decl| {
            if let Some(bytes) = tensor_map_param(decl) {
                return Ok(bytes);
            }
            let ty = decl
                .split_whitespace()
                .find(|t| {
                    t.len() > 2 && t.starts_with('.') && t[2..].bytes().all(|b| b.is_ascii_digit())
                })
                .filter(|_| decl.starts_with(".param") && !decl.contains('['));
            ty.and_then(|t| t[2..].parse::<usize>().ok())
                .filter(|bits| bits % 8 == 0)
                .map(|bits| bits / 8)
                .ok_or_else(|| format!("unrecognized parameter `{decl}`"))
        })
        .collect()
}

/// The bytes of a by-value tensor-map parameter, `.param .align 64 .b8
/// name[128]`, if `decl` is one.
fn tensor_map_param(decl: &str) -> Option<usize> {
    let rest = decl.strip_prefix(".param .align 64 .b8 ")?;
    let (_, size) = rest.split_once('[')?;
    let bytes: usize = size.strip_suffix(']')?.parse().ok()?;
    (bytes == crate::tma::MAP_BYTES).then_some(bytes)
}

/// Checks that the PTX entry `name` takes exactly the parameters the kernel
/// ABI gives `function` (and the tensor maps the PTX says it takes,
/// `crate::tma::MAPS_NOTE`), so a launch never hands the kernel a
/// mis-sized parameter list.
pub fn check_ptx_signature(ptx: &str, function: &Function) -> Result<(), String> {
    let found = ptx_param_sizes(ptx, &function.name)?;
    let mut expected = param_sizes(function);
    let maps = crate::tma::maps_of_ptx(ptx)?;
    expected.extend(maps.iter().map(|_| crate::tma::MAP_BYTES));
    if found != expected {
        return Err(format!(
            "the PTX entry `{}` takes parameters of {found:?} bytes, the kernel ABI of its tile IR {expected:?}",
            function.name
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tile_ir::f8::F8E4M3;

    #[test]
    fn tensors_of_rank_one_to_three_are_pointer_extents_strides() {
        let mut packet = Packet::default();
        packet.push_tensor(0x7000_0000_1000, &[5], &[1]);
        assert_eq!(
            packet.params(),
            [
                &0x7000_0000_1000u64.to_le_bytes()[..],
                &5i32.to_le_bytes(),
                &1i64.to_le_bytes(),
            ]
        );
        let mut packet = Packet::default();
        packet.push_tensor(0x10, &[3, 4], &[4, 1]);
        let sizes: Vec<usize> = packet.params().iter().map(|p| p.len()).collect();
        assert_eq!(sizes, [8, 4, 4, 8, 8]);
        assert_eq!(packet.params()[2], 4i32.to_le_bytes());
        assert_eq!(packet.params()[3], 4i64.to_le_bytes());
        let mut packet = Packet::default();
        packet.push_tensor(0x20, &[2, 3, 4], &[-12, 1, 3]);
        let sizes: Vec<usize> = packet.params().iter().map(|p| p.len()).collect();
        assert_eq!(sizes, [8, 4, 4, 4, 8, 8, 8]);
        assert_eq!(packet.params()[4], (-12i64).to_le_bytes());
        assert_eq!(packet.params()[6], 3i64.to_le_bytes());
    }

    #[test]
    fn scalars_are_their_memory_type() {
        let cases: [(Scalar, Vec<u8>); 8] = [
            (Scalar::Bool(true), vec![1]),
            (Scalar::I8(-2), vec![0xfe]),
            (Scalar::F16(half::f16::from_f32(1.0)), vec![0x00, 0x3c]),
            (Scalar::BF16(half::bf16::from_f32(1.0)), vec![0x80, 0x3f]),
            (Scalar::F8E4M3(F8E4M3::from_bits(0x38)), vec![0x38]),
            (Scalar::I32(-1), vec![0xff; 4]),
            (Scalar::F32(1.0), vec![0x00, 0x00, 0x80, 0x3f]),
            (Scalar::F64(-0.0), vec![0, 0, 0, 0, 0, 0, 0, 0x80]),
        ];
        for (value, bytes) in cases {
            let mut packet = Packet::default();
            packet.push_scalar(value);
            assert_eq!(packet.params(), [&bytes[..]], "{value:?}");
        }
    }

    #[test]
    fn the_packed_buffer_aligns_each_parameter_to_its_size() {
        let mut packet = Packet::default();
        packet.push_tensor(0x1122_3344_5566_7788, &[3], &[2]);
        packet.push_scalar(Scalar::Bool(true));
        packet.push_scalar(Scalar::F32(2.0));
        packet.push_pointer(0xabcd);
        let packed = packet.packed();
        // pointer 0..8, extent 8..12, pad, stride 16..24, bool 24, pad,
        // f32 28..32, status pointer 32..40.
        assert_eq!(packed.len(), 40);
        assert_eq!(packed[0..8], 0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(packed[8..12], 3i32.to_le_bytes());
        assert_eq!(packed[12..16], [0; 4]);
        assert_eq!(packed[16..24], 2i64.to_le_bytes());
        assert_eq!(packed[24..28], [1, 0, 0, 0]);
        assert_eq!(packed[28..32], 2.0f32.to_le_bytes());
        assert_eq!(packed[32..40], 0xabcdu64.to_le_bytes());
        let mut short = Packet::default();
        short.push_scalar(Scalar::I16(7));
        assert_eq!(short.packed(), [7, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn kernel_params_point_at_each_parameter() {
        let mut packet = Packet::default();
        packet.push_tensor(0x40, &[8], &[1]);
        let pointers = packet.pointers();
        assert_eq!(pointers.len(), 3);
        for (pointer, param) in pointers.iter().zip(packet.params()) {
            assert_eq!(pointer.cast_const().cast::<u8>(), param.as_ptr());
        }
    }

    #[test]
    fn the_ptx_signature_must_match_the_abi_of_the_ir() {
        let function = tile_ir::samples::layernorm(2, 8).unwrap();
        // x: 2-D, w, b: 1-D, out: 2-D, eps: f32, then the status pointer.
        let expected = [
            vec![8, 4, 4, 8, 8],
            vec![8, 4, 8],
            vec![8, 4, 8],
            vec![8, 4, 4, 8, 8],
            vec![4, 8],
        ]
        .concat();
        assert_eq!(param_sizes(&function), expected);
        let snapshot = include_str!(
            "../../tile-codegen/tests/snapshots/emit_snapshots__layernorm.sm_80.ptx.snap"
        );
        assert_eq!(ptx_param_sizes(snapshot, "layernorm").unwrap(), expected);
        check_ptx_signature(snapshot, &function).unwrap();
        let add = tile_ir::samples::vector_add(64).unwrap();
        assert_eq!(
            check_ptx_signature(snapshot, &add).unwrap_err(),
            "the PTX has no entry `vector_add`"
        );
        let short = ".visible .entry vector_add(\n\t.param .u64 p0,\n\t.param .u32 p1\n)";
        assert_eq!(
            check_ptx_signature(short, &add).unwrap_err(),
            "the PTX entry `vector_add` takes parameters of [8, 4] bytes, the kernel ABI of its tile IR [8, 4, 8, 8, 4, 8, 8, 4, 8, 8]"
        );
        assert_eq!(
            ptx_param_sizes(".entry k(\n.param .align 8 .b8 k_param_0[16]\n)", "k").unwrap_err(),
            "unrecognized parameter `.param .align 8 .b8 k_param_0[16]`"
        );
    }
}

//! What the HIP runtime reads from an AMDGPU code object (HSACO) before it
//! runs a kernel: the object's length (the runtime is handed a pointer
//! only), its target, and each kernel's arguments, workgroup bound and LDS
//! from the `NT_AMDGPU_METADATA` note.

use crate::driver::{Kernarg, Kernel};
use crate::msgpack::{self, Value};

/// The LDS a workgroup may use on processor `gfx`, in bytes: CDNA 4's
/// 160 KiB on gfx950, 64 KiB on every other AMD target of tile.
pub(crate) fn lds_bytes(gfx: &str) -> usize {
    match gfx {
        "gfx950" => 160 * 1024,
        _ => 64 * 1024,
    }
}

/// An ELF64 header's size.
const HEADER: usize = 64;
/// `EM_AMDGPU`.
const MACHINE_AMDGPU: u16 = 224;
/// `SHT_NOTE`, `SHT_NOBITS`.
const NOTE: u32 = 7;
const NOBITS: u32 = 8;
/// `NT_AMDGPU_METADATA`.
const AMDGPU_METADATA: u32 = 32;

/// `EF_AMDGPU_MACH`: the processor field of an AMDGPU ELF header's flags.
const MACH_MASK: u32 = 0xff;
/// `EF_AMDGPU_GENERIC_VERSION`: the generic version in the flags' top byte.
const GENERIC_VERSION_SHIFT: u32 = 24;

/// The processors of tile's targets by their `EF_AMDGPU_MACH` (LLVM's
/// AMDGPUUsage, "AMDGPU ELF Header"), generic ones included.
const MACHINES: &[(u32, &str)] = &[
    (0x03f, "gfx90a"),
    (0x041, "gfx1100"),
    (0x048, "gfx1200"),
    (0x04c, "gfx942"),
    (0x04e, "gfx1201"),
    (0x04f, "gfx950"),
    (0x054, "gfx11-generic"),
    (0x059, "gfx12-generic"),
    (0x05f, "gfx9-4-generic"),
];

/// The processor an AMDGPU ELF header's flags name, as the ROCm loader
/// reads it (not from the metadata), and for a generic processor its
/// generic version, which must be at least 1.
fn processor(header: &[u8]) -> Result<&'static str, String> {
    let flags = u32_at(header, 0x30)?;
    let mach = flags & MACH_MASK;
    let gfx = MACHINES
        .iter()
        .find(|&&(m, _)| m == mach)
        .map(|&(_, gfx)| gfx)
        .ok_or_else(|| {
            format!(
                "the code object's processor (machine {mach:#05x}) is not one of tile's targets"
            )
        })?;
    let version = flags >> GENERIC_VERSION_SHIFT;
    if tile_abi::amd_generic::is_generic(gfx) && version == 0 {
        return Err(format!("the {gfx} code object has no generic version"));
    }
    Ok(gfx)
}

/// A code object as the runtime reads it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CodeObject {
    /// The processor its ELF header names, without features: `gfx942`,
    /// or a generic one, `gfx9-4-generic`.
    pub(crate) gfx: String,
    /// Its kernels.
    pub(crate) kernels: Vec<Kernel>,
}

fn read<const N: usize>(bytes: &[u8], at: usize) -> Result<[u8; N], String> {
    bytes
        .get(at..at + N)
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| format!("the ELF file is truncated at byte {at}"))
}

fn u16_at(bytes: &[u8], at: usize) -> Result<u16, String> {
    read(bytes, at).map(u16::from_le_bytes)
}

fn u32_at(bytes: &[u8], at: usize) -> Result<u32, String> {
    read(bytes, at).map(u32::from_le_bytes)
}

fn u64_at(bytes: &[u8], at: usize) -> Result<usize, String> {
    read(bytes, at).map(|b| u64::from_le_bytes(b) as usize)
}

/// The largest code object read (a guard against a header that claims more).
const MAX_BYTES: usize = 1 << 30;

/// A section header's type, file offset and size.
struct Section {
    kind: u32,
    offset: usize,
    size: usize,
}

/// The section headers of the little-endian ELF64 AMDGPU object that
/// `header` starts.
fn sections(header: &[u8]) -> Result<(usize, Vec<Section>), String> {
    let end = table_end(header)?;
    let table = u64_at(header, 0x28)?;
    let entry = usize::from(u16_at(header, 0x3a)?);
    let count = usize::from(u16_at(header, 0x3c)?);
    let sections = (0..count)
        .map(|i| {
            // Below `end`, which did not overflow.
            let at = table + i * entry;
            Ok(Section {
                kind: u32_at(header, at + 4)?,
                offset: u64_at(header, at + 0x18)?,
                size: u64_at(header, at + 0x20)?,
            })
        })
        .collect::<Result<_, String>>()?;
    Ok((end, sections))
}

/// The length of the code object starting at `start`: the end of its
/// section header table or of its last section, whichever is later.
///
/// # Safety
///
/// `start` points at a complete code object (what `hipModuleLoadData`
/// requires): its ELF header and every byte it describes are readable.
pub(crate) unsafe fn length(start: *const u8) -> Result<usize, String> {
    // SAFETY: a code object holds at least its header (the contract).
    let header = unsafe { std::slice::from_raw_parts(start, HEADER) };
    let end = table_end(header)?;
    // SAFETY: the header is an AMDGPU ELF64 header (checked), and the
    // section header table it describes is part of the object.
    let prefix = unsafe { std::slice::from_raw_parts(start, end) };
    let (end, sections) = sections(prefix)?;
    sections
        .iter()
        .filter(|s| s.kind != NOBITS)
        .map(|s| s.offset.checked_add(s.size))
        .try_fold(end.max(HEADER), |max, e| e.map(|e| max.max(e)))
        .filter(|&len| len <= MAX_BYTES)
        .ok_or_else(|| "a section reaches past the largest code object read".to_string())
}

/// The end of the section header table of the AMDGPU ELF64 object whose
/// header `header` is, once the header is checked to be one.
fn table_end(header: &[u8]) -> Result<usize, String> {
    if !header.starts_with(b"\x7fELF") || header.get(4..6) != Some(&[2, 1]) {
        return Err("not a little-endian ELF64 file".into());
    }
    if u16_at(header, 18)? != MACHINE_AMDGPU {
        return Err("not an AMDGPU code object".into());
    }
    let table = u64_at(header, 0x28)?;
    let entry = usize::from(u16_at(header, 0x3a)?);
    let count = usize::from(u16_at(header, 0x3c)?);
    table
        .checked_add(entry * count)
        .filter(|&end| end <= MAX_BYTES)
        .ok_or_else(|| "the section header table lies past the largest code object read".into())
}

impl CodeObject {
    /// Reads a code object's metadata.
    pub(crate) fn parse(bytes: &[u8]) -> Result<CodeObject, String> {
        let (_, sections) = sections(bytes)?;
        let metadata = sections
            .iter()
            .filter(|s| s.kind == NOTE)
            .find_map(|s| metadata_note(bytes.get(s.offset..s.offset.checked_add(s.size)?)?))
            .ok_or("the code object has no AMDGPU metadata note")??;
        let gfx = processor(bytes)?.to_string();
        let kernels = metadata
            .get("amdhsa.kernels")
            .and_then(Value::as_array)
            .ok_or("the metadata lists no amdhsa.kernels")?
            .iter()
            .map(|entry| kernel(entry, lds_bytes(&gfx)))
            .collect::<Result<_, String>>()?;
        Ok(CodeObject { gfx, kernels })
    }
}

/// The decoded metadata of a note section, if it holds the AMDGPU one.
fn metadata_note(notes: &[u8]) -> Option<Result<Value, String>> {
    let mut at = 0;
    while at + 12 <= notes.len() {
        let name_size = u32_at(notes, at).ok()? as usize;
        let desc_size = u32_at(notes, at + 4).ok()? as usize;
        let kind = u32_at(notes, at + 8).ok()?;
        let name_at = at + 12;
        let desc_at = name_at + name_size.next_multiple_of(4);
        let name = notes.get(name_at..name_at + name_size)?;
        let desc = notes.get(desc_at..desc_at + desc_size)?;
        if kind == AMDGPU_METADATA && name.starts_with(b"AMDGPU") {
            return Some(msgpack::decode(desc));
        }
        at = desc_at + desc_size.next_multiple_of(4);
    }
    None
}

/// A kernel of `amdhsa.kernels`: its explicit arguments (the `hidden_*`
/// ones are the runtime's), workgroup bound and LDS, of a processor with
/// `lds` bytes of it.
fn kernel(entry: &Value, lds: usize) -> Result<Kernel, String> {
    let field = |key: &str| {
        entry
            .get(key)
            .and_then(Value::as_usize)
            .ok_or_else(|| format!("a kernel's metadata lacks `{key}`"))
    };
    let name = entry
        .get(".name")
        .and_then(Value::as_str)
        .ok_or("a kernel's metadata lacks `.name`")?
        .to_string();
    let mut params = Vec::new();
    let mut offsets = Vec::new();
    for arg in entry.get(".args").and_then(Value::as_array).unwrap_or(&[]) {
        let kind = arg.get(".value_kind").and_then(Value::as_str).unwrap_or("");
        if kind.starts_with("hidden_") {
            continue;
        }
        let number = |key: &str| {
            arg.get(key)
                .and_then(Value::as_usize)
                .ok_or_else(|| format!("an argument of `{name}` lacks `{key}`"))
        };
        offsets.push(number(".offset")?);
        params.push(number(".size")?);
    }
    let static_shared = field(".group_segment_fixed_size")?;
    Ok(Kernel {
        params,
        required_block: None,
        max_block: None,
        max_threads: Some(field(".max_flat_workgroup_size")? as u32),
        static_shared,
        dynamic_needed: 0,
        dynamic_limit: lds.saturating_sub(static_shared),
        kernarg: Some(Kernarg {
            offsets,
            segment: field(".kernarg_segment_size")?,
        }),
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The processor comes from the ELF flags, as the ROCm loader reads it:
    /// its machine, and for a generic one a generic version.
    #[test]
    fn the_processor_is_the_elf_flags_machine() {
        let header = |flags: u32| {
            let mut bytes = vec![0u8; HEADER];
            bytes[0x30..0x34].copy_from_slice(&flags.to_le_bytes());
            bytes
        };
        assert_eq!(processor(&header(0x54c)), Ok("gfx942"));
        assert_eq!(processor(&header(0x100_055f)), Ok("gfx9-4-generic"));
        assert_eq!(processor(&header(0x100_0059)), Ok("gfx12-generic"));
        assert_eq!(
            processor(&header(0x05f)),
            Err("the gfx9-4-generic code object has no generic version".to_string())
        );
        assert!(processor(&header(0x0ff)).is_err());
    }

    /// An AMDGPU ELF64 header whose section header table holds `count`
    /// entries of 64 bytes at `table`.
    fn header(table: u64, count: u16) -> Vec<u8> {
        let mut h = vec![0u8; HEADER];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4..6].copy_from_slice(&[2, 1]);
        h[18..20].copy_from_slice(&MACHINE_AMDGPU.to_le_bytes());
        h[0x28..0x30].copy_from_slice(&table.to_le_bytes());
        h[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        h[0x3c..0x3e].copy_from_slice(&count.to_le_bytes());
        h
    }

    #[test]
    fn malformed_objects_are_refused_before_anything_past_them_is_read() {
        let mut other = header(64, 0);
        other[18] = 62; // x86-64
        assert_eq!(table_end(&other).unwrap_err(), "not an AMDGPU code object");
        assert_eq!(
            table_end(b"not an ELF file, but long enough for a header: 64 bytes or more.")
                .unwrap_err(),
            "not a little-endian ELF64 file"
        );
        let far = header(1 << 40, 4);
        assert!(table_end(&far).unwrap_err().contains("past the largest"));
        // SAFETY: the header claims no sections, so only it is read.
        assert_eq!(unsafe { length(header(64, 0).as_ptr()) }, Ok(HEADER));
        // A table the bytes do not hold, and no metadata note.
        assert!(CodeObject::parse(&header(64, 2))
            .unwrap_err()
            .contains("truncated"));
        assert_eq!(
            CodeObject::parse(&header(64, 0)).unwrap_err(),
            "the code object has no AMDGPU metadata note"
        );
    }

    /// A kernel's dynamic LDS is what its processor has beyond its static
    /// LDS: CDNA 4's 160 KiB on gfx950, 64 KiB on the others.
    #[test]
    fn the_dynamic_lds_limit_is_the_processors() {
        let text = |s: &str| Value::Str(s.into());
        let entry = Value::Map(vec![
            (text(".name"), text("k")),
            (text(".args"), Value::Array(Vec::new())),
            (text(".group_segment_fixed_size"), Value::Int(1024)),
            (text(".max_flat_workgroup_size"), Value::Int(256)),
            (text(".kernarg_segment_size"), Value::Int(0)),
        ]);
        let limit = |gfx: &str| kernel(&entry, lds_bytes(gfx)).map(|k| k.dynamic_limit);
        assert_eq!(limit("gfx950"), Ok(159 * 1024));
        for gfx in ["gfx90a", "gfx942", "gfx1100", "gfx1200"] {
            assert_eq!(limit(gfx), Ok(63 * 1024), "{gfx}");
        }
    }
}

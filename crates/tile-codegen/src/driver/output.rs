//! What compiling a specialization for one target gives, and its form as a
//! kernel-cache payload.
//!
//! The payload is the image's bytes and the shared memory of its blocks,
//! the texts of its stages (each a presence byte, then a length and bytes),
//! the GPU bounds checks, the host checks, the dump files, each as a
//! length and bytes, and the register usage (a tag, then three integers;
//! integers little-endian). Decoding checks every length
//! against what is left, the image's kind against the target's, and that
//! every dump file is a plain name; anything else makes the payload
//! unusable (the entry is rebuilt).

use super::registers::{RegisterUsage, Spills};
use super::{CompiledImage, TargetText};
use crate::target::Target;
use std::borrow::Cow;
use tile_abi::{HostCheck, ImageKind};

/// One target's output of a specialization.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TargetOutput {
    /// The image the kernel embeds, with the shared memory of its blocks.
    pub image: CompiledImage,
    /// The text of its stages the kernel embeds.
    pub text: TargetText,
    /// The GPU image's bounds checks, in the order its status records name
    /// them (empty for the host).
    pub bounds_checks: Vec<String>,
    /// The host image's checks (empty for a GPU).
    pub host_checks: Vec<HostCheck>,
    /// `TILE_DUMP`'s files of this target: name and contents.
    pub dumps: Vec<(String, Vec<u8>)>,
    /// The GPU image's registers, when measured (`targets.rs` says when).
    pub registers: Option<RegisterUsage>,
}

/// The kind of image each target's output holds.
pub(crate) fn image_kind(target: Target) -> ImageKind {
    match target {
        Target::Nvptx(_) => ImageKind::Ptx,
        Target::Amdgpu(_) => ImageKind::Hsaco,
        Target::Host(_) => ImageKind::Host,
    }
}

impl TargetOutput {
    /// The payload of the cache entry.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Writer(Vec::new());
        out.bytes(&self.image.bytes);
        out.u64(self.image.shared_memory_bytes as u64);
        out.u64(self.image.block_threads.into());
        out.optional_text(self.text.thread_program.as_deref());
        out.optional_text(self.text.amdgpu_assembly.as_deref());
        out.u64(self.bounds_checks.len() as u64);
        for check in &self.bounds_checks {
            out.bytes(check.as_bytes());
        }
        out.u64(self.host_checks.len() as u64);
        for check in &self.host_checks {
            out.bytes(check.op.as_bytes());
            out.0.push(check.values);
        }
        out.u64(self.dumps.len() as u64);
        for (name, contents) in &self.dumps {
            out.bytes(name.as_bytes());
            out.bytes(contents);
        }
        let (tag, registers, a, b) = match self.registers {
            None => (0, 0, 0, 0),
            Some(RegisterUsage {
                registers,
                spills: Spills::Bytes { stores, loads },
                ..
            }) => (1, registers, stores, loads),
            Some(RegisterUsage {
                registers,
                spills: Spills::Registers { vgprs, sgprs },
                ..
            }) => (2, registers, vgprs, sgprs),
        };
        for value in [tag, registers, a, b] {
            out.u64(value.into());
        }
        out.0
    }

    /// The output for `target` that `payload` holds, or why it holds none.
    pub(crate) fn decode(payload: &[u8], target: Target) -> Result<TargetOutput, String> {
        let mut input = Reader(payload);
        let bytes = input.bytes()?.to_vec();
        let shared_memory_bytes = usize::try_from(input.u64()?)
            .map_err(|_| "a shared memory size beyond usize".to_string())?;
        let block_threads = u32::try_from(input.u64()?)
            .map_err(|_| "a block of more threads than a u32 holds".to_string())?;
        let image = CompiledImage {
            kind: image_kind(target),
            target,
            bytes,
            shared_memory_bytes,
            block_threads,
        };
        let text = TargetText {
            target,
            thread_program: input.optional_text()?,
            amdgpu_assembly: input.optional_text()?,
        };
        let bounds_checks = (0..input.count()?)
            .map(|_| input.text().map(str::to_string))
            .collect::<Result<_, _>>()?;
        let host_checks = (0..input.count()?)
            .map(|_| {
                let op = input.text()?.to_string();
                let values = input.take(1)?[0];
                Ok(HostCheck {
                    op: Cow::Owned(op),
                    values,
                })
            })
            .collect::<Result<_, String>>()?;
        let dumps = (0..input.count()?)
            .map(|_| {
                let name = input.text()?.to_string();
                if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
                    return Err(format!("a dump file named {name:?}"));
                }
                Ok((name, input.bytes()?.to_vec()))
            })
            .collect::<Result<_, String>>()?;
        let registers = registers(&mut input, target)?;
        if !input.0.is_empty() {
            return Err(format!("{} bytes after the output", input.0.len()));
        }
        Ok(TargetOutput {
            image,
            text,
            bounds_checks,
            host_checks,
            dumps,
            registers,
        })
    }
}

/// The register usage `input` holds next, for `target`.
fn registers(input: &mut Reader<'_>, target: Target) -> Result<Option<RegisterUsage>, String> {
    let mut number = || {
        let value = input.u64()?;
        u32::try_from(value).map_err(|_| format!("a register figure of {value}"))
    };
    let (tag, registers, a, b) = (number()?, number()?, number()?, number()?);
    let spills = match tag {
        0 => return Ok(None),
        1 => Spills::Bytes {
            stores: a,
            loads: b,
        },
        2 => Spills::Registers { vgprs: a, sgprs: b },
        other => return Err(format!("a register usage of kind {other}")),
    };
    Ok(Some(RegisterUsage {
        target,
        registers,
        spills,
    }))
}

struct Writer(Vec<u8>);

impl Writer {
    fn u64(&mut self, value: u64) {
        self.0.extend_from_slice(&value.to_le_bytes());
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.u64(bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }

    fn optional_text(&mut self, text: Option<&str>) {
        match text {
            None => self.0.push(0),
            Some(text) => {
                self.0.push(1);
                self.bytes(text.as_bytes());
            }
        }
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.0.len() {
            return Err(format!("{n} bytes wanted where {} are left", self.0.len()));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u64(&mut self) -> Result<u64, String> {
        let bytes = self.take(8)?;
        Ok(u64::from_le_bytes(bytes.try_into().expect("8 bytes")))
    }

    /// A count of items, each of which takes at least one byte.
    fn count(&mut self) -> Result<usize, String> {
        let n = self.u64()?;
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= self.0.len())
            .ok_or_else(|| format!("{n} items in {} bytes", self.0.len()))
    }

    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = self.u64()?;
        let n = usize::try_from(n).map_err(|_| format!("a length of {n}"))?;
        self.take(n)
    }

    fn text(&mut self) -> Result<&'a str, String> {
        std::str::from_utf8(self.bytes()?).map_err(|e| format!("text that is not UTF-8: {e}"))
    }

    fn optional_text(&mut self) -> Result<Option<String>, String> {
        match self.take(1)?[0] {
            0 => Ok(None),
            1 => Ok(Some(self.text()?.to_string())),
            other => Err(format!("a text of presence {other}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::{Gfx, Sm};
    use tile_abi::HostIsa;

    fn gpu_output() -> TargetOutput {
        let target = Target::Amdgpu(Gfx::Gfx942);
        TargetOutput {
            image: CompiledImage {
                kind: ImageKind::Hsaco,
                target,
                bytes: vec![0x7f, b'E', b'L', b'F', 0, 1],
                shared_memory_bytes: 4096,
                block_threads: 128,
            },
            text: TargetText {
                target,
                thread_program: Some("kernel copy(...) {\n}\n".into()),
                amdgpu_assembly: Some("\ts_endpgm\n".into()),
            },
            bounds_checks: vec!["%3 = load_masked %1[%2]".into(), "%5 = store".into()],
            host_checks: Vec::new(),
            dumps: vec![
                ("gfx942.ll".into(), b"; ModuleID".to_vec()),
                ("thread.txt".into(), Vec::new()),
            ],
            registers: Some(RegisterUsage {
                target,
                registers: 512,
                spills: Spills::Registers {
                    vgprs: 66,
                    sgprs: 36,
                },
            }),
        }
    }

    #[test]
    fn outputs_round_trip() {
        let gpu = gpu_output();
        let decoded = TargetOutput::decode(&gpu.encode(), gpu.image.target).unwrap();
        assert_eq!(decoded, gpu);
        let target = Target::Host(HostIsa::X86_64V3);
        let host = TargetOutput {
            image: CompiledImage {
                kind: ImageKind::Host,
                target,
                bytes: vec![1, 2, 3],
                shared_memory_bytes: 0,
                block_threads: 0,
            },
            text: TargetText {
                target,
                thread_program: None,
                amdgpu_assembly: None,
            },
            bounds_checks: Vec::new(),
            host_checks: vec![HostCheck {
                op: Cow::Borrowed("%4 = load %1[%2]"),
                values: 2,
            }],
            dumps: Vec::new(),
            registers: None,
        };
        assert_eq!(TargetOutput::decode(&host.encode(), target).unwrap(), host);
    }

    #[test]
    fn malformed_payloads_are_refused() {
        let gpu = gpu_output();
        let target = gpu.image.target;
        let payload = gpu.encode();
        // Every truncation fails, none panics.
        for len in 0..payload.len() {
            assert!(
                TargetOutput::decode(&payload[..len], target).is_err(),
                "{len}"
            );
        }
        let extended = [payload.as_slice(), &[0]].concat();
        assert!(TargetOutput::decode(&extended, target)
            .unwrap_err()
            .contains("after the output"));
        // A huge count or length is refused before anything is allocated.
        let mut huge = payload.clone();
        huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(TargetOutput::decode(&huge, target).is_err());
        // A dump file must not leave its directory.
        let mut escaping = gpu.clone();
        escaping.dumps[0].0 = "../../etc/passwd".into();
        let error = TargetOutput::decode(&escaping.encode(), target).unwrap_err();
        assert!(error.contains("dump file named"), "{error}");
        // A register usage of an unknown kind is refused.
        let mut unknown = payload.clone();
        let tag = unknown.len() - 32;
        unknown[tag] = 3;
        let error = TargetOutput::decode(&unknown, target).unwrap_err();
        assert!(error.contains("register usage of kind 3"), "{error}");
        // A text is present or absent, nothing else.
        let mut presence = payload.clone();
        // After the image's length and bytes, its shared memory and threads.
        let at = 8 + gpu.image.bytes.len() + 8 + 8;
        assert_eq!(presence[at], 1);
        presence[at] = 2;
        let error = TargetOutput::decode(&presence, target).unwrap_err();
        assert!(error.contains("text of presence 2"), "{error}");
        // The image, its text and the registers take the target they are
        // decoded for.
        let sm = Target::Nvptx(Sm::Sm80);
        let decoded = TargetOutput::decode(&payload, sm).unwrap();
        assert_eq!(decoded.image.kind, ImageKind::Ptx);
        assert_eq!(decoded.text.target, sm);
        assert_eq!(decoded.registers.unwrap().target, sm);
    }
}

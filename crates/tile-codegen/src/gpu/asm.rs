//! Inline PTX for Hopper's asynchronous instructions: `wgmma.mma_async`
//! (LLVM 22's `IntrinsicsNVVM.td` has intrinsics for its fence, commit and
//! wait but none for the product), its fence, commit and wait with it,
//! `fence.proxy.async`, and the TMA's bulk tensor copies, as the PTX ISA's
//! "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions"
//! and `cp.async.bulk.tensor` define them (Triton emits them as inline PTX
//! too). Each snippet clobbers memory, so LLVM keeps their order among
//! themselves and against every shared access, as it keeps the mbarrier
//! intrinsics' (`gpu/tma.rs`: `arrive.expect_tx` and `try_wait.parity`,
//! which LLVM 22 emits as the snippets did, may touch any memory); the
//! emulation target models snippet by snippet. LLVM 22's TMA copy
//! intrinsic takes its destination in the cluster's shared window, whose
//! conversion from the block's costs two `cvta`s a copy, so the copy stays
//! a snippet. Also inline PTX: `griddepcontrol`, and,
//! as Triton writes them, masked global loads and stores as one
//! predicated instruction each (`@p ld.global`, `@p st.global`, of one
//! element or of a 16- or 8-byte vector), where LLVM would branch around
//! the access: a branch ends ptxas's scheduling region, so the values
//! computed before it stay live across it. One snippet serves AMDGPU too: the
//! optimization barrier of the thread-level `opaque`, an assembler comment
//! whose operand is tied to its result.
//!
//! Each snippet is an [`Asm`], which names its template and constraints
//! once: the GPU emitter builds the call from them, and the emulation
//! target recognizes the call by them (`Asm::parse` reads a template and
//! constraints back only if they are exactly what [`Asm`] writes). Every
//! snippet but the optimization barrier, `cvt.rn.bf16.f32` and the load of
//! a tensor the kernel never writes (`ld.global.nc`) clobbers memory, so
//! that LLVM keeps shared-memory accesses on their side of it; `wgmma`'s
//! accumulators are tied operands, and `wgmma.wait_group` passes them
//! through, so that no read of D moves above the wait.

use super::tcgen05::Tcgen05Asm;
use tile_hw::wgmma::{Major, WgmmaKind};

/// One inline-PTX snippet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Asm {
    /// `wgmma.mma_async` of `kind`, A and B by descriptor, accumulating
    /// when the scale operand is nonzero: `(acc…, desc_a: i64, desc_b: i64,
    /// scale_d: i32) -> acc…`.
    Wgmma(WgmmaKind),
    /// [`Asm::Wgmma`] with A from four `.b32` registers (two 16-bit
    /// elements each): `(acc…, a0..a3: i32, desc_b: i64, scale_d: i32) ->
    /// acc…`.
    WgmmaRegisterA(WgmmaKind),
    /// `wgmma.fence.sync.aligned`.
    WgmmaFence,
    /// `wgmma.commit_group.sync.aligned`.
    WgmmaCommit,
    /// `wgmma.wait_group.sync.aligned pending`, passing `values` `f32`
    /// accumulators through.
    WgmmaWait {
        /// The groups that may stay in flight.
        pending: u8,
        /// The accumulators passed through.
        values: usize,
    },
    /// `fence.proxy.async.shared::cta`.
    FenceProxyAsync,
    /// `griddepcontrol.wait` (`wait`) or `griddepcontrol.launch_dependents`
    /// (sm_90+).
    GridDepControl {
        /// Which of the two.
        wait: bool,
    },
    /// `cp.async.bulk.tensor.2d.shared::cluster.global.tile
    /// .mbarrier::complete_tx::bytes`: `(dst: i64, map: i64, c0: i32, c1:
    /// i32, bar: i64)`, shared addresses and the tensor map's generic one.
    TmaLoad2d,
    /// `@p ld.global[.nc]` of one `bits`-bit element: `(at: ptr, p: i1,
    /// other) -> value`, `other` where `p` is false (tied to the result).
    /// 8-bit elements travel in 16-bit registers. `.nc` (through the
    /// read-only data cache) is for tensors the kernel never writes: such
    /// a load has no side effects and clobbers nothing.
    LoadGlobal {
        /// The element's bits: 8, 16, 32 or 64.
        bits: u8,
        /// Whether through the read-only data cache.
        nc: bool,
    },
    /// `@p st.global` of one `bits`-bit element: `(p: i1, at: ptr, value)`.
    StoreGlobal {
        /// The element's bits: 8, 16, 32 or 64.
        bits: u8,
    },
    /// `@p ld.global[.nc].v{words}.b32` of 8 or 16 bytes: `(at: ptr, p: i1,
    /// other…: i32) -> {i32…}`, the `other` words where `p` is false (tied
    /// to the results).
    LoadVector {
        /// The 32-bit words: 2 or 4.
        words: u8,
        /// Whether through the read-only data cache.
        nc: bool,
    },
    /// `cvt.rn.bf16.f32`: `(x: f32) -> i16`, the bf16's bits (sm_80 on).
    /// Inline, as LLVM's `fptrunc` to `bfloat` would become a call of a
    /// runtime library function where the emulation target compiles the
    /// module for the CPU.
    CvtBf16,
    /// `@p st.global.v{words}.b32` of 8 or 16 bytes: `(p: i1, at: ptr,
    /// value…: i32)`.
    StoreVector {
        /// The 32-bit words: 2 or 4.
        words: u8,
    },
    /// `red.relaxed.{gpu,cta}.global.add.v{words}.f32`: `(at: ptr, value…:
    /// f32)`, relaxed atomic adds of 8 or 16 bytes of `f32`, each element
    /// its own update (sm_90 on, PTX 8.1).
    AddVectorF32 {
        /// The elements: 2 or 4.
        words: u8,
        /// Whether at the device's scope (`.gpu`), else the block's (`.cta`).
        gpu: bool,
    },
    /// A `bits`-bit integer passed through unchanged, as an optimization
    /// barrier (the thread-level `opaque`): an assembler comment, its
    /// operand tied to its result. The one snippet for AMDGPU too (`amd`:
    /// a VGPR, and AMDGPU's comment syntax).
    Opaque {
        /// 32 or 64.
        bits: u8,
        /// Whether for AMDGPU.
        amd: bool,
    },
    /// Blackwell's tensor memory and `tcgen05.mma` (`gpu/tcgen05.rs`).
    Tcgen05(Tcgen05Asm),
}

/// The element sizes of [`Asm::LoadGlobal`] and [`Asm::StoreGlobal`].
const ACCESS_BITS: [u8; 4] = [8, 16, 32, 64];

/// The 32-bit words of [`Asm::LoadVector`] and [`Asm::StoreVector`].
pub(crate) const VECTOR_WORDS: [u8; 2] = [2, 4];

/// `{$first, …}`: a vector access's `words` registers in PTX.
fn word_list(first: usize, words: u8) -> String {
    let regs: Vec<String> = (first..first + usize::from(words))
        .map(|i| format!("${i}"))
        .collect();
    format!("{{{}}}", regs.join(", "))
}

/// The PTX type of a `bits`-bit access (`u8`: a byte zero-extended into its
/// 16-bit register).
fn access_type(bits: u8) -> String {
    match bits {
        8 => "u8".into(),
        b => format!("b{b}"),
    }
}

/// The constraint of a `bits`-bit access's register.
fn access_register(bits: u8) -> &'static str {
    match bits {
        8 | 16 => "h",
        32 => "r",
        _ => "l",
    }
}

/// The clobber every snippet carries.
pub(super) const MEMORY: &str = "~{memory}";

impl Asm {
    /// The PTX template, on one line.
    pub(crate) fn template(self) -> String {
        match self {
            Asm::Wgmma(kind) => {
                let n = kind.accumulators();
                let d: Vec<String> = (0..n).map(|i| format!("${i}")).collect();
                let (a, b, scale) = (2 * n, 2 * n + 1, 2 * n + 2);
                // 8-bit and `tf32` operands have no `imm-trans` operands (both
                // K-major).
                let trans = match kind.k_major_only() {
                    true => String::new(),
                    false => format!(", 0, {}", kind.trans_b()),
                };
                format!(
                    "{{ .reg .pred p; setp.ne.b32 p, ${scale}, 0; wgmma.mma_async.sync.aligned.m64n{}k{}.f32.{t}.{t} {{{}}}, ${a}, ${b}, p, 1, 1{trans}; }}",
                    kind.n,
                    kind.k(),
                    d.join(", "),
                    t = kind.ptx_type(),
                )
            }
            Asm::WgmmaRegisterA(kind) => {
                let n = kind.accumulators();
                let d: Vec<String> = (0..n).map(|i| format!("${i}")).collect();
                let (b, scale) = (2 * n + 4, 2 * n + 5);
                format!(
                    "{{ .reg .pred p; setp.ne.b32 p, ${scale}, 0; wgmma.mma_async.sync.aligned.m64n{}k16.f32.{t}.{t} {{{}}}, {}, ${b}, p, 1, 1, {}; }}",
                    kind.n,
                    d.join(", "),
                    word_list(2 * n, 4),
                    kind.trans_b(),
                    t = kind.ptx_type(),
                )
            }
            Asm::WgmmaFence => "wgmma.fence.sync.aligned;".into(),
            Asm::WgmmaCommit => "wgmma.commit_group.sync.aligned;".into(),
            Asm::WgmmaWait { pending, .. } => format!("wgmma.wait_group.sync.aligned {pending};"),
            Asm::FenceProxyAsync => "fence.proxy.async.shared::cta;".into(),
            Asm::GridDepControl { wait: true } => "griddepcontrol.wait;".into(),
            Asm::GridDepControl { wait: false } => "griddepcontrol.launch_dependents;".into(),
            Asm::TmaLoad2d => "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];".into(),
            Asm::LoadGlobal { bits, nc } => format!(
                "@$2 ld.global{}.{} $0, [$1];",
                if nc { ".nc" } else { "" },
                access_type(bits)
            ),
            Asm::StoreGlobal { bits } => format!("@$0 st.global.{} [$1], $2;", access_type(bits)),
            Asm::LoadVector { words, nc } => format!(
                "@${} ld.global{}.v{words}.b32 {}, [${words}];",
                words + 1,
                if nc { ".nc" } else { "" },
                word_list(0, words)
            ),
            Asm::StoreVector { words } => {
                format!("@$0 st.global.v{words}.b32 [$1], {};", word_list(2, words))
            }
            Asm::AddVectorF32 { words, gpu } => format!(
                "red.relaxed.{}.global.add.v{words}.f32 [$0], {};",
                if gpu { "gpu" } else { "cta" },
                word_list(1, words)
            ),
            Asm::CvtBf16 => "cvt.rn.bf16.f32 $0, $1;".into(),
            Asm::Opaque { bits, amd: true } => format!("; opaque b{bits}"),
            Asm::Opaque { bits, amd: false } => format!("// opaque b{bits}"),
            Asm::Tcgen05(t) => t.template(),
        }
    }

    /// The constraint string: outputs, inputs (tied ones by the output's
    /// number), clobbers.
    pub(crate) fn constraints(self) -> String {
        let tied = |n: usize, extra: &[&str], clobbers: &[&str]| {
            let mut c: Vec<String> = vec!["=f".to_string(); n];
            c.extend((0..n).map(|i| i.to_string()));
            c.extend(extra.iter().chain(clobbers).map(|s| s.to_string()));
            c.join(",")
        };
        match self {
            Asm::Wgmma(kind) => tied(kind.accumulators(), &["l", "l", "r"], &[MEMORY]),
            Asm::WgmmaRegisterA(kind) => tied(
                kind.accumulators(),
                &["r", "r", "r", "r", "l", "r"],
                &[MEMORY],
            ),
            Asm::WgmmaWait { values, .. } => tied(values, &[], &[MEMORY]),
            Asm::TmaLoad2d => format!("l,l,r,r,l,{MEMORY}"),
            Asm::WgmmaFence
            | Asm::WgmmaCommit
            | Asm::FenceProxyAsync
            | Asm::GridDepControl { .. } => MEMORY.into(),
            Asm::LoadGlobal { bits, nc: true } => format!("={},l,b,0", access_register(bits)),
            Asm::LoadGlobal { bits, nc: false } => {
                format!("={},l,b,0,{MEMORY}", access_register(bits))
            }
            Asm::StoreGlobal { bits } => format!("b,l,{},{MEMORY}", access_register(bits)),
            Asm::LoadVector { words, nc } => {
                let n = usize::from(words);
                let mut c = vec!["=r".to_string(); n];
                c.extend(["l".to_string(), "b".to_string()]);
                c.extend((0..n).map(|i| i.to_string()));
                if !nc {
                    c.push(MEMORY.into());
                }
                c.join(",")
            }
            Asm::StoreVector { words } => {
                format!("b,l,{},{MEMORY}", vec!["r"; usize::from(words)].join(","))
            }
            Asm::AddVectorF32 { words, .. } => {
                format!("l,{},{MEMORY}", vec!["f"; usize::from(words)].join(","))
            }
            Asm::CvtBf16 => "=h,f".into(),
            Asm::Opaque { amd: true, .. } => "=v,0".into(),
            Asm::Opaque { bits, amd: false } => format!("={},0", access_register(bits)),
            Asm::Tcgen05(t) => t.constraints(),
        }
    }

    /// Whether LLVM must keep the snippet where it is and as often as it
    /// runs: all but a load of read-only memory.
    pub(crate) fn has_side_effects(self) -> bool {
        !matches!(
            self,
            Asm::LoadGlobal { nc: true, .. }
                | Asm::LoadVector { nc: true, .. }
                | Asm::Opaque { .. }
                | Asm::CvtBf16
        )
    }

    /// The snippet a template and constraints were written for, if one was.
    pub(crate) fn parse(template: &str, constraints: &str) -> Option<Asm> {
        let candidate = if let Some(t) = Tcgen05Asm::parse(template) {
            Asm::Tcgen05(t)
        } else if let Some(rest) = template.strip_prefix("wgmma.wait_group.sync.aligned ") {
            let pending = rest.strip_suffix(';')?.parse().ok()?;
            let values = constraints.split(',').filter(|c| *c == "=f").count();
            Asm::WgmmaWait { pending, values }
        } else if let Some(at) = template.find("wgmma.mma_async.sync.aligned.m64n") {
            let rest = &template[at + "wgmma.mma_async.sync.aligned.m64n".len()..];
            let (n, rest) = rest.split_once('k')?;
            let (_, rest) = rest.split_once(".f32.")?;
            let dtype = tile_hw::wgmma::ptx_dtype(rest.split_once('.')?.0)?;
            let kind = WgmmaKind::new(dtype, n.parse().ok()?)?;
            // `imm-trans-b`, the last immediate: 0 for a K-major B (8-bit
            // and `tf32` operands have none, and are K-major).
            let b_major = match template.rsplit_once(';')?.0.trim_end().ends_with(", 0") {
                _ if kind.k_major_only() => Major::K,
                true => Major::K,
                false => Major::Mn,
            };
            let kind = kind.with_b_major(b_major);
            match template.contains("}, {$") {
                true => Asm::WgmmaRegisterA(kind),
                false => Asm::Wgmma(kind),
            }
        } else {
            let accesses = ACCESS_BITS.into_iter().flat_map(|bits| {
                [
                    Asm::LoadGlobal { bits, nc: true },
                    Asm::LoadGlobal { bits, nc: false },
                    Asm::StoreGlobal { bits },
                ]
            });
            let vectors = VECTOR_WORDS.into_iter().flat_map(|words| {
                [
                    Asm::LoadVector { words, nc: true },
                    Asm::LoadVector { words, nc: false },
                    Asm::StoreVector { words },
                    Asm::AddVectorF32 { words, gpu: true },
                    Asm::AddVectorF32 { words, gpu: false },
                ]
            });
            let opaque = [32, 64]
                .into_iter()
                .flat_map(|bits| [false, true].map(|amd| Asm::Opaque { bits, amd }));
            [
                Asm::WgmmaFence,
                Asm::WgmmaCommit,
                Asm::FenceProxyAsync,
                Asm::GridDepControl { wait: true },
                Asm::GridDepControl { wait: false },
                Asm::TmaLoad2d,
                Asm::CvtBf16,
            ]
            .into_iter()
            .chain(accesses)
            .chain(vectors)
            .chain(opaque)
            .find(|a| a.template() == template)?
        };
        (candidate.template() == template && candidate.constraints() == constraints)
            .then_some(candidate)
    }

    /// The name of its replacement on the emulation target. The
    /// replacements of global accesses are `tile_ptx.*`, whose loads and
    /// stores the emulation's access checks see, as they see the kernel's
    /// own; the others, which call the emulation's runtime, `tile_emu.*`.
    pub(crate) fn replacement(self) -> String {
        match self {
            Asm::LoadGlobal { .. }
            | Asm::StoreGlobal { .. }
            | Asm::LoadVector { .. }
            | Asm::StoreVector { .. }
            | Asm::AddVectorF32 { .. } => format!("tile_ptx.{}", self.name()),
            _ => format!("tile_emu.{}", self.name()),
        }
    }

    fn name(self) -> String {
        match self {
            Asm::Wgmma(kind) => format!("wgmma.{}", kind.name()),
            Asm::WgmmaRegisterA(kind) => format!("wgmma.registers.{}", kind.name()),
            Asm::WgmmaFence => "wgmma.fence".into(),
            Asm::WgmmaCommit => "wgmma.commit".into(),
            Asm::WgmmaWait { pending, values } => format!("wgmma.wait.{pending}.{values}"),
            Asm::FenceProxyAsync => "fence.proxy.async".into(),
            Asm::GridDepControl { wait: true } => "griddepcontrol.wait".into(),
            Asm::GridDepControl { wait: false } => "griddepcontrol.launch_dependents".into(),
            Asm::TmaLoad2d => "tma.load".into(),
            Asm::LoadGlobal { bits, nc } => {
                format!("ld.global{}.b{bits}", if nc { ".nc" } else { "" })
            }
            Asm::StoreGlobal { bits } => format!("st.global.b{bits}"),
            Asm::LoadVector { words, nc } => {
                format!("ld.global{}.v{words}.b32", if nc { ".nc" } else { "" })
            }
            Asm::StoreVector { words } => format!("st.global.v{words}.b32"),
            Asm::AddVectorF32 { words, gpu } => {
                format!(
                    "red.{}.global.add.v{words}.f32",
                    if gpu { "gpu" } else { "cta" }
                )
            }
            Asm::CvtBf16 => "cvt.rn.bf16.f32".into(),
            Asm::Opaque { bits, .. } => format!("opaque.b{bits}"),
            Asm::Tcgen05(t) => t.name(),
        }
    }

    /// The `f32` values it returns (and takes first).
    pub(crate) fn values(self) -> usize {
        match self {
            Asm::Wgmma(kind) | Asm::WgmmaRegisterA(kind) => kind.accumulators(),
            Asm::WgmmaWait { values, .. } => values,
            Asm::TmaLoad2d => 0,
            Asm::WgmmaFence
            | Asm::WgmmaCommit
            | Asm::FenceProxyAsync
            | Asm::GridDepControl { .. } => 0,
            Asm::LoadGlobal { .. }
            | Asm::StoreGlobal { .. }
            | Asm::LoadVector { .. }
            | Asm::StoreVector { .. }
            | Asm::AddVectorF32 { .. }
            | Asm::CvtBf16
            | Asm::Opaque { .. } => 0,
            Asm::Tcgen05(t) => t.values(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tile_ir::DType;

    /// Every snippet reads back from its own template and constraints, and
    /// from nothing else.
    #[test]
    fn snippets_parse_back_exactly() {
        let kinds = [
            Asm::Wgmma(WgmmaKind::new(DType::F16, 64).unwrap()),
            Asm::Wgmma(WgmmaKind::new(DType::BF16, 8).unwrap()),
            Asm::Wgmma(WgmmaKind::new(DType::F8E5M2, 128).unwrap()),
            Asm::Wgmma(WgmmaKind::new(DType::F32, 256).unwrap()),
            Asm::Wgmma(
                WgmmaKind::new(DType::F16, 64)
                    .unwrap()
                    .with_b_major(Major::K),
            ),
            Asm::WgmmaRegisterA(
                WgmmaKind::new(DType::BF16, 64)
                    .unwrap()
                    .with_b_major(Major::K),
            ),
            Asm::WgmmaFence,
            Asm::WgmmaCommit,
            Asm::WgmmaWait {
                pending: 1,
                values: 64,
            },
            Asm::FenceProxyAsync,
            Asm::TmaLoad2d,
            Asm::Opaque {
                bits: 64,
                amd: false,
            },
            Asm::Opaque {
                bits: 32,
                amd: true,
            },
            Asm::LoadGlobal { bits: 8, nc: true },
            Asm::LoadGlobal {
                bits: 64,
                nc: false,
            },
            Asm::StoreGlobal { bits: 16 },
            Asm::LoadVector { words: 4, nc: true },
            Asm::LoadVector {
                words: 2,
                nc: false,
            },
            Asm::StoreVector { words: 4 },
            Asm::CvtBf16,
        ];
        let mmas = tile_hw::tcgen05::Qualifier::DENSE
            .map(|qualifier| Asm::Tcgen05(Tcgen05Asm::Mma { qualifier }));
        let others = [Tcgen05Asm::MmaTensorA, Tcgen05Asm::MmaScaled].map(Asm::Tcgen05);
        for asm in kinds.into_iter().chain(mmas).chain(others) {
            assert_eq!(Asm::parse(&asm.template(), &asm.constraints()), Some(asm));
        }
        let wgmma = Asm::Wgmma(WgmmaKind::new(DType::F16, 64).unwrap());
        assert!(wgmma
            .template()
            .contains("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, $1,"));
        assert!(wgmma
            .template()
            .ends_with("$31}, $64, $65, p, 1, 1, 0, 1; }"));
        assert!(wgmma.constraints().ends_with(",31,l,l,r,~{memory}"));
        // A K-major B (B transposed): `imm-trans-b = 0`.
        let k_major = Asm::Wgmma(
            WgmmaKind::new(DType::F16, 64)
                .unwrap()
                .with_b_major(Major::K),
        );
        assert!(k_major
            .template()
            .ends_with("$31}, $64, $65, p, 1, 1, 0, 0; }"));
        let registers = Asm::WgmmaRegisterA(WgmmaKind::new(DType::BF16, 64).unwrap());
        assert_eq!(
            Asm::parse(&registers.template(), &registers.constraints()),
            Some(registers)
        );
        assert!(registers
            .template()
            .ends_with("$31}, {$64, $65, $66, $67}, $68, p, 1, 1, 1; }"));
        assert!(registers
            .constraints()
            .ends_with(",31,r,r,r,r,l,r,~{memory}"));
        assert_eq!(
            registers.replacement(),
            "tile_emu.wgmma.registers.m64n64k16.bf16"
        );
        assert_eq!(Asm::parse("wgmma.fence.sync.aligned;", ""), None);
        let byte = Asm::LoadGlobal { bits: 8, nc: true };
        assert_eq!(byte.template(), "@$2 ld.global.nc.u8 $0, [$1];");
        assert_eq!(byte.constraints(), "=h,l,b,0");
        assert!(!byte.has_side_effects());
        let load = Asm::LoadGlobal {
            bits: 32,
            nc: false,
        };
        assert_eq!(load.template(), "@$2 ld.global.b32 $0, [$1];");
        assert_eq!(load.constraints(), "=r,l,b,0,~{memory}");
        assert!(load.has_side_effects());
        let store = Asm::StoreGlobal { bits: 64 };
        assert_eq!(store.template(), "@$0 st.global.b64 [$1], $2;");
        assert_eq!(store.constraints(), "b,l,l,~{memory}");
        assert_eq!(store.replacement(), "tile_ptx.st.global.b64");
        let vector = Asm::LoadVector { words: 4, nc: true };
        assert_eq!(
            vector.template(),
            "@$5 ld.global.nc.v4.b32 {$0, $1, $2, $3}, [$4];"
        );
        assert_eq!(vector.constraints(), "=r,=r,=r,=r,l,b,0,1,2,3");
        assert!(!vector.has_side_effects());
        let vector = Asm::StoreVector { words: 2 };
        assert_eq!(vector.template(), "@$0 st.global.v2.b32 [$1], {$2, $3};");
        assert_eq!(vector.constraints(), "b,l,r,r,~{memory}");
        assert_eq!(vector.replacement(), "tile_ptx.st.global.v2.b32");
        let opaque = Asm::Opaque {
            bits: 64,
            amd: true,
        };
        assert_eq!(
            (opaque.template(), opaque.constraints()),
            ("; opaque b64".to_string(), "=v,0".to_string())
        );
        assert_eq!(opaque.replacement(), "tile_emu.opaque.b64");
        // The `.nc` form's template with the other form's constraints is
        // neither.
        assert_eq!(
            Asm::parse(
                &byte.template(),
                &Asm::LoadGlobal { bits: 8, nc: false }.constraints()
            ),
            None
        );
        assert_eq!(
            Asm::parse(
                &wgmma.template().replace("$65", "$66"),
                &wgmma.constraints()
            ),
            None
        );
    }
}

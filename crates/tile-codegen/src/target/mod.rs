//! Code generation targets: which GPU, or which instruction-set level of the CPU, a kernel is
//! compiled for, and the LLVM target machine that compiles for it.
//!
//! | name                                    | LLVM triple                  | CPU         | features        |
//! |-----------------------------------------|------------------------------|-------------|-----------------|
//! | `sm_75` … `sm_90a`, `sm_100a`, `sm_103a`, `sm_120a` ([`Sm`]) | `nvptx64-nvidia-cuda` | the `sm_*` | `+ptxNN` (min.) |
//! | `gfx90a`, `gfx942`, `gfx950`, `gfx1100`, `gfx1200`, `gfx1201`, `gfx9-4-generic`, `gfx11-generic`, `gfx12-generic` ([`Gfx`]) | `amdgcn-amd-amdhsa` | the `gfx*` | (none) |
//! | `x86_64-v3`, `x86_64`, `aarch64` ([`HostIsa`]) | `x86_64-unknown-linux-gnu`, `aarch64-unknown-linux-gnu` | the level's | the level's |
//!
//! Host code is always compiled for fixed instruction-set levels, never for the building CPU, so
//! that a binary runs wherever the CPU device finds its level. The name `host` in a list of
//! targets ([`parse_targets`]) stands for every level of the building machine's architecture
//! ([`HostIsa::for_this_architecture`]).

use std::fmt;
use std::str::FromStr;
use std::sync::Once;
use tile_thread::TensorCores;

use inkwell::module::Module;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target as LlvmTarget, TargetMachine,
    TargetTriple,
};
use inkwell::OptimizationLevel;
use tile_abi::HostIsa;

/// The LLVM triple of every NVPTX target.
pub const NVPTX_TRIPLE: &str = "nvptx64-nvidia-cuda";
/// The LLVM triple of every AMDGPU target (HSA code objects).
pub const AMDGPU_TRIPLE: &str = "amdgcn-amd-amdhsa";

mod arch;

pub use arch::{Gfx, Sm};

/// What a kernel is compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    /// An NVIDIA GPU: LLVM's NVPTX backend emits PTX, which `ptxas` assembles.
    Nvptx(Sm),
    /// An AMD GPU: LLVM's AMDGPU backend emits assembly, assembled into an object that lld
    /// links to a code object (both in this process).
    Amdgpu(Gfx),
    /// The CPU device at one instruction-set level: LLVM emits an object that lld (in this
    /// process) links to a shared object.
    Host(HostIsa),
}

/// The word that stands for every host level of this architecture in a list of targets.
pub const HOST: &str = "host";

impl Target {
    /// The 32-lane warps the lowering gives a block of this target for a
    /// kernel's `num_warps`, which counts the target's own warps as
    /// Triton's does: 32-lane warps on NVIDIA and RDNA (wave32), 64-lane
    /// wavefronts on CDNA, so that a CDNA block has twice the lowering's
    /// warps. Host code has none.
    pub fn lowering_warps(self, num_warps: u32) -> u32 {
        match self {
            Target::Amdgpu(gfx) if gfx.is_cdna() => 2 * num_warps,
            Target::Host(_) => 0,
            _ => num_warps,
        }
    }

    /// The threads of a block of this target for a kernel's `num_warps`
    /// (0 for host code).
    pub fn block_threads(self, num_warps: u32) -> u32 {
        32 * self.lowering_warps(num_warps)
    }

    /// Every target name that [`Target::from_str`] accepts, then [`HOST`].
    pub fn accepted_names() -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Sm::ALL.iter().map(|sm| sm.name()).collect();
        names.extend(Gfx::ALL.iter().map(|gfx| gfx.name()));
        names.extend(HostIsa::ALL.iter().map(|isa| isa.name()));
        names.push(HOST);
        names
    }

    /// Whether this is a GPU target.
    pub fn is_gpu(&self) -> bool {
        !matches!(self, Target::Host(_))
    }

    /// Whether the target rounds an f32 to f16 in one instruction, to
    /// nearest even, subnormals and overflow to infinity included: PTX's
    /// `cvt.rn.f16.f32`, AMDGPU's `v_cvt_f16_f32` (kernels keep f16
    /// denormals), x86-64-v3's F16C `vcvtps2ph` and AArch64's `fcvt`. Baseline
    /// x86-64 has none: LLVM would call a runtime function that a host
    /// shared object must not need.
    pub fn converts_f16(&self) -> bool {
        !matches!(self, Target::Host(HostIsa::X86_64))
    }

    /// Whether an `atomicrmw` of an order other than `relaxed` must be a
    /// relaxed one between fences: LLVM's NVPTX back end emits every
    /// `atomicrmw` as PTX's `atom` with no `.sem` (relaxed), whatever its
    /// ordering, where a lock's release would then not release what the
    /// holder wrote (its `cmpxchg` keeps the order: `atom.acq_rel.cas`).
    pub fn fences_atomic_orders(&self) -> bool {
        matches!(self, Target::Nvptx(_))
    }

    /// Whether the target rounds an f32 to bf16 in one instruction, to
    /// nearest even: PTX's `cvt.rn.bf16.f32` from sm_80 on. Elsewhere LLVM
    /// would expand `fptrunc` or call a runtime function, and the integer
    /// rounding is as short.
    pub fn converts_bf16(&self) -> bool {
        matches!(self, Target::Nvptx(sm) if sm.number() >= 80)
    }

    /// Whether the target widens E4M3 to f16 in one instruction: PTX's
    /// `cvt.rn.f16x2.e4m3x2` (exact: every E4M3 value is an f16), from
    /// sm_90 on. sm_89 has it too, but LLVM 22 selects it there only from
    /// PTX 8.1, above sm_89's oldest version ([`Sm::ptx_version`]), which
    /// the target keeps. E5M2 needs no instruction anywhere: its bits are
    /// the upper byte of the f16 of the same value.
    pub fn converts_e4m3(&self) -> bool {
        matches!(self, Target::Nvptx(sm) if sm.number() >= 90)
    }

    /// Whether the target adds, subtracts and multiplies `dtype` (f16 or
    /// bf16) in its own instructions, each rounded once to the dtype: PTX's
    /// `add`/`sub`/`mul` (`fma` with `-0.0` or `1.0` for bf16 before sm_90)
    /// on `.f16`, `.bf16` and their packed pairs from sm_80 on. The result
    /// is the one the f32 operation rounded to the dtype gives (f32 has
    /// more than twice their precision and two bits, so the double rounding
    /// is innocuous), in 16-bit registers, two to an instruction.
    pub fn adds_16_bit_floats(&self, dtype: tile_ir::DType) -> bool {
        matches!(dtype, tile_ir::DType::F16 | tile_ir::DType::BF16)
            && matches!(self, Target::Nvptx(sm) if sm.number() >= 80)
    }

    /// Whether f32 `min`/`max` (IEEE 754-2019 `minimum`/`maximum`: a NaN if
    /// either operand is one, `-0 < +0`) are emitted as `llvm.minimum.f32`/
    /// `llvm.maximum.f32`, which the back end lowers better than the scalar
    /// emitter's compares and selects: PTX's `min.NaN.f32`/`max.NaN.f32`
    /// from sm_80 on; on AMD `v_max_f32`/`v_min_f32` (which order `-0`
    /// below `+0`) with one compare and select for the NaN, three
    /// instructions against eight, and CDNA 4's `v_maximum3_f32` and RDNA 4's
    /// `v_maximum_f32` where the processor has them. The host and older
    /// NVIDIA GPUs keep the selects.
    pub fn uses_min_max_intrinsics(&self) -> bool {
        match self {
            Target::Nvptx(sm) => sm.number() >= 80,
            Target::Amdgpu(_) => true,
            Target::Host(_) => false,
        }
    }

    /// Whether the exact math library's functions (f64, `exp` to `pow`)
    /// stay calls instead of being inlined at every use: on the GPUs, where
    /// `ptxas` or LLVM's AMDGPU back end then compiles each function once.
    /// The library computes in f64, which GPUs run at 1/2 to 1/64 of the
    /// f32 rate, so a call costs little beside the function itself
    /// (docs/backends.md, "Math library"). Host code vectorizes inlined
    /// calls, so it inlines them.
    pub fn outlines_exact_math(&self) -> bool {
        self.is_gpu()
    }

    /// The tensor-core instructions the lowering may use on this target:
    /// `mma.sync.m16n8k16` from sm_80 on, its FP8 form from sm_89 on,
    /// `wgmma` on sm_90a, `tcgen05.mma` on sm_100a and sm_103a, WMMA on RDNA 3 and 4, MFMA on CDNA (with CDNA 4's
    /// own forms on gfx950).
    pub fn tensor_cores(&self) -> TensorCores {
        match self {
            Target::Nvptx(Sm::Sm75) | Target::Host(_) => TensorCores::None,
            Target::Nvptx(Sm::Sm90a) => TensorCores::Wgmma,
            Target::Nvptx(Sm::Sm100a | Sm::Sm103a) => TensorCores::Tcgen05,
            Target::Nvptx(Sm::Sm120a) => TensorCores::MmaSyncScaled,
            Target::Nvptx(Sm::Sm89 | Sm::Sm90) => TensorCores::MmaSyncFp8,
            Target::Nvptx(_) => TensorCores::MmaSync,
            Target::Amdgpu(Gfx::Gfx1100 | Gfx::Gfx11Generic) => TensorCores::Wmma,
            Target::Amdgpu(Gfx::Gfx90a | Gfx::Gfx942 | Gfx::Gfx94Generic) => TensorCores::Mfma,
            Target::Amdgpu(Gfx::Gfx950) => TensorCores::Mfma950,
            Target::Amdgpu(Gfx::Gfx1200 | Gfx::Gfx1201 | Gfx::Gfx12Generic) => TensorCores::Wmma12,
        }
    }

    /// Whether the target has the TMA (`cp.async.bulk.tensor` and mbarrier
    /// transaction counts): sm_90 and later. An sm_90 image that uses it
    /// declares PTX 8.0 instead of the architecture's 7.8.
    pub fn has_tma(&self) -> bool {
        matches!(self, Target::Nvptx(sm) if sm.number() >= 90)
    }

    /// The target as the attribute's per-target settings name it:
    /// its name, with `_` for the `-` an identifier cannot hold
    /// (`num_warps(gfx9_4_generic = 16)`).
    pub fn attribute_name(&self) -> String {
        self.to_string().replace('-', "_")
    }

    /// The LLVM target triple, e.g. `nvptx64-nvidia-cuda`.
    pub fn triple(&self) -> &'static str {
        match self {
            Target::Nvptx(_) => NVPTX_TRIPLE,
            Target::Amdgpu(_) => AMDGPU_TRIPLE,
            Target::Host(isa) => isa.llvm_triple(),
        }
    }

    /// The LLVM CPU name: the `sm_*`/`gfx*` name, or the host level's CPU.
    pub fn cpu(&self) -> &'static str {
        match self {
            Target::Nvptx(sm) => sm.name(),
            Target::Amdgpu(gfx) => gfx.name(),
            Target::Host(isa) => isa.llvm_cpu(),
        }
    }

    /// The LLVM feature string: for NVPTX the PTX ISA version (e.g. `+ptx78`, see
    /// [`Sm::ptx_version`]), for AMDGPU none (the architecture's defaults), for the host the
    /// level's.
    pub fn features(&self) -> String {
        self.features_with_ptx(0)
    }

    /// [`features`](Self::features) asking for PTX ISA version `min_ptx` (times ten) or
    /// later on NVPTX: the version some instructions need (`mma.sync`'s FP8 form, 8.4).
    pub fn features_with_ptx(&self, min_ptx: u32) -> String {
        match self {
            Target::Nvptx(sm) => format!("+ptx{}", sm.ptx_version().max(min_ptx)),
            Target::Amdgpu(_) => String::new(),
            Target::Host(isa) => isa.llvm_features().to_owned(),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Nvptx(sm) => sm.fmt(f),
            Target::Amdgpu(gfx) => gfx.fmt(f),
            Target::Host(isa) => isa.fmt(f),
        }
    }
}

impl FromStr for Target {
    type Err = TargetError;

    /// One target by its name (`sm_80`, `gfx942`, `x86_64-v3`); [`HOST`] names several, so
    /// lists go through [`parse_targets`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(sm) = Sm::ALL.into_iter().find(|sm| sm.name() == s) {
            return Ok(Target::Nvptx(sm));
        }
        if let Some(gfx) = Gfx::ALL.into_iter().find(|gfx| gfx.name() == s) {
            return Ok(Target::Amdgpu(gfx));
        }
        if let Some(isa) = HostIsa::from_name(s) {
            return Ok(Target::Host(isa));
        }
        Err(TargetError::Unknown {
            name: s.to_owned(),
            accepted: Target::accepted_names().join(", "),
        })
    }
}

/// The targets a name stands for: one, or for [`HOST`] every host level of this architecture
/// (none where host code is not built).
pub fn targets_named(name: &str) -> Result<Vec<Target>, TargetError> {
    if name == HOST {
        return Ok(HostIsa::for_this_architecture()
            .into_iter()
            .map(Target::Host)
            .collect());
    }
    name.parse().map(|t| vec![t])
}

/// The targets of a comma-separated list of names (`"sm_90, host"`), in order, without
/// repetitions; blank entries are ignored.
pub fn parse_targets(list: &str) -> Result<Vec<Target>, TargetError> {
    let mut targets: Vec<Target> = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        for target in targets_named(name)? {
            if !targets.contains(&target) {
                targets.push(target);
            }
        }
    }
    Ok(targets)
}

/// The targets compiled for when none are named: the NVIDIA architectures `sm_80`, `sm_86`,
/// `sm_89`, `sm_90`, the AMD ones `gfx90a`, `gfx942`, `gfx1100` and the generic processors of
/// CDNA 3 and 4 (`gfx9-4-generic`, for MI350) and of RDNA 4 (`gfx12-generic`), and the host
/// levels of this architecture.
pub fn default_targets() -> Vec<Target> {
    let mut targets: Vec<Target> = [Sm::Sm80, Sm::Sm86, Sm::Sm89, Sm::Sm90]
        .into_iter()
        .map(Target::Nvptx)
        .collect();
    targets.extend(
        [
            Gfx::Gfx90a,
            Gfx::Gfx942,
            Gfx::Gfx94Generic,
            Gfx::Gfx1100,
            Gfx::Gfx12Generic,
        ]
        .into_iter()
        .map(Target::Amdgpu),
    );
    targets.extend(
        HostIsa::for_this_architecture()
            .into_iter()
            .map(Target::Host),
    );
    targets
}

/// An error about a target: an unknown name, or LLVM failing to set up or compile for it.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The name is not one of [`Target::accepted_names`].
    #[error("unknown target `{name}`; accepted targets: {accepted}")]
    Unknown {
        /// The name that was given.
        name: String,
        /// The accepted names, comma-separated.
        accepted: String,
    },
    /// LLVM does not know the triple, or refused the CPU/feature combination.
    #[error("cannot create an LLVM target machine for target {target} (triple {triple}, cpu {cpu}, features `{features}`): {message}")]
    Machine {
        /// The target.
        target: Target,
        /// The triple asked for.
        triple: String,
        /// The CPU asked for.
        cpu: String,
        /// The features asked for.
        features: String,
        /// What went wrong.
        message: String,
    },
    /// LLVM failed to compile a module for the target.
    #[error("LLVM failed to emit {kind} of module `{module}` for target {target}: {message}")]
    Emit {
        /// The target.
        target: Target,
        /// The module's name.
        module: String,
        /// `"assembly"` or `"an object file"`.
        kind: &'static str,
        /// LLVM's message.
        message: String,
    },
}

/// Initializes LLVM's back end for `target` (once per process).
pub(crate) fn initialize(target: &Target) {
    static NVPTX: Once = Once::new();
    static AMDGPU: Once = Once::new();
    static X86: Once = Once::new();
    static AARCH64: Once = Once::new();
    let config = InitializationConfig::default();
    match target {
        Target::Nvptx(_) => NVPTX.call_once(|| LlvmTarget::initialize_nvptx(&config)),
        Target::Amdgpu(_) => AMDGPU.call_once(|| LlvmTarget::initialize_amd_gpu(&config)),
        Target::Host(HostIsa::X86_64V3 | HostIsa::X86_64) => {
            X86.call_once(|| LlvmTarget::initialize_x86(&config))
        }
        Target::Host(HostIsa::Aarch64) => {
            AARCH64.call_once(|| LlvmTarget::initialize_aarch64(&config))
        }
    }
}

/// How wide NVPTX's shared, constant and local pointers are.
///
/// The device's code takes them 32 bits wide (LLVM's `-nvptx-short-ptr`, as
/// Triton's and CUDA's compilers run): a shared address a thread holds — a
/// copy's destination, a staging slot — takes one register, not two. The
/// emulation target runs a GPU module on the host, whose shared memory lies
/// anywhere in its 64-bit address space: a module that turns shared
/// pointers into integers is optimized for it with wide ones
/// (`crate::emulation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedPointers {
    /// 32 bits: the device's.
    Short,
    /// 64 bits: the host's.
    Wide,
}

/// Sets LLVM's process-wide `-nvptx-short-ptr`, which an NVPTX target
/// machine reads when it is created, into its data layout. lld's driver,
/// which AMDGPU's code objects run in this process, puts every LLVM option
/// back to its default at each link, so the caller holds links off
/// ([`crate::native::between_links`]) until its machine exists.
fn set_shared_pointers(pointers: SharedPointers) {
    let option = match pointers {
        SharedPointers::Short => c"-nvptx-short-ptr=true",
        SharedPointers::Wide => c"-nvptx-short-ptr=false",
    };
    let args = [c"tile".as_ptr(), option.as_ptr()];
    // SAFETY: two NUL-terminated strings that outlive the call, counted
    // right; LLVM parses them into its option registry, where the NVPTX
    // back end registered the option when the library was loaded.
    unsafe {
        inkwell::llvm_sys::support::LLVMParseCommandLineOptions(2, args.as_ptr(), std::ptr::null())
    };
}

/// Creates the LLVM target machine for `target`, initializing only that target's LLVM backend.
///
/// Code is position-independent (as AMDGPU code objects and host shared libraries need).
pub fn create_target_machine(
    target: &Target,
    level: OptimizationLevel,
) -> Result<TargetMachine, TargetError> {
    initialize(target);
    machine_for(
        target,
        (target.triple(), target.cpu(), &target.features()),
        level,
        SharedPointers::Short,
    )
}

fn machine_for(
    target: &Target,
    (triple, cpu, features): (&str, &str, &str),
    level: OptimizationLevel,
    pointers: SharedPointers,
) -> Result<TargetMachine, TargetError> {
    let machine_error = |message: String| TargetError::Machine {
        target: *target,
        triple: triple.to_owned(),
        cpu: cpu.to_owned(),
        features: features.to_owned(),
        message,
    };
    let llvm_triple = TargetTriple::create(triple);
    let llvm_target =
        LlvmTarget::from_triple(&llvm_triple).map_err(|e| machine_error(e.to_string()))?;
    let create = || {
        llvm_target.create_target_machine(
            &llvm_triple,
            cpu,
            features,
            level,
            RelocMode::PIC,
            CodeModel::Default,
        )
    };
    let machine = match target {
        Target::Nvptx(_) => crate::native::between_links(|| {
            set_shared_pointers(pointers);
            create()
        }),
        _ => create(),
    };
    machine.ok_or_else(|| machine_error("LLVMCreateTargetMachine returned null".to_owned()))
}

/// An LLVM target machine together with the [`Target`] it compiles for.
#[derive(Debug)]
pub struct Machine {
    target: Target,
    llvm: TargetMachine,
}

impl Machine {
    /// Creates the machine for `target` (see [`create_target_machine`]).
    pub fn new(target: Target, level: OptimizationLevel) -> Result<Self, TargetError> {
        let llvm = create_target_machine(&target, level)?;
        Ok(Machine { target, llvm })
    }

    /// The machine for `target` emitting PTX ISA version `min_ptx` (times ten) or later
    /// (see [`Target::features_with_ptx`]); other targets ignore it.
    pub fn with_min_ptx(
        target: Target,
        level: OptimizationLevel,
        min_ptx: u32,
    ) -> Result<Self, TargetError> {
        initialize(&target);
        let features = target.features_with_ptx(min_ptx);
        let names = (target.triple(), target.cpu(), features.as_str());
        let llvm = machine_for(&target, names, level, SharedPointers::Short)?;
        Ok(Machine { target, llvm })
    }

    /// The machine for `target` with NVPTX's shared pointers as wide as
    /// `pointers` says (other targets ignore it).
    pub fn with_shared_pointers(
        target: Target,
        level: OptimizationLevel,
        pointers: SharedPointers,
    ) -> Result<Self, TargetError> {
        initialize(&target);
        let features = target.features();
        let names = (target.triple(), target.cpu(), features.as_str());
        let llvm = machine_for(&target, names, level, pointers)?;
        Ok(Machine { target, llvm })
    }

    /// The target this machine compiles for.
    pub fn target(&self) -> Target {
        self.target
    }

    /// The underlying inkwell target machine.
    pub fn llvm(&self) -> &TargetMachine {
        &self.llvm
    }

    /// Sets `module`'s triple and data layout to this machine's; do this before building
    /// code that depends on the data layout, and in any case before emitting.
    pub fn configure(&self, module: &Module<'_>) {
        module.set_triple(&self.llvm.get_triple());
        module.set_data_layout(&self.llvm.get_target_data().get_data_layout());
    }

    /// Compiles `module` to assembly text: PTX for NVPTX, AMDGPU assembly, or host assembly.
    ///
    /// The module's triple and data layout are set to this machine's first.
    pub fn emit_assembly(&self, module: &Module<'_>) -> Result<String, TargetError> {
        let bytes = self.emit(module, FileType::Assembly)?;
        String::from_utf8(bytes).map_err(|e| self.emit_error(module, "assembly", e.to_string()))
    }

    /// Compiles `module` to a relocatable object file (ELF for AMDGPU and Linux hosts).
    ///
    /// NVPTX has no object files of its own: use [`Machine::emit_assembly`] and
    /// [`crate::tools::assemble_ptx`]. The module's triple and data layout are set to this
    /// machine's first.
    pub fn emit_object(&self, module: &Module<'_>) -> Result<Vec<u8>, TargetError> {
        self.emit(module, FileType::Object)
    }

    fn emit(&self, module: &Module<'_>, file_type: FileType) -> Result<Vec<u8>, TargetError> {
        let kind = match file_type {
            FileType::Assembly => "assembly",
            FileType::Object => "an object file",
        };
        self.configure(module);
        let buffer = self
            .llvm
            .write_to_memory_buffer(module, file_type)
            .map_err(|e| self.emit_error(module, kind, e.to_string()))?;
        Ok(buffer.as_slice().to_vec())
    }

    fn emit_error(&self, module: &Module<'_>, kind: &'static str, message: String) -> TargetError {
        TargetError::Emit {
            target: self.target,
            module: module.get_name().to_string_lossy().into_owned(),
            kind,
            message,
        }
    }
}

//! Runs a tile-IR kernel as a GPU target receives it, on the CPU: lowered,
//! emitted for the target, moved to the host (`tile_codegen::emulation`)
//! and run by `tile-emu` over the arguments' own buffers, passed the way the
//! runtime passes them to a driver (`tile_abi::Packet`): CUDA's pointer per
//! parameter, or the packed kernarg segment for AMDGPU, whose layout must be
//! the one the image reads.
#![allow(dead_code)] // each test binary uses its own subset

use tile_abi::emulation::ArgsAbi;
use tile_abi::params::TensorRecord;
use tile_abi::{FaultCode, Packet, Status};
use tile_codegen::gpu::{emit_module, GpuModule};
use tile_codegen::tools::Tool;
use tile_codegen::{emulation, tools, CodegenOptions, Gfx, Sm, Target};
use tile_emu::EmulatedKernel;
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::{eval, verify, DType, Function, Scalar};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

/// The bits of the f32 tensor argument `arg`.
pub fn f32_bits(arg: &Arg) -> Vec<u32> {
    match arg {
        Arg::Tensor(t) => t
            .to_vec::<f32>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect(),
        other => panic!("not an f32 tensor: {other:?}"),
    }
}

/// Panics, saying how to install it, unless `tool` is found.
pub fn require(tool: Tool) {
    if let Err(e) = tool.find() {
        panic!("{e}\n(these tests need {tool}: run scripts/setup.sh first)");
    }
}

/// The emulation targets: NVIDIA, CDNA 3 and CDNA 4 (wave64) and RDNA 3
/// and RDNA 4 (wave32).
pub const TARGETS: [Target; 5] = [
    Target::Nvptx(Sm::Sm80),
    Target::Amdgpu(Gfx::Gfx942),
    Target::Amdgpu(Gfx::Gfx950),
    Target::Amdgpu(Gfx::Gfx1100),
    Target::Amdgpu(Gfx::Gfx1200),
];

/// Why an emulated run did not complete.
#[derive(Debug)]
pub enum Failure {
    /// Lowering, emission or the move to the host failed.
    Compile(String),
    /// The emulator stopped the launch.
    Emulator(tile_emu::EmuError),
    /// The kernel's own checks failed: its status record.
    Status(Status),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Compile(e) => write!(f, "compiling: {e}"),
            Failure::Emulator(e) => write!(f, "emulator: {e}"),
            Failure::Status(s) => write!(
                f,
                "status: {:?} at check {} with {:?}",
                FaultCode::from_u32(s.code),
                s.check,
                s.index
            ),
        }
    }
}

/// `func`'s optimized module for `target` with `num_warps` warps (and the
/// target's tensor cores).
pub fn module(
    func: &Function,
    target: Target,
    num_warps: u32,
    options: &CodegenOptions,
) -> Result<GpuModule, Failure> {
    let lowering = LowerOptions::warps(num_warps).with_tensor_cores(target.tensor_cores());
    lowered_module(func, target, &lowering, options)
}

/// `func`'s optimized module for `target`, lowered with `lowering`.
pub fn lowered_module(
    func: &Function,
    target: Target,
    lowering: &LowerOptions,
    options: &CodegenOptions,
) -> Result<GpuModule, Failure> {
    let program = lower(func, lowering).map_err(|e| Failure::Compile(e.to_string()))?;
    emit_module(&program, target, options).map_err(|e| Failure::Compile(e.to_string()))
}

/// Loads the emulation image of `module`.
pub fn image(module: &GpuModule) -> Result<EmulatedKernel, Failure> {
    let image = emulation::compile(module).map_err(|e| Failure::Compile(e.to_string()))?;
    // SAFETY: the image is what `emulation::compile` just made.
    unsafe { EmulatedKernel::load(&image.shared_object) }.map_err(Failure::Emulator)
}

/// Runs `kernel` over `grid` with blocks of `32 * num_warps` threads on
/// `args` (tensors are read and written in place).
pub fn launch(
    kernel: &EmulatedKernel,
    grid: [u32; 3],
    num_warps: u32,
    args: &mut [Arg],
) -> Result<(), Failure> {
    launch_reaching(kernel, grid, num_warps, args, &|_, bytes| bytes)
}

/// As [`launch`], with only `reach(i, bytes)` of the `bytes` of argument
/// `i`'s buffer made reachable.
pub fn launch_reaching(
    kernel: &EmulatedKernel,
    grid: [u32; 3],
    num_warps: u32,
    args: &mut [Arg],
    reach: &dyn Fn(usize, u64) -> u64,
) -> Result<(), Failure> {
    launch_with_maps(kernel, (grid, num_warps), args, reach, &[])
}

/// As [`launch_reaching`], passing after the status pointer a tensor map
/// (`tile_abi::tma`'s encoding, which the emulator reads) for each of
/// `maps`: `(tensor argument, box rows)`, as `Program::tma_maps` lists them.
pub fn launch_with_maps(
    kernel: &EmulatedKernel,
    (grid, num_warps): ([u32; 3], u32),
    args: &mut [Arg],
    reach: &dyn Fn(usize, u64) -> u64,
    maps: &[(usize, u16)],
) -> Result<(), Failure> {
    launch_printing(
        kernel,
        (grid, num_warps),
        args,
        reach,
        maps,
        &mut Vec::new(),
    )
}

/// The records of the print area a launch gets after its status record.
const PRINT_CAPACITY: u32 = 4096;

/// As [`launch_with_maps`], appending the records the kernel's `print` ops
/// left in the print area to `prints`.
pub fn launch_printing(
    kernel: &EmulatedKernel,
    (grid, num_warps): ([u32; 3], u32),
    args: &mut [Arg],
    reach: &dyn Fn(usize, u64) -> u64,
    maps: &[(usize, u16)],
    prints: &mut Vec<tile_abi::device_print::PrintRecord>,
) -> Result<(), Failure> {
    // The status record and the print area after it, in 8-byte words so
    // that the atomics on them are aligned.
    let bytes: Vec<u8> = [0u8; tile_abi::status::STATUS_BYTES]
        .into_iter()
        .chain(tile_abi::device_print::empty_area(PRINT_CAPACITY))
        .collect();
    let mut status: Vec<u64> = bytes
        .chunks(8)
        .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
        .collect();
    // The tensor maps first: a tensor no map describes fails the launch
    // before any buffer is registered (a registration left behind would
    // make a later launch's buffer at an address past it unreachable).
    let mut tensor_maps = Vec::new();
    for &(param, rows) in maps {
        let Arg::Tensor(t) = &args[param] else {
            return Err(Failure::Compile(format!(
                "a tensor map of argument {param}, a scalar"
            )));
        };
        let base = t.data().as_ptr() as u64 + (t.offset() * t.dtype().size_bytes()) as u64;
        let tma_box = tile_abi::tma::TmaBox::new(t.dtype(), usize::from(rows))
            .ok_or_else(|| Failure::Compile(format!("a box of {rows} rows")))?;
        let map = tile_abi::tma::TensorMap::new(base, (t.dtype(), t.shape(), t.strides()), tma_box)
            .map_err(|e| Failure::Compile(format!("no tensor map for argument {param}: {e}")))?;
        tensor_maps.push(map.to_bytes());
    }
    let mut packet = Packet::default();
    let mut registered = Vec::new();
    // The records of the tensor arrays, alive until the launch returns.
    let mut records: Vec<Vec<u64>> = Vec::new();
    for (i, arg) in args.iter_mut().enumerate() {
        match arg {
            Arg::Scalar(s) => packet.push_scalar(*s),
            Arg::Tensor(t) => {
                let start = t.data_mut().as_mut_ptr() as u64;
                let base = start + (t.offset() * t.dtype().size_bytes()) as u64;
                tile_emu::register(start, reach(i, t.data().len() as u64));
                registered.push(start);
                packet.push_tensor(base, t.shape(), t.strides());
            }
            Arg::Tensors(ts) => {
                let mut words = Vec::new();
                for t in ts.iter_mut() {
                    let start = t.data_mut().as_mut_ptr() as u64;
                    let base = start + (t.offset() * t.dtype().size_bytes()) as u64;
                    tile_emu::register(start, t.data().len() as u64);
                    registered.push(start);
                    let record = TensorRecord::encode(base, t.shape(), t.strides());
                    words.extend(
                        record
                            .chunks(8)
                            .map(|w| u64::from_le_bytes(w.try_into().expect("8-byte words"))),
                    );
                }
                let at = words.as_ptr() as u64;
                tile_emu::register(at, 8 * words.len() as u64);
                registered.push(at);
                packet.push_tensors(at, ts.len());
                records.push(words);
            }
        }
    }
    let status_at = status.as_mut_ptr() as u64;
    tile_emu::register(status_at, 8 * status.len() as u64);
    registered.push(status_at);
    packet.push_pointer(status_at);
    for map in tensor_maps {
        packet.push_tensor_map(map);
    }
    let manifest = kernel.manifest();
    let result = match manifest.abi {
        ArgsAbi::Pointers => {
            let pointers = packet.pointers();
            // SAFETY: CUDA's kernelParams: one pointer per parameter of the
            // kernel ABI, alive for the launch; the tensors' buffers are
            // registered.
            unsafe { kernel.launch(grid, 32 * num_warps, pointers.as_ptr().cast()) }
        }
        ArgsAbi::Kernarg => {
            let packed = packet.packed();
            let offsets: Vec<usize> = packet_offsets(&packet);
            let expected: Vec<usize> = manifest.params.iter().map(|p| p.offset).collect();
            assert_eq!(
                offsets, expected,
                "the packed kernarg layout differs from the image's"
            );
            // SAFETY: the kernarg segment holds every parameter at the
            // offset the image reads it from (checked above).
            unsafe { kernel.launch(grid, 32 * num_warps, packed.as_ptr()) }
        }
    };
    for start in registered {
        tile_emu::unregister(start);
    }
    let bytes: Vec<u8> = status.iter().flat_map(|w| w.to_le_bytes()).collect();
    let (records, dropped) =
        tile_abi::device_print::records(&bytes[tile_abi::device_print::GPU_AREA_OFFSET as usize..]);
    assert_eq!(
        dropped, 0,
        "prints beyond the area's {PRINT_CAPACITY} records"
    );
    prints.extend(records);
    result.map_err(Failure::Emulator)?;
    let mut record = [0u8; tile_abi::status::STATUS_BYTES];
    record.copy_from_slice(&bytes[..tile_abi::status::STATUS_BYTES]);
    let status = Status::from_bytes(&record);
    if status.is_ok() {
        Ok(())
    } else {
        Err(Failure::Status(status))
    }
}

/// The offset of each parameter in `packet.packed()`.
fn packet_offsets(packet: &Packet) -> Vec<usize> {
    let mut offset = 0usize;
    packet
        .params()
        .iter()
        .map(|p| {
            offset = offset.next_multiple_of(p.len().max(1));
            let at = offset;
            offset += p.len();
            at
        })
        .collect()
}

/// As [`run`], with the GPU module's text changed by `mutate` before it
/// moves to the host: how the tests show that a broken module fails.
pub fn run_mutated(
    func: &Function,
    target: Target,
    num_warps: u32,
    grid: [u32; 3],
    args: &mut [Arg],
    mutate: impl Fn(&str) -> String,
) -> Result<(), Failure> {
    let mut module = module(func, target, num_warps, &CodegenOptions::default())?;
    let mutated = mutate(&module.llvm_ir_opt);
    assert_ne!(mutated, module.llvm_ir_opt, "the mutation changed nothing");
    module.llvm_ir_opt = mutated;
    let kernel = image(&module)?;
    launch(&kernel, grid, num_warps, args)
}

/// As [`run`], also returning the records of the kernel's `print` ops.
pub fn run_printing(
    func: &Function,
    target: Target,
    num_warps: u32,
    grid: [u32; 3],
    args: &mut [Arg],
) -> (
    Vec<tile_abi::device_print::PrintRecord>,
    Result<(), Failure>,
) {
    let mut prints = Vec::new();
    let result = module(func, target, num_warps, &CodegenOptions::default())
        .and_then(|module| image(&module))
        .and_then(|kernel| {
            let reach = |_: usize, len: u64| len;
            launch_printing(&kernel, (grid, num_warps), args, &reach, &[], &mut prints)
        });
    (prints, result)
}

/// Runs `func` for `target` with `num_warps` warps over `grid` on `args`.
pub fn run(
    func: &Function,
    target: Target,
    num_warps: u32,
    grid: [u32; 3],
    args: &mut [Arg],
) -> Result<(), Failure> {
    let module = module(func, target, num_warps, &CodegenOptions::default())?;
    let kernel = image(&module)?;
    launch(&kernel, grid, num_warps, args)
}

/// As [`run`], with software pipelines of `stages` stages on the targets
/// with `cp.async`.
pub fn run_staged(
    func: &Function,
    target: Target,
    (num_warps, stages): (u32, u32),
    grid: [u32; 3],
    args: &mut [Arg],
) -> Result<(), Failure> {
    let lowering = LowerOptions::warps(num_warps)
        .with_tensor_cores(target.tensor_cores())
        .with_stages(stages);
    let module = lowered_module(func, target, &lowering, &CodegenOptions::default())?;
    let kernel = image(&module)?;
    launch(&kernel, grid, num_warps, args)
}

/// Emits `func` lowered with `num_warps` warps for every `sm_*` and `gfx*`
/// target: ptxas must assemble each PTX file and ld.lld link each code
/// object.
pub fn assembles_and_links(func: &Function, num_warps: u32) {
    let program = lower(func, &LowerOptions::warps(num_warps)).unwrap();
    for sm in Sm::ALL.into_iter().filter(|sm| sm.number() >= 80) {
        let out = tile_codegen::gpu::emit(&program, Target::Nvptx(sm), &CodegenOptions::default())
            .unwrap_or_else(|e| panic!("{}, {sm}: {e}", func.name));
        tools::assemble_ptx(&out.assembly, sm)
            .unwrap_or_else(|e| panic!("{}, {sm}: {e}", func.name));
    }
    for gfx in Gfx::ALL {
        let out =
            tile_codegen::gpu::emit(&program, Target::Amdgpu(gfx), &CodegenOptions::default())
                .unwrap_or_else(|e| panic!("{}, {gfx}: {e}", func.name));
        assert!(
            out.code_object.is_some(),
            "{}, {gfx}: no code object",
            func.name
        );
    }
}

/// A `rows` × `cols` tensor of `dtype` whose rows are `pitch` elements
/// apart and whose element zero lies `offset` elements into its buffer,
/// holding `value(i)` at row-major index `i` (the gaps hold 7).
pub fn padded(
    dtype: DType,
    (rows, cols): (usize, usize),
    (pitch, offset): (usize, usize),
    value: impl Fn(usize) -> f64,
) -> HostTensor {
    let size = dtype.size_bytes();
    let len = offset + rows * pitch;
    let mut data = vec![0u8; len * size];
    let put = |data: &mut Vec<u8>, at: usize, v: f64| {
        eval::cast(Scalar::F64(v), dtype)
            .write_le(&mut data[at * size..])
            .unwrap();
    };
    for at in 0..len {
        put(&mut data, at, 7.0);
    }
    for r in 0..rows {
        for c in 0..cols {
            put(&mut data, offset + r * pitch + c, value(r * cols + c));
        }
    }
    HostTensor::with_strides(dtype, &[rows, cols], &[pitch as isize, 1], offset, data).unwrap()
}

/// The bytes of each tensor argument after `index`, its gaps included.
pub fn bytes(args: &[Arg], from: usize) -> Vec<Vec<u8>> {
    args[from..]
        .iter()
        .map(|a| match a {
            Arg::Tensor(t) => t.data().to_vec(),
            Arg::Tensors(ts) => ts.iter().flat_map(|t| t.data().to_vec()).collect(),
            Arg::Scalar(_) => Vec::new(),
        })
        .collect()
}

/// Runs `func` on every stage with 1 and 4 warps: each must leave the
/// interpreter's bytes in the arguments from `outputs` on.
pub fn agrees(func: &Function, args: impl Fn() -> Vec<Arg>, outputs: usize, grid: [u32; 3]) {
    verify::verify(func).unwrap();
    let mut want = args();
    interp::run(func, grid, &mut want).unwrap();
    let want = bytes(&want, outputs);
    assert_ne!(
        want,
        bytes(&args(), outputs),
        "{}: the kernel writes",
        func.name
    );
    for warps in [1, 4] {
        let program = lower(func, &LowerOptions::warps(warps)).unwrap();
        let mut got = args();
        emulate::run(&program, grid, &mut got).unwrap();
        assert!(
            bytes(&got, outputs) == want,
            "{}: lockstep, {warps} warps",
            func.name
        );
        for target in TARGETS {
            let mut got = args();
            run(func, target, warps, grid, &mut got)
                .unwrap_or_else(|e| panic!("{}: {target}, {warps} warps: {e}", func.name));
            assert!(
                bytes(&got, outputs) == want,
                "{}: {target}, {warps} warps",
                func.name
            );
        }
    }
}

/// An f16 tensor of `shape` holding small integers in `-2..=2` (from
/// `seed`): products and sums of them stay exact in f32 for any order of
/// summation, so tensor-core and in-order dots agree bit for bit.
pub fn small_f16s(shape: &[usize], seed: usize) -> Arg {
    small_ints(DType::F16, shape, seed)
}

/// [`small_f16s`] of `dtype` (any float type holding `-2..=2` exactly).
pub fn small_ints(dtype: DType, shape: &[usize], seed: usize) -> Arg {
    let n = shape.iter().product::<usize>();
    let data: Vec<Scalar> = (0..n)
        .map(|i| eval::cast(Scalar::F64(((i * 7 + seed) % 5) as f64 - 2.0), dtype))
        .collect();
    Arg::Tensor(HostTensor::from_scalars(dtype, shape, &data).unwrap())
}

/// `program`'s PTX for `target` holds `instruction`, and `ptxas` assembles
/// it without spilling (`context` names the case in a failure).
pub fn assembles(program: &tile_thread::Program, target: Target, instruction: &str, context: &str) {
    let Target::Nvptx(sm) = target else {
        panic!("{target} is not an NVPTX target");
    };
    let options = CodegenOptions::default();
    let ptx = tile_codegen::gpu::emit(program, target, &options)
        .unwrap()
        .assembly;
    assert!(
        ptx.contains(instruction),
        "{context}: no {instruction} in\n{ptx}"
    );
    let usage = tools::ptxas_resource_usage(&ptx, sm).unwrap();
    assert!(usage.contains("0 bytes spill stores"), "{context}: {usage}");
}

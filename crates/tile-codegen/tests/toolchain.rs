//! End-to-end proof of the LLVM 22 toolchain: a hand-built `out[i] = a[i] + b[i]` kernel is
//! verified by LLVM, compiled for every target, and finished by the external tools (`ptxas`
//! for NVPTX, `ld.lld` + `llvm-objdump` for AMDGPU). The tools must be installed
//! (`scripts/setup.sh`): a missing tool fails these tests rather than skipping them.

use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::{AddressSpace, OptimizationLevel};
use tile_codegen::tools::{self, Tool};
use tile_codegen::{Gfx, Machine, Sm, Target};

/// NVPTX's and AMDGPU's global address space.
const GLOBAL: u16 = 1;
/// LLVM's `amdgpu_kernel` calling convention.
const AMDGPU_KERNEL_CC: u32 = 91;
/// LLVM's `ptx_kernel` calling convention.
const PTX_KERNEL_CC: u32 = 71;

/// Builds `vadd(a, b, out)`: `out[i] = a[i] + b[i]` for f32, with `i` the thread index on GPUs
/// and an extra `i64` parameter on the host. The module is configured for `machine`.
fn build_vadd<'ctx>(context: &'ctx Context, machine: &Machine) -> Module<'ctx> {
    let target = machine.target();
    let module = context.create_module(&format!("vadd_{target}"));
    machine.configure(&module);
    let builder = context.create_builder();
    let f32_type = context.f32_type();
    let i32_type = context.i32_type();
    let i64_type = context.i64_type();
    let space = match target {
        Target::Host(_) => AddressSpace::default(),
        _ => AddressSpace::from(GLOBAL),
    };
    let ptr = context.ptr_type(space);
    let mut params = vec![ptr.into(), ptr.into(), ptr.into()];
    if !target.is_gpu() {
        params.push(i64_type.into());
    }
    let function = module.add_function("vadd", context.void_type().fn_type(&params, false), None);
    let entry = context.append_basic_block(function, "entry");
    builder.position_at_end(entry);

    let index = match target {
        Target::Nvptx(_) | Target::Amdgpu(_) => {
            let intrinsic = match target {
                Target::Nvptx(_) => "llvm.nvvm.read.ptx.sreg.tid.x",
                _ => "llvm.amdgcn.workitem.id.x",
            };
            let tid_fn = module.add_function(intrinsic, i32_type.fn_type(&[], false), None);
            let tid = builder
                .build_call(tid_fn, &[], "tid")
                .unwrap()
                .try_as_basic_value()
                .basic()
                .unwrap()
                .into_int_value();
            builder.build_int_z_extend(tid, i64_type, "i").unwrap()
        }
        Target::Host(_) => function.get_nth_param(3).unwrap().into_int_value(),
    };
    let param = |n: u32| function.get_nth_param(n).unwrap().into_pointer_value();
    let (a, b, out) = (param(0), param(1), param(2));
    // SAFETY: in-bounds GEPs over f32 arrays; the kernel's contract is that i is in bounds.
    let (pa, pb, pout) = unsafe {
        (
            builder
                .build_in_bounds_gep(f32_type, a, &[index], "pa")
                .unwrap(),
            builder
                .build_in_bounds_gep(f32_type, b, &[index], "pb")
                .unwrap(),
            builder
                .build_in_bounds_gep(f32_type, out, &[index], "pout")
                .unwrap(),
        )
    };
    let va = builder
        .build_load(f32_type, pa, "va")
        .unwrap()
        .into_float_value();
    let vb = builder
        .build_load(f32_type, pb, "vb")
        .unwrap()
        .into_float_value();
    let sum = builder.build_float_add(va, vb, "sum").unwrap();
    builder.build_store(pout, sum).unwrap();
    builder.build_return(None).unwrap();

    match target {
        // `ptx_kernel`: an `.entry`.
        Target::Nvptx(_) => function.set_call_conventions(PTX_KERNEL_CC),
        Target::Amdgpu(_) => function.set_call_conventions(AMDGPU_KERNEL_CC),
        Target::Host(_) => {}
    }
    if let Err(message) = module.verify() {
        panic!(
            "LLVM verifier rejected the {target} kernel: {}",
            message.to_string()
        );
    }
    module
}

fn machine(target: Target) -> Machine {
    Machine::new(target, OptimizationLevel::Default).unwrap_or_else(|e| panic!("{e}"))
}

fn require(tool: Tool) {
    if let Err(e) = tool.find() {
        panic!("{e}\n(the toolchain tests need {tool}: run scripts/setup.sh first)");
    }
}

#[test]
fn nvptx_kernels_emit_ptx_that_ptxas_assembles() {
    require(Tool::Ptxas);
    for sm in Sm::ALL {
        let machine = machine(Target::Nvptx(sm));
        let context = Context::create();
        let module = build_vadd(&context, &machine);
        let ptx = machine
            .emit_assembly(&module)
            .unwrap_or_else(|e| panic!("{e}"));
        let version = sm.ptx_version();
        let expected_version = format!(".version {}.{}", version / 10, version % 10);
        assert!(
            ptx.contains(&expected_version),
            "{sm}: no `{expected_version}` in\n{ptx}"
        );
        assert!(
            ptx.contains(&format!(".target {sm}")),
            "{sm}: wrong .target in\n{ptx}"
        );
        assert!(
            ptx.contains(".entry vadd"),
            "{sm}: vadd is not a kernel in\n{ptx}"
        );
        assert!(ptx.contains("%tid.x"), "{sm}: no thread index in\n{ptx}");
        let cubin = tools::assemble_ptx(&ptx, sm).unwrap_or_else(|e| panic!("{sm}: {e}"));
        assert_eq!(&cubin[..4], b"\x7fELF", "{sm}: ptxas output is not a cubin");
    }
}

#[test]
fn ptxas_failures_carry_its_message_and_the_ptx() {
    require(Tool::Ptxas);
    let bad = ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus; }\n";
    let err = tools::assemble_ptx(bad, Sm::Sm90).expect_err("ptxas accepted bad PTX");
    let message = err.to_string();
    assert!(message.contains("ptxas failed"), "{message}");
    assert!(message.contains("bogus"), "{message}");
    assert!(message.contains("    4 | .visible .entry"), "{message}");
}

#[test]
fn amdgpu_kernels_link_to_code_objects_that_disassemble() {
    require(Tool::LlvmObjdump);
    for gfx in Gfx::ALL {
        let machine = machine(Target::Amdgpu(gfx));
        let context = Context::create();
        let module = build_vadd(&context, &machine);
        let asm = machine
            .emit_assembly(&module)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            asm.contains(&format!(".amdgcn_target \"amdgcn-amd-amdhsa--{gfx}")),
            "{asm}"
        );
        assert!(
            asm.contains(".amdhsa_kernel vadd"),
            "{gfx}: vadd is not a kernel in\n{asm}"
        );
        let object = machine
            .emit_object(&module)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&object[..4], b"\x7fELF", "{gfx}: not an ELF object");
        let hsaco = tools::link_shared_object(&object).unwrap_or_else(|e| panic!("{gfx}: {e}"));
        assert_eq!(&hsaco[..4], b"\x7fELF", "{gfx}: not an ELF code object");
        let listing = tools::disassemble(&hsaco).unwrap_or_else(|e| panic!("{gfx}: {e}"));
        assert!(listing.contains("<vadd>:"), "{gfx}: no vadd in\n{listing}");
        assert!(
            listing.contains("s_endpgm"),
            "{gfx}: no s_endpgm in\n{listing}"
        );
        assert!(
            listing.contains("global_store"),
            "{gfx}: no global store in\n{listing}"
        );
    }
}

#[test]
fn link_failures_carry_lld_message_and_later_links_still_work() {
    let err = tools::link_shared_object(b"not an object").expect_err("lld linked garbage");
    let message = err.to_string();
    assert!(message.contains("lld's ELF linker failed"), "{message}");
    assert!(message.contains("error: "), "{message}");
    assert!(message.contains("an object file of 13 bytes"), "{message}");
    // lld runs in this process: a failed link must leave it usable.
    let machine = machine(Target::Amdgpu(Gfx::Gfx942));
    let context = Context::create();
    let object = machine
        .emit_object(&build_vadd(&context, &machine))
        .unwrap_or_else(|e| panic!("{e}"));
    let hsaco = tools::link_shared_object(&object).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(&hsaco[..4], b"\x7fELF");
}

/// NVPTX's shared pointers are 32 bits wide (`-nvptx-short-ptr`), in every
/// machine: lld's in-process links reset LLVM's options, so a machine created
/// after one must not fall back to 64-bit shared pointers.
#[test]
fn nvptx_machines_keep_32_bit_shared_pointers_across_links() {
    let short = |machine: &Machine| {
        let layout = machine.llvm().get_target_data().get_data_layout();
        let layout = layout.as_str().to_string_lossy().into_owned();
        assert!(layout.contains("p3:32:32"), "{layout}");
    };
    short(&machine(Target::Nvptx(Sm::Sm80)));
    let amd = machine(Target::Amdgpu(Gfx::Gfx942));
    let context = Context::create();
    let object = amd
        .emit_object(&build_vadd(&context, &amd))
        .unwrap_or_else(|e| panic!("{e}"));
    tools::link_shared_object(&object).unwrap_or_else(|e| panic!("{e}"));
    short(&machine(Target::Nvptx(Sm::Sm90a)));
    short(&machine(Target::Nvptx(Sm::Sm80)));
}

#[test]
fn assembler_failures_carry_its_message_and_the_assembly() {
    let err = tools::assemble_amdgpu("\ts_nop 0\n\tv_bogus v0, v1\n", Gfx::Gfx942)
        .expect_err("an unknown instruction assembled");
    let message = err.to_string();
    assert!(message.contains("LLVM's assembler failed"), "{message}");
    assert!(
        message.contains("kernel.s:2:2: error: invalid instruction"),
        "{message}"
    );
    assert!(message.contains("    2 | \tv_bogus v0, v1"), "{message}");
}

/// An LLVM 22 tool of `name` (`ld.lld`, `llvm-mc`), where scripts/setup.sh
/// installs it.
fn llvm_tool(name: &str) -> std::path::PathBuf {
    let prefix = std::env::var_os("LLVM_SYS_221_PREFIX")
        .unwrap_or_else(|| tools::DEFAULT_LLVM_PREFIX.into());
    let path = std::path::Path::new(&prefix).join("bin").join(name);
    assert!(
        path.exists(),
        "no {} (run scripts/setup.sh)",
        path.display()
    );
    path
}

/// What `tool args… input -o output` writes, `input` holding `bytes`.
fn tool_output(tool: &str, args: &[&str], bytes: &[u8]) -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!("tile-toolchain-{tool}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (input, output) = (dir.join("input"), dir.join("output"));
    std::fs::write(&input, bytes).unwrap();
    let status = std::process::Command::new(llvm_tool(tool))
        .args(args)
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .status()
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    assert!(status.success(), "{tool} {args:?} failed");
    let out = std::fs::read(&output).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    out
}

/// The assembler and linker in this process write what the `llvm-mc` and
/// `ld.lld` programs write, byte for byte: LLVM's and lld's code, run the
/// same way.
#[test]
fn in_process_assembler_and_linker_match_llvm_mc_and_ld_lld() {
    for gfx in Gfx::ALL {
        let machine = machine(Target::Amdgpu(gfx));
        let context = Context::create();
        let assembly = machine
            .emit_assembly(&build_vadd(&context, &machine))
            .unwrap_or_else(|e| panic!("{e}"));
        let object = tools::assemble_amdgpu(&assembly, gfx).unwrap_or_else(|e| panic!("{e}"));
        let cpu = format!("-mcpu={gfx}");
        let mc_args = ["-triple=amdgcn-amd-amdhsa", cpu.as_str(), "-filetype=obj"];
        let mc = tool_output("llvm-mc", &mc_args, assembly.as_bytes());
        assert!(object == mc, "{gfx}: the object differs from llvm-mc's");
        let hsaco = tools::link_shared_object(&object).unwrap_or_else(|e| panic!("{e}"));
        let lld = tool_output("ld.lld", &["-shared"], &object);
        assert!(hsaco == lld, "{gfx}: the code object differs from ld.lld's");
    }
    let isa = tile_abi::HostIsa::best_here().expect("host code runs here");
    let machine = machine(Target::Host(isa));
    let context = Context::create();
    let object = machine
        .emit_object(&build_vadd(&context, &machine))
        .unwrap_or_else(|e| panic!("{e}"));
    let shared = tools::link_shared_object(&object).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        shared == tool_output("ld.lld", &["-shared"], &object),
        "host: differs from ld.lld's"
    );
}

/// lld keeps its state in globals: links from several threads at once are
/// serialized, and each gets its own output.
#[test]
fn links_from_several_threads_at_once() {
    let objects: Vec<(Gfx, Vec<u8>)> = Gfx::ALL
        .into_iter()
        .map(|gfx| {
            let machine = machine(Target::Amdgpu(gfx));
            let context = Context::create();
            let object = machine
                .emit_object(&build_vadd(&context, &machine))
                .unwrap_or_else(|e| panic!("{e}"));
            (gfx, object)
        })
        .collect();
    let alone: Vec<Vec<u8>> = objects
        .iter()
        .map(|(_, o)| tools::link_shared_object(o).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .flat_map(|_| objects.iter().zip(&alone))
            .map(|((gfx, object), expected)| {
                scope.spawn(move || {
                    let linked =
                        tools::link_shared_object(object).unwrap_or_else(|e| panic!("{e}"));
                    assert!(&linked == expected, "{gfx}: a concurrent link differs");
                })
            })
            .collect();
        for handle in handles {
            handle.join().expect("a linking thread panicked");
        }
    });
}

#[test]
fn host_kernel_emits_an_object_file() {
    require(Tool::LlvmObjdump);
    let isa = tile_abi::HostIsa::best_here().expect("host code runs here");
    let machine = machine(Target::Host(isa));
    let context = Context::create();
    let module = build_vadd(&context, &machine);
    let object = machine
        .emit_object(&module)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!object.is_empty());
    let listing = tools::disassemble(&object).unwrap_or_else(|e| panic!("{e}"));
    assert!(listing.contains("<vadd>:"), "no vadd in\n{listing}");
}

#[test]
fn tool_versions() {
    let ptxas = tools::version(Tool::Ptxas).unwrap_or_else(|e| panic!("{e}"));
    assert!(ptxas.contains("Cuda compilation tools"), "{ptxas}");
    let objdump = tools::version(Tool::LlvmObjdump).unwrap_or_else(|e| panic!("{e}"));
    assert!(objdump.contains("LLVM version 22."), "{objdump}");
}

//! The grid dependency ops of programmatic dependent launch (`gdc_wait`,
//! `gdc_launch_dependents`) through every stage: the tile IR and the
//! thread-level program print and parse them back; sm_90's PTX holds
//! `griddepcontrol.wait` before the kernel's first load and
//! `griddepcontrol.launch_dependents` after its store, which `ptxas`
//! assembles for sm_90 and sm_90a; sm_80's PTX and the AMDGPU code have
//! neither (their launches never overlap); and the kernel computes the
//! interpreter's result on the lockstep emulator and on the emulation
//! target of sm_90, sm_80, gfx942 and gfx1100.

mod emulated;

use tile_codegen::gpu::emit;
use tile_codegen::tools::{self, Tool};
use tile_codegen::{CodegenOptions, Gfx, Sm, Target};
use tile_ir::builder::Builder;
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::types::TensorType;
use tile_ir::{text, DType, Function, Type};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

/// `out = x + x` after waiting for the grid before it, letting the next
/// one start after the store: the shape of a dependent kernel.
fn dependent() -> Function {
    let tensor = || Type::Tensor(TensorType::new(DType::F32, 1));
    let mut b = Builder::new("dependent");
    let x = b.param("x", tensor());
    let out = b.param("out", tensor());
    let pid = b.program_id(0).unwrap();
    b.grid_wait().unwrap();
    let vx = b.partition_view(x, &[128]).unwrap();
    let vo = b.partition_view(out, &[128]).unwrap();
    let a = b.load(vx, &[pid]).unwrap();
    let sum = b.binary(tile_ir::BinaryOp::Add, a, a).unwrap();
    b.store(sum, vo, &[pid]).unwrap();
    b.grid_launch_dependents().unwrap();
    b.finish().unwrap()
}

fn ptx_of(func: &Function, sm: Sm) -> String {
    let program = lower(func, &LowerOptions::warps(4)).unwrap();
    emit(&program, Target::Nvptx(sm), &CodegenOptions::default())
        .unwrap()
        .assembly
}

#[test]
fn both_ops_print_and_parse_back_in_the_ir_and_the_thread_program() {
    let func = dependent();
    let ir = func.to_string();
    assert!(ir.contains("  gdc_wait\n"), "{ir}");
    assert!(ir.contains("  gdc_launch_dependents\n"), "{ir}");
    assert_eq!(text::parse_function(&ir).unwrap().to_string(), ir);
    let program = lower(&func, &LowerOptions::warps(4)).unwrap();
    let printed = program.to_string();
    assert!(printed.contains("griddepcontrol.wait"), "{printed}");
    assert!(
        printed.contains("griddepcontrol.launch_dependents"),
        "{printed}"
    );
    let parsed = tile_thread::program::parse_program(&printed).unwrap();
    assert_eq!(parsed.to_string(), printed);
}

#[test]
fn sm_90_waits_before_its_first_load_and_older_targets_have_nothing_to_wait_for() {
    let func = dependent();
    let ptx = ptx_of(&func, Sm::Sm90);
    let wait = ptx.find("griddepcontrol.wait;").expect("a wait on sm_90");
    let load = ptx.find("ld.global").expect("a load");
    let launch = ptx
        .find("griddepcontrol.launch_dependents;")
        .expect("a release");
    let store = ptx.rfind("st.global").expect("a store");
    assert!(wait < load && store < launch, "{ptx}");
    assert!(!ptx_of(&func, Sm::Sm80).contains("griddepcontrol"));
    let program = lower(&func, &LowerOptions::warps(4)).unwrap();
    for gfx in [Gfx::Gfx942, Gfx::Gfx1100] {
        let out = emit(&program, Target::Amdgpu(gfx), &CodegenOptions::default()).unwrap();
        assert!(!out.assembly.contains("griddep"), "{gfx}");
    }
    emulated::require(Tool::Ptxas);
    for sm in [Sm::Sm90, Sm::Sm90a] {
        tools::ptxas_resource_usage(&ptx_of(&func, sm), sm)
            .unwrap_or_else(|e| panic!("ptxas -arch={sm}: {e}"));
    }
}

#[test]
fn the_emulators_compute_the_interpreters_result() {
    let func = dependent();
    let xs: Vec<f32> = (0..256).map(|i| i as f32 * 0.5).collect();
    let args = || {
        vec![
            Arg::Tensor(HostTensor::from_vec(&[256], xs.clone()).unwrap()),
            Arg::Tensor(HostTensor::zeros(DType::F32, &[256])),
        ]
    };
    let mut want = args();
    interp::run(&func, [2, 1, 1], &mut want).unwrap();
    let program = lower(&func, &LowerOptions::warps(4)).unwrap();
    let mut got = args();
    emulate::run(&program, [2, 1, 1], &mut got).unwrap();
    assert_eq!(emulated::f32_bits(&got[1]), emulated::f32_bits(&want[1]));
    for target in [Target::Nvptx(Sm::Sm90)]
        .into_iter()
        .chain(emulated::TARGETS)
    {
        let mut got = args();
        emulated::run(&func, target, 4, [2, 1, 1], &mut got)
            .unwrap_or_else(|e| panic!("{target}: {e:?}"));
        assert_eq!(
            emulated::f32_bits(&got[1]),
            emulated::f32_bits(&want[1]),
            "{target}"
        );
    }
}

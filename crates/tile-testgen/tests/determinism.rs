//! The same seed and configuration give the same case, byte for byte; the
//! configuration's limits hold.

use tile_ir::interp::Arg;
use tile_ir::{OpKind, Type};
use tile_testgen::{generate, GenConfig};

/// The kernel text, grid and every argument byte of a case.
fn bytes(case: &tile_testgen::Case) -> Vec<u8> {
    let mut out = case.func.to_string().into_bytes();
    out.extend(case.grid.iter().flat_map(|g| g.to_le_bytes()));
    out.extend(bytes_of(&case.args));
    out
}

/// The layout and every byte of each argument.
fn bytes_of(args: &[Arg]) -> Vec<u8> {
    let mut out = Vec::new();
    for arg in args {
        match arg {
            Arg::Scalar(s) => out.extend(s.to_bits().to_le_bytes()),
            Arg::Tensor(t) => {
                out.extend(format!("{:?}{:?}{}", t.shape(), t.strides(), t.offset()).bytes());
                out.extend_from_slice(t.data());
            }
            Arg::Tensors(ts) => out.extend(bytes_of(
                &ts.iter().cloned().map(Arg::Tensor).collect::<Vec<_>>(),
            )),
        }
    }
    out
}

#[test]
fn the_same_seed_gives_the_same_case_byte_for_byte() {
    let config = GenConfig::default();
    for seed in [0, 1, 17, 4242, u64::MAX] {
        let (a, b) = (generate(seed, &config), generate(seed, &config));
        assert_eq!(a, b, "seed {seed}");
        assert_eq!(bytes(&a), bytes(&b), "seed {seed}");
    }
}

#[test]
fn different_seeds_give_different_cases() {
    let config = GenConfig::default();
    let texts: std::collections::HashSet<String> = (0..50)
        .map(|seed| generate(seed, &config).func.to_string())
        .collect();
    assert!(texts.len() >= 48, "only {} distinct kernels", texts.len());
}

#[test]
fn the_configuration_bounds_ranks_tiles_grids_inputs_and_dtypes() {
    let config = GenConfig {
        dtypes: vec![tile_ir::DType::I16],
        max_rank: 2,
        max_tile_elements: 64,
        max_programs: 2,
        max_inputs: 2,
        max_pipeline_tile_elements: 64,
        ..GenConfig::default()
    };
    for seed in 0..200 {
        let case = generate(seed, &config);
        let mut loads = 0;
        case.func.walk(&mut |op| {
            loads += usize::from(matches!(
                case.func.op(op).kind,
                OpKind::Load | OpKind::LoadMasked { .. }
            ));
        });
        assert!(loads <= 2, "seed {seed}: {loads} loads");
        assert!(
            case.grid.iter().product::<u32>() <= 2,
            "seed {seed}: grid {:?}",
            case.grid
        );
        let func = &case.func;
        func.walk(&mut |op| {
            for &v in &func.op(op).results {
                if let Type::Tile(t) = func.ty(v) {
                    assert!(
                        t.shape.rank() <= 2 && t.shape.numel() <= 64,
                        "seed {seed}: {}",
                        func.ty(v)
                    );
                }
            }
            // Stored results and loads have a configured dtype.
            if let OpKind::Store | OpKind::StoreMasked = func.op(op).kind {
                let stored = func.ty(func.op(op).operands[0]);
                assert_eq!(stored.dtype(), tile_ir::DType::I16, "seed {seed}");
            }
        });
    }
}

#[test]
fn unusual_configurations_give_valid_runnable_cases() {
    use tile_ir::DType;
    let configs = [
        GenConfig {
            max_rank: 4,
            max_tile_elements: 2048,
            max_programs: 8,
            ..GenConfig::default()
        },
        GenConfig {
            dtypes: vec![DType::Bool],
            max_tile_elements: 1,
            ..GenConfig::default()
        },
        GenConfig {
            max_nesting: 0,
            max_depth: 1,
            max_outputs: 1,
            ..GenConfig::default()
        },
        GenConfig {
            dtypes: vec![DType::F8E4M3, DType::F8E5M2],
            special_rate: 0.5,
            max_depth: 6,
            ..GenConfig::default()
        },
        GenConfig {
            dtypes: Vec::new(),
            max_rank: 0,
            max_outputs: 0,
            max_programs: 0,
            ..GenConfig::default()
        },
    ];
    for (i, config) in configs.iter().enumerate() {
        for seed in 0..25 {
            let case = generate(seed, config);
            let mut args = case.args.clone();
            tile_ir::interp::run(&case.func, case.grid, &mut args)
                .unwrap_or_else(|e| panic!("config {i}, seed {seed}: {e}\n{}", case.func));
        }
    }
}

/// Atomics, scatters, asserts, gathers, `while` loops, combine functions, tensors
/// promised aligned, `multiple_of` hints and tensor arrays come from
/// streams of their own: about their rates of cases have them, and turning
/// them off (arrays stay on) leaves the rest of each case.
#[test]
fn features_of_their_own_streams_appear_at_their_rates_without_moving_other_cases() {
    let has = |case: &tile_testgen::Case, pred: &dyn Fn(&OpKind) -> bool| {
        let mut found = false;
        case.func
            .walk(&mut |id| found |= pred(&case.func.op(id).kind));
        found
    };
    let cfg = GenConfig::default();
    let off = GenConfig {
        atomic_rate: 0.0,
        scatter_rate: 0.0,
        assert_rate: 0.0,
        gather_rate: 0.0,
        while_rate: 0.0,
        combine_rate: 0.0,
        aligned_rate: 0.0,
        pipeline_rate: 0.0,
        hint_rate: 0.0,
        ..GenConfig::default()
    };
    let mut hinted_cases = 0;
    let (mut atomics, mut asserts, mut gathers, mut whiles, mut combines) = (0, 0, 0, 0, 0);
    let (mut aligned_cases, mut pipelined_cases, mut arrayed_cases) = (0, 0, 0);
    let mut scatters = 0;
    for seed in 0..400 {
        let case = generate(seed, &cfg);
        let pipelined = has(&case, &|k| {
            matches!(
                k,
                OpKind::Dot {
                    precision: tile_ir::DotPrecision::Tensor
                }
            )
        });
        pipelined_cases += usize::from(pipelined);
        if pipelined {
            // The case without its product: the same parameters and
            // arguments up to the product's own, which come last.
            let without = generate(
                seed,
                &GenConfig {
                    pipeline_rate: 0.0,
                    ..cfg.clone()
                },
            );
            let names = |c: &tile_testgen::Case| -> Vec<String> {
                c.func.params.iter().map(|p| p.name.clone()).collect()
            };
            assert!(names(&case).starts_with(&names(&without)), "seed {seed}");
            let prefix = &case.args[..without.args.len()];
            assert_eq!(bytes_of(prefix), bytes_of(&without.args), "seed {seed}");
            assert_eq!(case.grid, without.grid, "seed {seed}");
            continue;
        }
        arrayed_cases += usize::from(has(&case, &|k| matches!(k, OpKind::GetTensor)));
        let atomic = has(&case, &|k| matches!(k, OpKind::Atomic { .. }));
        let assert = has(&case, &|k| matches!(k, OpKind::Assert { .. }));
        let gather = has(&case, &|k| matches!(k, OpKind::Gather));
        // A scatter only where its output is not atomic: counted with them.
        let atomic = atomic || has(&case, &|k| matches!(k, OpKind::Scatter));
        scatters += usize::from(has(&case, &|k| matches!(k, OpKind::Scatter)));
        atomics += usize::from(atomic);
        asserts += usize::from(assert);
        let whiled = has(&case, &|k| matches!(k, OpKind::While));
        let combined = has(&case, &|k| {
            matches!(k, OpKind::ReduceWith { .. } | OpKind::ScanWith { .. })
        });
        combines += usize::from(combined);
        gathers += usize::from(gather);
        whiles += usize::from(whiled);
        let aligned = case.func.params.iter().any(
            |p| matches!(case.func.ty(p.value), Type::Tensor(t) | Type::Tensors(t) if t.aligned),
        );
        aligned_cases += usize::from(aligned);
        let hinted = has(&case, &|k| matches!(k, OpKind::MultipleOf { .. }));
        hinted_cases += usize::from(hinted);
        if hinted {
            // The same kernel but for the hints: each `multiple_of`'s
            // result is its operand.
            let plain = generate(
                seed,
                &GenConfig {
                    hint_rate: 0.0,
                    ..cfg.clone()
                },
            );
            assert_eq!(bytes_of(&case.args), bytes_of(&plain.args), "seed {seed}");
            assert_eq!(case.grid, plain.grid, "seed {seed}");
            continue;
        }
        if !atomic && !assert && !gather && !whiled && !combined && !aligned {
            assert_eq!(bytes(&case), bytes(&generate(seed, &off)), "seed {seed}");
        }
        if !atomic && !assert && !gather && !whiled && !combined && aligned {
            // The same kernel but for the promises, and the same elements
            // in each argument (an aligned one in another layout).
            let plain = generate(seed, &off);
            let text = case.func.to_string().replace(", aligned>", ">");
            assert_eq!(text, plain.func.to_string(), "seed {seed}");
            for (a, b) in case.args.iter().zip(&plain.args) {
                match (a, b) {
                    (Arg::Tensor(a), Arg::Tensor(b)) => {
                        let bits = |t: &tile_ir::interp::HostTensor| -> Vec<u64> {
                            t.to_scalars().iter().map(|s| s.to_bits()).collect()
                        };
                        assert_eq!(bits(a), bits(b), "seed {seed}");
                    }
                    (Arg::Tensors(a), Arg::Tensors(b)) => {
                        let bits = |ts: &[tile_ir::interp::HostTensor]| -> Vec<u64> {
                            ts.iter()
                                .flat_map(|t| t.to_scalars())
                                .map(|s| s.to_bits())
                                .collect()
                        };
                        assert_eq!(bits(a), bits(b), "seed {seed}");
                    }
                    _ => assert_eq!(a, b, "seed {seed}"),
                }
            }
        }
    }
    assert!(
        (20..120).contains(&atomics),
        "{atomics} of 400 cases have atomics"
    );
    assert!(
        (10..80).contains(&scatters),
        "{scatters} of 400 cases scatter"
    );
    assert!(
        (30..100).contains(&asserts),
        "{asserts} of 400 cases assert"
    );
    assert!(
        (20..150).contains(&gathers),
        "{gathers} of 400 cases gather"
    );
    assert!(
        (15..150).contains(&whiles),
        "{whiles} of 400 cases have a `while`"
    );
    assert!(
        (15..150).contains(&combines),
        "{combines} of 400 cases have a combine function"
    );
    assert!(
        (30..250).contains(&aligned_cases),
        "{aligned_cases} of 400 cases promise a tensor aligned"
    );
    assert!(
        (5..150).contains(&hinted_cases),
        "{hinted_cases} of 400 cases hint a window's offset or extent"
    );
    assert!(
        (20..200).contains(&arrayed_cases),
        "{arrayed_cases} of 400 cases pick a tensor of an array"
    );
    assert!(
        (30..100).contains(&pipelined_cases),
        "{pipelined_cases} of 400 cases have a pipelined product"
    );
}

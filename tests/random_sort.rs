//! `rand`, `randint`, `randn` and `sort`: kernels on the CPU device and in
//! the interpreter against plain Rust. The Philox reference below is written
//! from the algorithm and checked first on the Random123 known-answer
//! vectors; the random builtins then equal it bit for bit (`randn` within
//! the rounding of `ln`, `sqrt` and `cos`, and bit for bit between the two
//! devices). The sorts equal `slice::sort_by` with NaNs last. Every kernel
//! also runs as the GPU targets lower it, on the lockstep emulator, and
//! compiles for every default target.

use tile::ir::interp::{self, Arg, HostTensor};
use tile::ir::text::parse_function;
use tile::ir::Scalar;
use tile::{tile_kernel, Device, Element, Tensor};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

/// The high and low words of the 64-bit product `m * x`.
fn mul_hi_lo(m: u32, x: u32) -> (u32, u32) {
    let p = u64::from(m) * u64::from(x);
    ((p >> 32) as u32, p as u32)
}

/// Philox 4x32 with ten rounds (Salmon et al., SC'11).
fn philox4x32_10(mut c: [u32; 4], mut k: [u32; 2]) -> [u32; 4] {
    for round in 0..10 {
        if round > 0 {
            k = [
                k[0].wrapping_add(0x9E37_79B9),
                k[1].wrapping_add(0xBB67_AE85),
            ];
        }
        let (hi0, lo0) = mul_hi_lo(0xD251_1F53, c[0]);
        let (hi1, lo1) = mul_hi_lo(0xCD9E_8D57, c[2]);
        c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0];
    }
    c
}

/// The output words for `seed` and `offset`: key (seed low, seed high),
/// counter (offset low, offset high, 0, 0).
fn words(seed: u64, offset: u64) -> [u32; 4] {
    let c = [offset as u32, (offset >> 32) as u32, 0, 0];
    philox4x32_10(c, [seed as u32, (seed >> 32) as u32])
}

/// Triton's map of a word to `[0, 1]`.
fn unit(w: u32) -> f32 {
    let x = w as i32;
    let x = if x < 0 { !x } else { x };
    x as f32 * 4.656_613e-10
}

/// `rand`: `unit` clamped below 1.
fn uniform(seed: u64, offset: u64) -> f32 {
    unit(words(seed, offset)[0]).min(0.999_999_94)
}

/// `randn`: Box–Muller of the first two words.
fn normal(seed: u64, offset: u64) -> f32 {
    let w = words(seed, offset);
    let (u1, u2) = (unit(w[0]).max(1.0e-7), unit(w[1]));
    (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos()
}

#[test]
fn the_reference_philox_gives_the_random123_known_answers() {
    let kat: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
        (
            [0; 4],
            [0; 2],
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8],
        ),
        (
            [u32::MAX; 4],
            [u32::MAX; 2],
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd],
        ),
        (
            [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            [0xa409_3822, 0x299f_31d0],
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
        ),
    ];
    for (counter, key, want) in kat {
        assert_eq!(philox4x32_10(counter, key), want, "{counter:x?} {key:x?}");
    }
    // The word map: 0 and the words nearest ±2^31.
    assert_eq!(unit(0), 0.0);
    assert_eq!(unit(u32::MAX), 0.0);
    assert_eq!(unit(0x7fff_ffff), 1.0);
    assert_eq!(unit(0x7fff_ffff).min(0.999_999_94), 0.999_999_94);
}

/// `randint`, `rand` and `randn` of a runtime `u64` seed at `i32` offsets.
#[tile_kernel(configs(B = 64))]
fn draws<const B: usize>(
    seed: u64,
    ints: &mut Tensor<u32>,
    unif: &mut Tensor<f32>,
    normal: &mut Tensor<f32>,
) {
    let pid = program_id(0);
    let offsets = iota::<i32>([B]) + pid * (B as i32);
    partition_view(ints, [B]).store_masked(randint(seed, offsets), pid);
    partition_view(unif, [B]).store_masked(rand(seed, offsets), pid);
    partition_view(normal, [B]).store_masked(randn(seed, offsets), pid);
}

/// `randint` of a runtime `i32` seed at `i64` offsets above 2^32.
#[tile_kernel(configs(B = 32))]
fn wide<const B: usize>(seed: i32, ints: &mut Tensor<u32>) {
    let pid = program_id(0);
    let offsets = (iota::<i64>([B]) + (pid * (B as i32)) as i64) * 3_000_000_000;
    partition_view(ints, [B]).store_masked(randint(seed, offsets), pid);
}

/// A constant seed, 2-D `u32` offsets and a scalar offset.
#[tile_kernel(configs(R = 4, C = 8))]
fn fixed<const R: usize, const C: usize>(grid: &mut Tensor<u32, 2>, one: &mut Tensor<f32>) {
    partition_view(grid, [R, C]).store(randint(-5, iota::<u32>([R, C]) * 7), 0, 0);
    partition_view(one, [1]).store(rand(0x1234_5678_9abc, 99), 0);
}

/// A host tensor of `values`.
fn host<T: Element>(shape: &[usize], values: &[T]) -> HostTensor {
    HostTensor::from_vec(shape, values.to_vec()).expect("host tensor")
}

/// The elements of a host tensor.
fn read<T: Element>(t: &HostTensor) -> Vec<T> {
    t.to_vec().expect("read back")
}

/// Asserts two `f32` lists have the same bits.
fn assert_bits(what: &str, got: &[f32], want: &[f32]) {
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(got), bits(want), "{what}");
}

#[test]
fn random_draws_equal_the_reference_on_the_cpu_and_in_the_interpreter() {
    let (dev, n, seed) = (Device::cpu(), 1000usize, 0xdead_beef_0bad_f00d_u64);
    let grid = [n.div_ceil(64) as u32];
    let mut ints: Tensor<u32> = dev.zeros(&[n]).unwrap();
    let mut unif: Tensor<f32> = dev.zeros(&[n]).unwrap();
    let mut norm: Tensor<f32> = dev.zeros(&[n]).unwrap();
    draws::<64>::launch(&dev, grid, (seed, &mut ints, &mut unif, &mut norm)).unwrap();
    let (ints, unif, norm) = (
        ints.to_vec().unwrap(),
        unif.to_vec().unwrap(),
        norm.to_vec().unwrap(),
    );
    let mut h = [
        host(&[n], &vec![0u32; n]),
        host(&[n], &vec![0f32; n]),
        host(&[n], &vec![0f32; n]),
    ];
    let [hi, hu, hn] = &mut h;
    draws::<64>::interpret(grid, (seed, hi, hu, hn)).unwrap();
    assert_eq!(read::<u32>(hi), ints);
    assert_bits("rand: interpreter", &read::<f32>(hu), &unif);
    assert_bits("randn: interpreter", &read::<f32>(hn), &norm);
    let offsets = 0..n as u64;
    let want: Vec<u32> = offsets.clone().map(|o| words(seed, o)[0]).collect();
    assert_eq!(ints, want, "randint");
    let want: Vec<f32> = offsets.clone().map(|o| uniform(seed, o)).collect();
    assert_bits("rand", &unif, &want);
    for (o, got) in offsets.zip(&norm) {
        let want = normal(seed, o);
        assert!(
            (got - want).abs() <= 1e-5 * (1.0 + want.abs()),
            "randn at {o}: {got} vs {want}"
        );
    }
}

#[test]
fn signed_seeds_extend_their_sign_and_wide_offsets_fill_two_counter_words() {
    let (dev, n, seed) = (Device::cpu(), 100usize, -3i32);
    let grid = [n.div_ceil(32) as u32];
    let mut ints: Tensor<u32> = dev.zeros(&[n]).unwrap();
    wide::<32>::launch(&dev, grid, (seed, &mut ints)).unwrap();
    let mut h = host(&[n], &vec![0u32; n]);
    wide::<32>::interpret(grid, (seed, &mut h)).unwrap();
    let want: Vec<u32> = (0..n as u64)
        .map(|i| words(seed as i64 as u64, i * 3_000_000_000)[0])
        .collect();
    assert_eq!(ints.to_vec().unwrap(), want);
    assert_eq!(read::<u32>(&h), want);
}

#[test]
fn constant_seeds_and_scalar_offsets_draw_like_runtime_ones() {
    let dev = Device::cpu();
    let mut grid: Tensor<u32> = dev.zeros(&[4, 8]).unwrap();
    let mut one: Tensor<f32> = dev.zeros(&[1]).unwrap();
    fixed::<4, 8>::launch(&dev, [1], (&mut grid, &mut one)).unwrap();
    let (mut hg, mut ho) = (host(&[4, 8], &[0u32; 32]), host(&[1], &[0f32]));
    fixed::<4, 8>::interpret([1], (&mut hg, &mut ho)).unwrap();
    let want: Vec<u32> = (0..32u64).map(|i| words(-5i64 as u64, i * 7)[0]).collect();
    assert_eq!(grid.to_vec().unwrap(), want);
    assert_eq!(read::<u32>(&hg), want);
    let want = [uniform(0x1234_5678_9abc, 99)];
    assert_bits("scalar rand", &one.to_vec().unwrap(), &want);
    assert_bits("scalar rand: interpreter", &read::<f32>(&ho), &want);
}

#[test]
fn randn_has_mean_zero_and_variance_one_and_rand_fills_the_unit_interval() {
    let (dev, n) = (Device::cpu(), 1usize << 16);
    let grid = [n.div_ceil(64) as u32];
    let mut ints: Tensor<u32> = dev.zeros(&[n]).unwrap();
    let mut unif: Tensor<f32> = dev.zeros(&[n]).unwrap();
    let mut norm: Tensor<f32> = dev.zeros(&[n]).unwrap();
    draws::<64>::launch(&dev, grid, (7u64, &mut ints, &mut unif, &mut norm)).unwrap();
    let moments = |v: &[f32]| {
        let mean = v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64;
        let var = v
            .iter()
            .map(|&x| (f64::from(x) - mean).powi(2))
            .sum::<f64>()
            / v.len() as f64;
        (mean, var)
    };
    let (mean, var) = moments(&norm.to_vec().unwrap());
    // Standard errors at 2^16 samples: 0.004 for the mean, 0.0055 for the variance.
    assert!(
        mean.abs() < 0.02 && (var - 1.0).abs() < 0.03,
        "randn: mean {mean}, variance {var}"
    );
    let u = unif.to_vec().unwrap();
    assert!(u.iter().all(|x| (0.0..1.0).contains(x)));
    let (mean, var) = moments(&u);
    assert!(
        (mean - 0.5).abs() < 0.01 && (var - 1.0 / 12.0).abs() < 0.005,
        "rand: mean {mean}, variance {var}"
    );
}

/// Both sorts of `R` rows of `N` floats.
#[tile_kernel(configs(R = 4, N = 16), configs(R = 2, N = 64), configs(R = 2, N = 1))]
fn sort_rows<const R: usize, const N: usize>(
    x: &Tensor<f32, 2>,
    up: &mut Tensor<f32, 2>,
    down: &mut Tensor<f32, 2>,
) {
    let pid = program_id(0);
    let t = partition_view(x, [R, N]).load(pid, 0);
    partition_view(up, [R, N]).store(t.sort(), pid, 0);
    partition_view(down, [R, N]).store(t.sort_descending(), pid, 0);
}

/// Both sorts of a vector of `N` integers.
#[tile_kernel(configs(N = 8), configs(N = 32))]
fn sort_vec<const N: usize>(x: &Tensor<i32>, up: &mut Tensor<i32>, down: &mut Tensor<i32>) {
    let t = partition_view(x, [N]).load(0);
    partition_view(up, [N]).store(t.sort(), 0);
    partition_view(down, [N]).store(t.sort_descending(), 0);
}

/// Deterministic test values: xorshift.
fn values(n: usize, mut state: u32) -> Vec<u32> {
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state
        })
        .collect()
}

/// Floats with repeats, infinities and NaNs, no `-0.0`.
fn floats(n: usize, seed: u32) -> Vec<f32> {
    values(n, seed)
        .into_iter()
        .map(|v| match v % 16 {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => f32::NEG_INFINITY,
            3 => 1.5,
            _ => (v % 2001) as f32 / 8.0 - 125.0,
        })
        .collect()
}

/// Each row sorted ascending with NaNs last, and descending.
fn sorted_rows<T: Copy + PartialOrd>(xs: &[T], n: usize, nan: fn(&T) -> bool) -> (Vec<T>, Vec<T>) {
    let (mut up, mut down) = (Vec::new(), Vec::new());
    for row in xs.chunks(n) {
        let mut r = row.to_vec();
        r.sort_by(|a, b| a.partial_cmp(b).unwrap_or_else(|| nan(a).cmp(&nan(b))));
        up.extend(&r);
        down.extend(r.iter().rev());
    }
    (up, down)
}

/// Sorts `$rows` rows of `$n` floats with `sort_rows::<$r, $n>` on the
/// CPU device and in the interpreter.
macro_rules! check_float_sort {
    ($r:literal, $n:literal, $rows:literal) => {{
        let (dev, rows, n) = (Device::cpu(), $rows, $n);
        let xs = floats(rows * n, 0x9e37_79b9 ^ n as u32);
        let (want_up, want_down) = sorted_rows(&xs, n, |x: &f32| x.is_nan());
        let shape = [rows, n];
        let x = dev.tensor_from_slice(&xs, &shape).unwrap();
        let mut up: Tensor<f32> = dev.zeros(&shape).unwrap();
        let mut down: Tensor<f32> = dev.zeros(&shape).unwrap();
        let grid = [rows.div_ceil($r) as u32];
        sort_rows::<$r, $n>::launch(&dev, grid, (&x, &mut up, &mut down)).unwrap();
        let what = format!("[{}, {}]", $r, $n);
        assert_bits(&format!("sort {what}"), &up.to_vec().unwrap(), &want_up);
        assert_bits(
            &format!("sort_descending {what}"),
            &down.to_vec().unwrap(),
            &want_down,
        );
        let zero = vec![0f32; rows * n];
        let (mut hu, mut hd) = (host(&shape, &zero), host(&shape, &zero));
        sort_rows::<$r, $n>::interpret(grid, (&host(&shape, &xs), &mut hu, &mut hd)).unwrap();
        assert_bits(
            &format!("sort {what}: interpreter"),
            &read::<f32>(&hu),
            &want_up,
        );
        assert_bits(
            &format!("sort_descending {what}: interpreter"),
            &read::<f32>(&hd),
            &want_down,
        );
    }};
}

#[test]
fn float_sorts_equal_slice_sort_with_nans_last_and_keep_every_element() {
    check_float_sort!(4, 16, 12);
    check_float_sort!(2, 64, 6);
    check_float_sort!(2, 1, 4);
}

/// Sorts `$n` integers with `sort_vec::<$n>` on the CPU device and in the
/// interpreter.
macro_rules! check_int_sort {
    ($n:literal) => {{
        let (dev, n) = (Device::cpu(), $n);
        let xs: Vec<i32> = values(n, 12345 + n as u32)
            .into_iter()
            .map(|v| (v % 41) as i32 - 20)
            .collect();
        let (want_up, want_down) = sorted_rows(&xs, n, |_| false);
        let x = dev.tensor_from_slice(&xs, &[n]).unwrap();
        let mut up: Tensor<i32> = dev.zeros(&[n]).unwrap();
        let mut down: Tensor<i32> = dev.zeros(&[n]).unwrap();
        sort_vec::<$n>::launch(&dev, [1], (&x, &mut up, &mut down)).unwrap();
        assert_eq!(up.to_vec().unwrap(), want_up);
        assert_eq!(down.to_vec().unwrap(), want_down);
        let (mut hu, mut hd) = (host(&[n], &[0i32; $n]), host(&[n], &[0i32; $n]));
        sort_vec::<$n>::interpret([1], (&host(&[n], &xs), &mut hu, &mut hd)).unwrap();
        assert_eq!(read::<i32>(&hu), want_up);
        assert_eq!(read::<i32>(&hd), want_down);
    }};
}

#[test]
fn integer_sorts_equal_slice_sort() {
    check_int_sort!(8);
    check_int_sort!(32);
}

/// Built for the default targets (no `TILE_TARGETS` or `TILE_DEV_TARGETS`),
/// every specialization here has an image for each of them, and `ptxas`
/// takes each PTX image: the GPU lowerings take these compositions like any
/// kernel.
#[test]
fn every_kernel_here_compiles_for_every_default_target() {
    if option_env!("TILE_TARGETS").is_some() || option_env!("TILE_DEV_TARGETS").is_some() {
        return;
    }
    use tile::ImageKind;
    use tile_codegen::{tools, Sm};
    let want: Vec<String> = tile_codegen::default_targets()
        .iter()
        .map(ToString::to_string)
        .collect();
    let infos = [
        &draws::<64>::INFO,
        &wide::<32>::INFO,
        &fixed::<4, 8>::INFO,
        &sort_rows::<4, 16>::INFO,
        &sort_vec::<8>::INFO,
    ];
    for info in infos {
        for spec in info.specializations {
            let got: Vec<&str> = spec.images.iter().map(|i| i.target).collect();
            assert_eq!(got, want, "{} ({})", info.name, spec.label);
            for image in spec.images.iter().filter(|i| i.kind == ImageKind::Ptx) {
                let sm = Sm::ALL.into_iter().find(|s| s.name() == image.target);
                let ptx = std::str::from_utf8(image.bytes).expect("PTX is text");
                tools::assemble_ptx(ptx, sm.expect("an sm target"))
                    .unwrap_or_else(|e| panic!("{} ({}): {e}", info.name, spec.label));
            }
        }
    }
}

/// Runs the tile IR `ir` in the interpreter and as the GPU targets lower it
/// (the thread-level program for 4 warps, on the lockstep emulator), and
/// asserts that every tensor ends with the same bytes.
fn gpu_lowering_agrees(name: &str, ir: &str, grid: [u32; 3], args: Vec<Arg>) {
    let func = parse_function(ir).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut want = args.clone();
    interp::run(&func, grid, &mut want).unwrap_or_else(|e| panic!("{name}: {e}"));
    let program = lower(&func, &LowerOptions::warps(4)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut got = args;
    emulate::run(&program, grid, &mut got).unwrap_or_else(|e| panic!("{name}: {e}"));
    for (g, w) in got.iter().zip(&want) {
        if let (Arg::Tensor(g), Arg::Tensor(w)) = (g, w) {
            assert_eq!(
                g.data(),
                w.data(),
                "{name}: the lowering differs from the interpreter"
            );
        }
    }
}

/// A tensor argument.
fn tensor<T: Element>(shape: &[usize], values: &[T]) -> Arg {
    Arg::Tensor(host(shape, values))
}

#[test]
fn the_gpu_lowering_of_every_kernel_here_runs_like_the_interpreter() {
    let n = 200;
    let (u, f) = (vec![0u32; n], vec![0f32; n]);
    let args = vec![
        Arg::Scalar(Scalar::U64(0xdead_beef_0bad_f00d)),
        tensor(&[n], &u),
        tensor(&[n], &f),
        tensor(&[n], &f),
    ];
    gpu_lowering_agrees("draws", draws::<64>::ir(), [4, 1, 1], args);
    let args = vec![Arg::Scalar(Scalar::I32(-3)), tensor(&[n], &u)];
    gpu_lowering_agrees("wide", wide::<32>::ir(), [7, 1, 1], args);
    let args = vec![tensor(&[4, 8], &u[..32]), tensor(&[1], &f[..1])];
    gpu_lowering_agrees("fixed", fixed::<4, 8>::ir(), [1, 1, 1], args);
    for (ir, r, n) in [
        (sort_rows::<4, 16>::ir(), 4, 16),
        (sort_rows::<2, 64>::ir(), 2, 64),
        (sort_rows::<2, 1>::ir(), 2, 1),
    ] {
        let rows = 2 * r;
        let zero = vec![0f32; rows * n];
        let x = tensor(&[rows, n], &floats(rows * n, n as u32));
        let args = vec![x, tensor(&[rows, n], &zero), tensor(&[rows, n], &zero)];
        gpu_lowering_agrees(&format!("sort_rows [{r}, {n}]"), ir, [2, 1, 1], args);
    }
    for (ir, n) in [(sort_vec::<8>::ir(), 8), (sort_vec::<32>::ir(), 32)] {
        let xs: Vec<i32> = values(n, n as u32).into_iter().map(|v| v as i32).collect();
        let zero = vec![0i32; n];
        let args = vec![tensor(&[n], &xs), tensor(&[n], &zero), tensor(&[n], &zero)];
        gpu_lowering_agrees(&format!("sort_vec [{n}]"), ir, [1, 1, 1], args);
    }
}

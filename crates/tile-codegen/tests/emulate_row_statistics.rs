//! A row's running statistic carried through a loop (cross-entropy's and
//! attention's running maximum and sum): the `[1, 1]` tile is a slice of
//! the row's layout, which each thread holds once per element of the row it
//! reads, and the loop carries one register per element it holds, not one
//! per copy; the results are the interpreter's on the lockstep emulator and
//! every emulation target.

mod emulated;

use tile_ir::interp::{Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{verify, Function};
use tile_thread::lower::{lower, LowerOptions};
use tile_thread::program::{Program, ThreadOpKind};

/// Program `p` folds the 4 blocks of 256 columns of row `p` of `%x` into
/// the running maximum `m` and the sum `d` of `exp(x − m)` (online
/// softmax's statistics) and stores `m + ln d`, the row's log-sum-exp.
fn online_lse() -> Function {
    let text = r#"kernel @lse(%x: tensor<f32, 2>, %out: tensor<f32, 2>) {
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %one = constant 1 : i32
  %four = constant 4 : i32
  %vx = partition_view %x [1, 256] : view<f32, [1, 256]>
  %m0 = full -inf : tile<1x1xf32>
  %d0 = full 0.0 : tile<1x1xf32>
  %m, %d = for %i = %zero to %four step %one iter(%ma = %m0, %da = %d0) : tile<1x1xf32>, tile<1x1xf32> {
    %t = load %vx[%pid, %i] : tile<1x256xf32>
    %r = reduce max %t axis 1 keepdim : tile<1x1xf32>
    %mn = max %ma, %r : tile<1x1xf32>
    %gap = sub %ma, %mn : tile<1x1xf32>
    %scale = exp %gap : tile<1x1xf32>
    %ds = mul %da, %scale : tile<1x1xf32>
    %mb = broadcast %mn to [1, 256] : tile<1x256xf32>
    %shifted = sub %t, %mb : tile<1x256xf32>
    %e = exp %shifted : tile<1x256xf32>
    %s = reduce sum %e axis 1 keepdim : tile<1x1xf32>
    %dn = add %ds, %s : tile<1x1xf32>
    yield %mn, %dn
  }
  %ld = log %d : tile<1x1xf32>
  %lse = add %m, %ld : tile<1x1xf32>
  %vo = partition_view %out [1, 1] : view<f32, [1, 1]>
  store %lse, %vo[%pid, %zero]
}"#;
    let func = parse_function(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

fn args() -> Vec<Arg> {
    let x: Vec<f32> = (0..3 * 1024)
        .map(|i| ((i * 37) % 101) as f32 * 0.07 - 3.0)
        .collect();
    vec![
        Arg::Tensor(HostTensor::from_vec(&[3, 1024], x).unwrap()),
        Arg::Tensor(HostTensor::from_vec(&[3, 1], vec![0f32; 3]).unwrap()),
    ]
}

/// The registers the kernel's loop (its body's one `for`) carries.
fn carried(program: &Program) -> usize {
    let op = program
        .body
        .ops
        .iter()
        .map(|&id| &program.ops[id])
        .find(|op| op.kind == ThreadOpKind::For)
        .expect("a loop");
    op.results.len()
}

#[test]
fn a_loop_carries_a_row_statistic_once_per_thread_not_once_per_copy() {
    for warps in [1, 4] {
        let program = lower(&online_lse(), &LowerOptions::warps(warps)).unwrap();
        // Two statistics, one element each.
        assert_eq!(carried(&program), 2, "{warps} warps\n{program}");
    }
    emulated::agrees(&online_lse(), args, 1, [3, 1, 1]);
}

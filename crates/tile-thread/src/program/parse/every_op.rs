//! A program with every op of the table reads back as it prints.

use crate::program::{parse_program, Program, ThreadOpKind};

/// One line or more of every op (not a program that verifies: the
/// operands are whatever registers are at hand).
const EVERY_OP: &str = "kernel every_op warps 4 (x: tensor<f32, 2>, h: tensor<f16, 2>, n: i32, \
                        xs: tensors<f32, 1, aligned>, xs_0: tensor<f32, 1, aligned> of xs)
shared @s0: f32[64]
shared @s1: f16[8192] align 1024
shared @s2: u64[2]
shared @s3: i32[1]
{
  %t = thread_id : i32
  %l = lane_id : i32
  %w = warp_id : i32
  %b = block_id 0 : i32
  %g = grid_dim 1 : i32
  %z = const 0 : i32
  %p = param n : i32
  %d = dim x.0 : i32
  %s = stride x.1 : i64
  %al = align x : i64
  %nt = num_tensors xs : i32
  get_tensor xs_0 = xs[%z]
  %ng = neg %t : i32
  %ad = add %t, %l : i32
  %c = cmp lt %t, %l : bool
  %se = select %c, %t, %l : i32
  %fm = fma %t, %l, %z : i32
  %o = opaque %t : i32
  %a = cast %t to i64 : i64
  %f = bitcast %t to f32 : f32
  %hf = cast %f to f16 : f16
  %v = ld.global.v1 x[%a] mask(%c) other(%f) : f32
  %v0, %v1 = ld.global.v2 x[%a] if(%c) else[%a, %a] mask(%c, %c) other(%f, %f) : f32
  st.global.v1 x[%a], %v mask(%c)
  st.global.v2 x[%a] if(%c) else[%a, %a], %v0, %v1 mask(%c, %c)
  %at = atom.global.add.relaxed.gpu x[%a], %v mask(%c) : f32
  %cs = atom.global.cas.acq_rel.cta x[%a], %v, %f mask(%c) : f32
  red.global.add.gpu.v1 x[%a], %v mask(%c)
  red.global.add.cta.v2 x[%a] if(%c) else[%a, %a], %v, %f mask(%c, %c)
  %r = ld.shared @s0[%t] : f32
  %r0, %r1 = ld.shared.v2 @s0[%t] : f32
  st.shared @s0[%t], %r mask(%c)
  st.shared.v2 @s0[%t], %r0, %r1 mask(%c)
  round.shared.tf32.v2 @s0[%t] mask(%c)
  check.bounds %c [%a] \"load\"
  check.assert %c [%a, %f] \"assert!(x > 0)\"
  print 0 %c, %t [%v, %t]
  barrier
  fence.acq_rel.gpu
  %sh = shfl.bfly %v, %l width 32 : f32
  %m0, %m1, %m2, %m3 = mma.m16n8k16.f16 %hf, %hf, %hf, %hf, %hf, %hf, %hf, %hf, %hf, %hf, %hf, %hf, %f, %f, %f, %f : f32
  %x0, %x1 = ldmatrix.x1 @s1[%t] : f16
  %y0, %y1, %y2, %y3 = ldmatrix.x2.trans @s1[%t] : f16
  cp.async @s0[%t], x[%a] count(%t) mask(%c)
  cp.async.commit
  cp.async.wait 1
  %k0, %k1, %k2, %k3 = wgmma.m64n8k16.f16 @s1[%t], @s1[%z], %f, %f, %f, %f : f32
  %q0, %q1, %q2, %q3 = wgmma.m64n8k16.bf16.bk.sw32 @s1[%t], @s1[%z], %f, %f, %f, %f : f32
  %fp0, %fp1, %fp2, %fp3 = wgmma.m64n8k32.f8e4m3.bk.sw64 @s1[%t], @s1[%z], %f, %f, %f, %f : f32
  %e0, %e1, %e2, %e3 = wgmma.m64n8k16.f16.bk {%hf, %hf, %hf, %hf, %hf, %hf, %hf, %hf}, @s1[%z], %k0, %k1, %k2, %k3 : f32
  wgmma.fence
  wgmma.commit
  %u0, %u1, %u2, %u3 = wgmma.wait 0 %e0, %e1, %e2, %e3 : f32
  tmem.alloc 32 @s3[%z]
  %tm = ld.shared @s3[%z] : i32
  tcgen05.mma.m128n16k16.f16.sw64 @s1[%t], @s1[%z], %tm, %c mask(%c)
  tcgen05.mma.m128n16k16.f16 tmem[%tm], @s1[%z], %tm, %c mask(%c)
  tcgen05.mma.scaled.m128n16k32.f8e4m3.bk byte 2 @s1[%t], @s1[%z], %tm, scales(%tm, %tm), %c mask(%c)
  tcgen05.commit_wait @s2[%z] mask(%c)
  %j0, %j1 = tmem.load.x2 %tm : f32
  tmem.store %tm, %j0, %j1
  tmem.store.halves %tm, %hf, %hf, %hf, %hf
  tmem.store.bytes %tm, %t, %t, %t, %t
  tmem.dealloc 32 %tm
  fence.proxy.async
  griddepcontrol.wait
  griddepcontrol.launch_dependents
  mbarrier.init @s2[%z], %t mask(%c)
  mbarrier.expect_tx @s2[%z], %t mask(%c)
  mbarrier.wait @s2[%z], %z
  tma.load @s1[%t], h box 64 [%t, %z], @s2[%z] mask(%c)
  %sum = for %i = %z to %t step %l iter(%acc = %v) : f32 {
    yield %acc
  }
  %last = while iter(%n0 = %t) : i32 {
    %go = cmp lt %n0, %l : bool
    yield %go
  } do(%n1) {
    yield %n1
  }
  %pick = if %c : i32 {
    yield %t
  } else {
    yield %l
  }
}
";

fn kinds(program: &Program) -> Vec<ThreadOpKind> {
    program.ops.iter().map(|(_, op)| op.kind.clone()).collect()
}

#[test]
fn every_op_reads_back_as_it_prints() {
    let program = parse_program(EVERY_OP).unwrap();
    let printed = program.to_string();
    let again = parse_program(&printed).unwrap();
    assert_eq!(again.to_string(), printed);
    assert_eq!(kinds(&again), kinds(&program));
    let names: Vec<String> = kinds(&program)
        .iter()
        .map(|k| {
            format!("{k:?}")
                .split([' ', '(', '{'])
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    for &(variant, _, _) in ThreadOpKind::ROWS {
        assert!(
            names.iter().any(|n| n == variant),
            "no `{variant}` in the program"
        );
    }
}

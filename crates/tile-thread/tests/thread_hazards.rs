//! The verifier's synchronization rule (`program/hazards.rs`): a shared
//! write that may follow another thread's read of the same allocation, or
//! a read that may follow its write, on any path, loop back edges included,
//! has a barrier between; the error names both ops.

use tile_thread::parse_program;
use tile_thread::program::verify;

/// The program of `body` with one warp, a tensor `x` and two allocations.
fn program(body: &str) -> String {
    format!(
        "kernel k warps 1 (x: tensor<f16, 1>)
shared @s0: f16[256]
shared @s1: f16[256]
{{
  %0 = const 0 : i32
  %1 = const 4 : i32
  %2 = const 1 : i32
  %3 = const true : bool
  %4 = thread_id : i32
  %5 = const 0 : i64
  %6 = const 8 : i32
  %7 = const 0.0 : f16
{body}}}
"
    )
}

/// The verifier's message for `body`, or `ok`.
fn check(body: &str) -> String {
    let text = program(body);
    let parsed = parse_program(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    match verify(&parsed) {
        Ok(()) => "ok".into(),
        Err(e) => e.to_string(),
    }
}

/// `body("")` breaks the rule with `error`, and `body(barrier)` keeps it.
fn fixed_by_a_barrier(body: impl Fn(&str) -> String, barrier: &str, error: &str) {
    assert_eq!(check(&body("")), error);
    assert_eq!(check(&body(barrier)), "ok");
}

/// A pipeline's prologue inside an outer loop: the copies of the first
/// stage, then the `K` loop reading it. `guard` goes before the prologue.
fn nested_pipeline(guard: &str) -> String {
    format!(
        "  for %8 = %0 to %1 step %2 iter() {{
{guard}    cp.async @s0[%4], x[%5] count(%6) mask(%3)
    cp.async.commit
    for %9 = %0 to %1 step %2 iter() {{
      cp.async.wait 0
      barrier
      %10, %11 = ldmatrix.x1 @s0[%4] : f16
      yield
    }}
    yield
  }}
"
    )
}

#[test]
fn an_outer_loop_around_a_pipeline_needs_a_barrier_before_its_prologue() {
    fixed_by_a_barrier(
        nested_pipeline,
        "    barrier\n",
        "`cp.async @s0[%4], x[%5] count(%6) mask(%3)`: may overwrite what was read by \
         `%10, %11 = ldmatrix.x1 @s0[%4] : f16` in another thread, with no barrier between",
    );
}

#[test]
fn a_loop_back_edge_carries_reads_to_the_next_iteration() {
    let body = |guard: &str| {
        format!(
            "  for %8 = %0 to %1 step %2 iter() {{
{guard}    st.shared @s0[%4], %7 mask(%3)
    barrier
    %9 = ld.shared @s0[%4] : f16
    yield
  }}
"
        )
    };
    fixed_by_a_barrier(
        body,
        "    barrier\n",
        "`st.shared @s0[%4], %7 mask(%3)`: may overwrite what was read by \
         `%9 = ld.shared @s0[%4] : f16` in another thread, with no barrier between",
    );
}

#[test]
fn a_while_loop_back_edge_is_followed_too() {
    let body = |guard: &str| {
        format!(
            "  %8 = while iter(%9 = %0) : i32 {{
    %10 = cmp lt %9, %1 : bool
    yield %10
  }} do(%11) {{
{guard}    st.shared @s1[%4], %7 mask(%3)
    barrier
    %12 = ld.shared @s1[%4] : f16
    %13 = add %11, %2 : i32
    yield %13
  }}
"
        )
    };
    fixed_by_a_barrier(
        body,
        "    barrier\n",
        "`st.shared @s1[%4], %7 mask(%3)`: may overwrite what was read by \
         `%12 = ld.shared @s1[%4] : f16` in another thread, with no barrier between",
    );
}

#[test]
fn a_read_after_a_store_needs_a_barrier() {
    let body = |guard: &str| {
        format!("  st.shared @s0[%4], %7 mask(%3)\n{guard}  %8 = ld.shared @s0[%0] : f16\n")
    };
    fixed_by_a_barrier(
        body,
        "  barrier\n",
        "`%8 = ld.shared @s0[%0] : f16`: may read what was written by \
         `st.shared @s0[%4], %7 mask(%3)` in another thread, with no barrier between",
    );
    // Other allocations are other bytes.
    assert_eq!(
        check("  st.shared @s0[%4], %7 mask(%3)\n  %8 = ld.shared @s1[%0] : f16\n"),
        "ok"
    );
}

#[test]
fn a_copy_is_read_after_its_wait_and_a_barrier() {
    let body = |between: &str| {
        format!(
            "  cp.async @s0[%4], x[%5] count(%6) mask(%3)\n  cp.async.commit\n{between}  %8 = ld.shared @s0[%0] : f16\n"
        )
    };
    assert_eq!(
        check(&body("  cp.async.wait 0\n")),
        "`%8 = ld.shared @s0[%0] : f16`: may read what was written by \
         `cp.async @s0[%4], x[%5] count(%6) mask(%3)` in another thread, with no barrier between"
    );
    assert_eq!(check(&body("  cp.async.wait 0\n  barrier\n")), "ok");
}

#[test]
fn a_barrier_on_one_branch_orders_nothing_after_the_if() {
    let body = |other: &str| {
        format!(
            "  %8 = ld.shared @s0[%4] : f16
  %9 = cmp lt %4, %6 : bool
  if %9 {{
    barrier
    yield
  }} else {{
{other}    yield
  }}
  st.shared @s0[%4], %7 mask(%3)
"
        )
    };
    fixed_by_a_barrier(
        body,
        "    barrier\n",
        "`st.shared @s0[%4], %7 mask(%3)`: may overwrite what was read by \
         `%8 = ld.shared @s0[%4] : f16` in another thread, with no barrier between",
    );
}

#[test]
fn stores_of_a_copy_group_land_with_its_copies() {
    // The element path of a copy: a store before the group's commit counts
    // as the group's copies do, so reading another stage is allowed, and
    // its own bytes are visible after the wait and a barrier.
    let group = "  st.shared @s0[%4], %7 mask(%3)\n  cp.async.commit\n";
    assert_eq!(
        check(&format!("{group}  %8 = ld.shared @s0[%0] : f16\n")),
        "ok"
    );
    assert_eq!(
        check(&format!(
            "{group}  cp.async.wait 0\n  %8 = ld.shared @s0[%0] : f16\n"
        )),
        "`%8 = ld.shared @s0[%0] : f16`: may read what was written by \
         `st.shared @s0[%4], %7 mask(%3)` in another thread, with no barrier between"
    );
}

/// The verifier's message for `body` in [`program`] with a third
/// allocation, `@s2`, of f32 over the bytes of `@s0`.
fn check_aliased(body: &str) -> String {
    let text = program(&format!("  %8 = const 0.0 : f32\n{body}")).replace(
        "shared @s1: f16[256]\n",
        "shared @s1: f16[256]\nshared @s2: f32[128] aliases @s0\n",
    );
    let parsed = parse_program(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(parsed.to_string(), text, "the alias prints back");
    match verify(&parsed) {
        Ok(()) => "ok".into(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn an_alias_shares_the_bytes_of_the_allocation_it_aliases() {
    let reuse = |guard: &str| {
        format!("  %9 = ld.shared @s0[%4] : f16\n{guard}  st.shared @s2[%4], %8 mask(%3)\n")
    };
    assert_eq!(
        check_aliased(&reuse("")),
        "`st.shared @s2[%4], %8 mask(%3)`: may overwrite what was read by \
         `%9 = ld.shared @s0[%4] : f16` in another thread, with no barrier between"
    );
    assert_eq!(check_aliased(&reuse("  barrier\n")), "ok");
    // The allocation it does not alias is other bytes.
    assert_eq!(
        check_aliased("  %9 = ld.shared @s1[%4] : f16\n  st.shared @s2[%4], %8 mask(%3)\n"),
        "ok"
    );
}

//! Every trybuild case in one test, since each trybuild run compiles a crate:
//! `ui/pass/*.rs` must build and run, `ui/fail/*.rs` must fail with exactly
//! the reviewed `.stderr` next to it.
//!
//! The cases are about the front end, so they are built for the host target
//! only (`TILE_TARGETS=host`): GPU code generation is tested in tile-codegen
//! and tile-frontend, and would only make these builds slower.

#[test]
fn ui() {
    // The only test of this binary: no other thread reads the environment.
    std::env::set_var("TILE_TARGETS", "host");
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}

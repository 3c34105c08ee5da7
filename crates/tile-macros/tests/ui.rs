//! Every trybuild case in one test, since each trybuild run compiles a crate:
//! `ui/pass/*.rs` must build and run, `ui/fail/*.rs` must fail with exactly
//! the reviewed `.stderr` next to it.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}

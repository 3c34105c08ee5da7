//! How the tests link LLVM: as the shared library `build.rs` found. Only
//! the proc macro links LLVM's static libraries (feature `static-llvm`, so
//! that it never binds to the copy inside rustc); should the feature reach
//! the normal build (as it does when `tile-macros` is selected as a package
//! to test), every test binary would embed all of LLVM, some 100 MB each.

// Linked for the LLVM libraries its build script names.
extern crate tile_codegen;

#[cfg(target_os = "linux")]
#[test]
fn the_test_build_maps_the_shared_libllvm() {
    // A call into LLVM, so that the library is needed at all.
    let context = inkwell::context::Context::create();
    drop(context);
    let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
    assert!(
        maps.lines().any(|line| line.contains("libLLVM")),
        "no libLLVM is mapped: LLVM was linked statically into this test (is `static-llvm` on? \
         `cargo test --workspace` must exclude tile-macros)"
    );
}

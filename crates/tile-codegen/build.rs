//! Finds LLVM 22 and links its shared library (its static libraries with
//! the feature `static-llvm`, which the proc macro turns on:
//! [`link_static`]), so that a crate depending on `tile` builds with no
//! configuration where LLVM 22 is installed the usual way. `llvm-sys` is built with `no-llvm-linking` and without its C
//! wrappers (which it compiles only when it finds LLVM itself): this script
//! is the one place LLVM is looked for, and it compiles the wrappers
//! (`build/targets.c`, the `LLVM_Initialize*` functions inkwell refers to)
//! against the headers of the LLVM it found. It also compiles the C++ that
//! runs LLVM's machine-code assembler and lld's ELF linker in the compiler's
//! process (`build/assemble.cpp`, `build/link.cpp`; src/native.rs), and
//! links lld's static libraries.
//!
//! The first `llvm-config` that reports version 22 wins, in this order:
//! `$LLVM_SYS_221_PREFIX/bin/llvm-config` when that variable is set (then
//! nothing else is tried: the user chose), `llvm-config-22` and
//! `llvm-config` on `PATH`, then the usual install prefixes ([`PREFIXES`]).
//! Without one, the build fails with a message that lists what was tried
//! and names the packages to install.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The LLVM major version `tile` is built against (inkwell's `llvm22-1`).
const MAJOR: &str = "22";

/// Where LLVM 22 lives when its `llvm-config` is not on `PATH`: Debian and
/// Ubuntu (`llvm-22-dev`), Fedora (`llvm22-devel`), Homebrew on Apple
/// silicon and on Intel (`llvm@22`).
const PREFIXES: [&str; 4] = [
    "/usr/lib/llvm-22",
    "/usr/lib64/llvm22",
    "/opt/homebrew/opt/llvm@22",
    "/usr/local/opt/llvm@22",
];

const PREFIX_VAR: &str = "LLVM_SYS_221_PREFIX";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // Not `PATH`: a build from a shell with another `PATH` (an editor's)
    // would rebuild every crate with kernels. A failed run is rerun anyway,
    // so installing LLVM after the error needs nothing more.
    println!("cargo:rerun-if-env-changed={PREFIX_VAR}");
    let mut tried = Vec::new();
    let Some(config) = find_llvm_config(&mut tried) else {
        fail(&format!(
            "tile-codegen needs LLVM {MAJOR} (its shared library and `llvm-config`) and found none.\n\
             Tried:\n{}\n\
             Install LLVM {MAJOR}: on Debian or Ubuntu `apt install llvm-22-dev` (from apt.llvm.org \
             where the release has none), on Fedora `dnf install llvm22-devel`, with Homebrew \
             `brew install llvm@22`; or set {PREFIX_VAR} to the prefix of an LLVM {MAJOR} install \
             (the directory whose `bin/llvm-config` reports {MAJOR}.x).",
            tried.join("\n")
        ));
    };
    let run = |args: &[&str]| {
        output(&config, args).unwrap_or_else(|e| {
            fail(&format!(
                "`{} {}` failed: {e}",
                config.display(),
                args.join(" ")
            ))
        })
    };
    // Not a `cargo:` line: kept in the script's output file, for whoever
    // wonders which LLVM was linked.
    println!("llvm-config: {}", config.display());
    let libdir = run(&["--libdir"]);
    let includedir = run(&["--includedir"]);
    println!("cargo:rerun-if-changed=build/targets.c");
    cc::Build::new()
        .file("build/targets.c")
        .include(&includedir)
        .compile("tile_llvm_targets");
    native(&run(&["--cxxflags"]), &libdir, &includedir);
    println!("cargo:rustc-link-search=native={libdir}");
    println!("cargo:rerun-if-env-changed=CARGO_FEATURE_STATIC_LLVM");
    if std::env::var_os("CARGO_FEATURE_STATIC_LLVM").is_some() {
        static_stubs(&run(&["--targets-built"]), &run(&["--cxxflags"]));
        link_static(&run, &libdir);
    } else {
        link_shared(&config, &run);
    }
}

/// Links LLVM's shared library.
fn link_shared(config: &Path, run: &dyn Fn(&[&str]) -> String) {
    let libnames = output(config, &["--link-shared", "--libnames"]).unwrap_or_else(|e| {
        fail(&format!(
            "the LLVM {MAJOR} of `{}` has no shared library, which tile links ({e}); install \
             a build with libLLVM (Debian's llvm-22-dev has one)",
            config.display()
        ))
    });
    for name in libnames.split_whitespace() {
        println!("cargo:rustc-link-lib=dylib={}", link_name(name));
    }
    for flag in run(&["--link-shared", "--system-libs"]).split_whitespace() {
        if let Some(lib) = flag.strip_prefix("-l") {
            println!("cargo:rustc-link-lib=dylib={lib}");
        }
    }
}

/// The targets whose libraries tile links statically.
const TILE_TARGETS: [&str; 4] = ["NVPTX", "AMDGPU", "X86", "AArch64"];

/// With LLVM linked statically: the initializers of the targets LLVM was
/// built with but tile does not link, as functions that do nothing, and
/// Polly's plugin entry (`build/static_stubs.cpp` says why).
fn static_stubs(targets_built: &str, cxxflags: &str) {
    let steps = [
        "TargetInfo",
        "Target",
        "TargetMC",
        "AsmPrinter",
        "AsmParser",
        "Disassembler",
        "TargetMCA",
    ];
    let mut c = String::from("/* Generated by build.rs: see build/static_stubs.cpp. */\n");
    for target in targets_built.split_whitespace() {
        if TILE_TARGETS.contains(&target) {
            continue;
        }
        for step in steps {
            c.push_str(&format!("void LLVMInitialize{target}{step}(void) {{}}\n"));
        }
    }
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let file = out.join("stub_targets.c");
    std::fs::write(&file, c).unwrap_or_else(|e| fail(&format!("{}: {e}", file.display())));
    cc::Build::new().file(&file).compile("tile_stub_targets");
    println!("cargo:rerun-if-changed=build/static_stubs.cpp");
    let mut build = cc::Build::new();
    build.cpp(true).file("build/static_stubs.cpp");
    for flag in cxxflags.split_whitespace() {
        build.flag(flag);
    }
    build.warnings(false).compile("tile_static_stubs");
}

/// Links LLVM's static libraries (feature `static-llvm`), unbundled: they
/// go into the final artifact's link, from which the linker takes only the
/// objects it needs. A proc macro runs inside `rustc`, whose own LLVM
/// exports the same versioned symbols as a shared `libLLVM` of its major
/// version; linked statically, the macro's LLVM is its own.
fn link_static(run: &dyn Fn(&[&str]) -> String, libdir: &str) {
    let components = [
        "nvptx",
        "amdgpu",
        "x86",
        "aarch64",
        "passes",
        "irreader",
        "lto",
        "dtlto",
        "option",
        "executionengine",
        "mcjit",
    ];
    let names = run(&[&["--link-static", "--libnames"][..], &components].concat());
    // Polly is linked into LLVM's own tools, not its libraries, and some
    // distributions ship no static Polly.
    let names: Vec<&str> = names
        .split_whitespace()
        .filter(|n| !n.contains("Polly"))
        .collect();
    let missing: Vec<&str> = names
        .iter()
        .copied()
        .filter(|name| !Path::new(libdir).join(name).exists())
        .collect();
    if !missing.is_empty() {
        fail(&format!(
            "the #[tile_kernel] macro links LLVM {MAJOR}'s static libraries, and {libdir} lacks \
             {}. Install them: on Debian or Ubuntu `apt install llvm-{MAJOR}-dev`, on Fedora \
             `dnf install llvm{MAJOR}-static`.",
            missing.join(", ")
        ));
    }
    for name in names {
        println!("cargo:rustc-link-lib=static:-bundle={}", link_name(name));
    }
    for flag in run(&["--link-static", "--system-libs"]).split_whitespace() {
        // A library named by its path (`/usr/lib/.../libz3.so`) or by `-l`.
        let file = Path::new(flag).file_name().and_then(|f| f.to_str());
        let lib = flag.strip_prefix("-l").or(file.map(link_name));
        if let Some(lib) = lib {
            println!("cargo:rustc-link-lib=dylib={lib}");
        }
    }
}

/// The C++ half of the back end (`build/assemble.cpp`, the machine-code
/// assembler, and `build/link.cpp`, lld's ELF linker, both run in the
/// compiler's process): compiled with LLVM's C++ flags, and linked with
/// lld's static libraries, which come with LLVM's (Debian's
/// `liblld-22-dev`).
fn native(cxxflags: &str, libdir: &str, includedir: &str) {
    let libraries = ["lldELF", "lldCommon"];
    let missing: Vec<String> = libraries
        .iter()
        .map(|name| Path::new(libdir).join(format!("lib{name}.a")))
        .filter(|archive| !archive.exists())
        .map(|archive| archive.display().to_string())
        .collect();
    if !missing.is_empty() || !Path::new(includedir).join("lld/Common/Driver.h").exists() {
        fail(&format!(
            "tile-codegen links lld's ELF linker (its static libraries and headers, beside \
             LLVM {MAJOR}'s in {libdir}) and found no {}. Install them: on Debian or Ubuntu \
             `apt install liblld-22-dev`, on Fedora `dnf install lld22-devel`, with Homebrew \
             `brew install lld@22`.",
            if missing.is_empty() {
                format!("{includedir}/lld/Common/Driver.h")
            } else {
                missing.join(", ")
            }
        ));
    }
    for file in ["build/native.h", "build/assemble.cpp", "build/link.cpp"] {
        println!("cargo:rerun-if-changed={file}");
    }
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .files(["build/assemble.cpp", "build/link.cpp"]);
    // `-I…`, `-std=c++17`, `-fno-exceptions`, `-D…`: as LLVM was built.
    for flag in cxxflags.split_whitespace() {
        build.flag(flag);
    }
    // LLVM's headers are not warning-clean under every compiler's defaults.
    build.warnings(false).compile("tile_native");
    for name in libraries {
        println!("cargo:rustc-link-lib=static={name}");
    }
    // lld compresses sections with zlib and zstd when asked; it calls them
    // directly, not through libLLVM.
    for name in ["z", "zstd"] {
        println!("cargo:rustc-link-lib=dylib={name}");
    }
}

/// The first `llvm-config` of version [`MAJOR`], each candidate and why it
/// was passed over recorded in `tried`.
fn find_llvm_config(tried: &mut Vec<String>) -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = match std::env::var_os(PREFIX_VAR) {
        Some(prefix) => vec![Path::new(&prefix).join("bin/llvm-config")],
        None => {
            tried.push(format!("  {PREFIX_VAR}: not set"));
            let on_path = [format!("llvm-config-{MAJOR}"), "llvm-config".to_string()]
                .into_iter()
                .map(PathBuf::from);
            let prefixes = PREFIXES
                .iter()
                .map(|prefix| Path::new(prefix).join("bin/llvm-config"));
            on_path.chain(prefixes).collect()
        }
    };
    for candidate in candidates {
        match output(&candidate, &["--version"]) {
            Ok(version) if version.split('.').next() == Some(MAJOR) => return Some(candidate),
            Ok(version) => tried.push(format!("  `{}`: version {version}", candidate.display())),
            Err(e) => tried.push(format!("  `{}`: {e}", candidate.display())),
        }
    }
    None
}

/// What `program args` prints, trimmed, or why it could not run or failed.
fn output(program: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!("{} ({})", out.status, stderr.trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The name the linker takes for a library file `llvm-config` names:
/// `libLLVM-22.so`, `libLLVM.so.22.1`, `libLLVM.dylib` and `libLLVMCore.a`
/// are `LLVM-22`, `LLVM`, `LLVM` and `LLVMCore`.
fn link_name(file: &str) -> &str {
    let stem = file.strip_prefix("lib").unwrap_or(file);
    if let Some(archive) = stem.strip_suffix(".a") {
        return archive;
    }
    [".so", ".dylib", ".dll", ".lib"]
        .iter()
        .find_map(|ext| stem.find(ext).map(|end| &stem[..end]))
        .unwrap_or(stem)
}

/// Stops the build with `message` (cargo shows a build script's output
/// when it fails).
fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1)
}

//! What the program the proc macro runs in is doing, read from its command
//! line. A proc macro runs inside the compiler, so `std::env::args()` is
//! rustc's command line as cargo wrote it (clippy-driver's, rustdoc's, or
//! rust-analyzer's proc-macro server's when they expand the crate); rustc's
//! `@file` arguments (one argument a line) are read in place.
//!
//! Two things are read from it (docs/guide.md, "Build time"):
//! - whether the crate is built with debug assertions, which selects
//!   `TILE_DEV_TARGETS` ([`Invocation::debug_assertions`]);
//! - whether the build produces code at all, without which the expansion
//!   leaves out the LLVM stages and the images ([`Invocation::produces_code`]).

/// The command line of the program running the macro.
#[derive(Clone, Debug)]
pub(crate) struct Invocation {
    /// The program, then its arguments.
    args: Vec<String>,
}

/// The kinds of rustc's `--emit` that are machine code or LLVM's forms of
/// it; `metadata`, `dep-info` and `mir` are not.
const CODE_EMITS: [&str; 5] = ["link", "obj", "asm", "llvm-bc", "llvm-ir"];

impl Invocation {
    /// The command line of this process.
    pub(crate) fn current() -> Invocation {
        Invocation::from_args(std::env::args())
    }

    /// The command line `args` (the program first), with every `@file`
    /// argument replaced by the file's lines; an `@file` that cannot be read
    /// stays as it is (rustc reports it).
    pub(crate) fn from_args(args: impl IntoIterator<Item = String>) -> Invocation {
        let mut expanded = Vec::new();
        for arg in args {
            match arg
                .strip_prefix('@')
                .and_then(|path| std::fs::read_to_string(path).ok())
            {
                Some(contents) => expanded.extend(contents.lines().map(str::to_string)),
                None => expanded.push(arg),
            }
        }
        Invocation { args: expanded }
    }

    /// The program's file name (`rustc`, `clippy-driver`, `rustdoc`, ...).
    fn program(&self) -> &str {
        let path = self.args.first().map_or("", String::as_str);
        path.rsplit(['/', '\\']).next().unwrap_or(path)
    }

    /// The values of the option `name` (`-C` or `--emit`) in order, in each
    /// of its spellings: `-C x`, `-Cx`, `--codegen x`, `--codegen=x` for
    /// `-C`; `--emit x`, `--emit=x` for `--emit`.
    fn values<'a>(&'a self, short: Option<&'a str>, long: &'a str) -> Vec<&'a str> {
        let mut out = Vec::new();
        let mut args = self.args.iter().skip(1).map(String::as_str);
        while let Some(arg) = args.next() {
            if Some(arg) == short || arg == long {
                // A dangling option is rustc's error to report.
                out.extend(args.next());
            } else if let Some(value) = arg
                .strip_prefix(long)
                .and_then(|rest| rest.strip_prefix('='))
                .or_else(|| short.and_then(|s| arg.strip_prefix(s)))
            {
                out.push(value);
            }
        }
        out
    }

    /// Whether the crate is compiled with debug assertions (a dev or test
    /// profile): `-C debug-assertions` if given, else on exactly when the
    /// optimization level is 0, rustc's default (`-O` is level 2). The last
    /// of each option wins, as in rustc.
    pub(crate) fn debug_assertions(&self) -> bool {
        let mut opt_level_zero = !self.args.iter().any(|a| a == "-O");
        let mut assertions: Option<bool> = None;
        for option in self.values(Some("-C"), "--codegen") {
            let (name, value) = option.split_once('=').unwrap_or((option, "yes"));
            match name {
                "opt-level" => opt_level_zero = value == "0",
                "debug-assertions" => {
                    assertions = Some(matches!(value, "y" | "yes" | "on" | "true"));
                }
                _ => {}
            }
        }
        assertions.unwrap_or(opt_level_zero)
    }

    /// Whether the program produces code from the crate, so that the
    /// kernels' images are needed. It does not when
    /// - it is rust-analyzer's proc-macro server (its expansions feed the
    ///   editor's analysis only);
    /// - it is rustdoc, documenting the crate or collecting its doctests (a
    ///   doctest is compiled by a rustc of its own, which produces code);
    /// - rustc is told to emit only kinds that are not code: `cargo check`
    ///   and `cargo clippy` pass `--emit=dep-info,metadata`.
    ///
    /// Anything else produces code, rustc without `--emit` included (it
    /// links by default): a wrong "yes" costs build time, a wrong "no" would
    /// leave the images out of a binary.
    pub(crate) fn produces_code(&self) -> bool {
        let program = self.program();
        if program.contains("rust-analyzer") || program.starts_with("rustdoc") {
            return false;
        }
        let emits = self.values(None, "--emit");
        emits.is_empty()
            || emits
                .iter()
                .flat_map(|list| list.split(','))
                .map(|kind| kind.split_once('=').map_or(kind, |(kind, _)| kind))
                .any(|kind| CODE_EMITS.contains(&kind.trim()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invocation(line: &str) -> Invocation {
        Invocation::from_args(line.split_whitespace().map(str::to_string))
    }

    fn dev(line: &str) -> bool {
        invocation(line).debug_assertions()
    }

    fn code(line: &str) -> bool {
        invocation(line).produces_code()
    }

    /// rustc's path as rustup's proxy runs it.
    const RUSTC: &str = "/root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin/rustc";

    #[test]
    fn dev_builds_are_told_from_rustcs_command_line() {
        // What cargo passes for the dev and release profiles.
        assert!(dev(
            "rustc --crate-name demo --edition=2021 -C embed-bitcode=no -C debuginfo=2"
        ));
        assert!(!dev(
            "rustc --crate-name demo -C opt-level=3 -C embed-bitcode=no"
        ));
        // A release profile with debug assertions, a dev one without.
        assert!(dev("rustc -C opt-level=3 -C debug-assertions=on"));
        assert!(!dev("rustc -Cdebug-assertions=off"));
        // The other spellings, and the last one winning.
        assert!(!dev("rustc -O"));
        assert!(!dev("rustc --codegen=opt-level=s"));
        assert!(dev("rustc -Copt-level=2 -Cdebug-assertions"));
        assert!(dev("rustc -C opt-level=3 --codegen opt-level=0"));
        // A dangling `-C` is rustc's error to report; here it changes nothing.
        assert!(dev("rustc -C"));
    }

    #[test]
    fn check_builds_produce_no_code() {
        // `cargo check` of a library, of its tests and of an example, as
        // cargo 1.95 wrote them (abridged: no paths of the build).
        for kind in ["--crate-type lib", "--test", "--crate-type bin"] {
            assert!(!code(&format!(
                "{RUSTC} --crate-name user --edition=2021 user/src/lib.rs --error-format=json {kind} --emit=dep-info,metadata -C embed-bitcode=no -C debuginfo=2 -C metadata=ab2ef7d39f8f13b1"
            )));
        }
        // `cargo clippy`: clippy-driver, then rustc's path, then its options.
        assert!(!code(&format!(
            "/root/.rustup/toolchains/stable/bin/clippy-driver {RUSTC} --crate-name user --crate-type lib --emit=dep-info,metadata -C embed-bitcode=no"
        )));
        // The other spelling, and a list of several `--emit`s.
        assert!(!code("rustc --emit metadata"));
        assert!(!code("rustc --emit=dep-info --emit=metadata=out.rmeta,mir"));
    }

    #[test]
    fn builds_produce_code() {
        // `cargo build` of a library (pipelined: metadata and link), of a
        // binary; `cargo test`; `cargo build --release`.
        assert!(code(&format!(
            "{RUSTC} --crate-name user user/src/lib.rs --crate-type lib --emit=dep-info,metadata,link -C embed-bitcode=no -C debuginfo=2"
        )));
        assert!(code(&format!(
            "{RUSTC} --crate-name ex user/examples/ex.rs --crate-type bin --emit=dep-info,link -C debuginfo=2"
        )));
        assert!(code(&format!(
            "{RUSTC} --crate-name user user/src/lib.rs --emit=dep-info,link --test -C debuginfo=2"
        )));
        assert!(code(&format!(
            "{RUSTC} --crate-name user --crate-type lib --emit=dep-info,metadata,link -C opt-level=3 -C strip=debuginfo"
        )));
        // A doctest, which rustdoc compiles with rustc and no `--emit`.
        assert!(code(&format!(
            "{RUSTC} @/tmp/rustdoctest8aeL7X/rustdoc-cfgs --edition 2021 --target x86_64-unknown-linux-gnu --crate-type=bin -o /tmp/rustdoctestbNMkgr/rust_out -"
        )));
        // Code in other forms, with a path.
        assert!(code("rustc --emit=obj"));
        assert!(code("rustc --emit metadata --emit asm=out.s"));
        assert!(code("rustc --emit=dep-info,llvm-ir"));
    }

    #[test]
    fn rustdoc_and_rust_analyzer_produce_no_code() {
        // `cargo doc` and `cargo test --doc`, which expand the crate in
        // rustdoc's own process.
        assert!(!code(
            "/root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin/rustdoc --edition=2021 --crate-type lib --crate-name user user/src/lib.rs -o /tmp/argprobe/target/doc"
        ));
        assert!(!code(
            "/root/.rustup/toolchains/stable/bin/rustdoc --edition=2021 --crate-type lib --crate-name user --test user/src/lib.rs --test-run-directory /tmp/user"
        ));
        // rust-analyzer's proc-macro server, from the sysroot or its own.
        assert!(!code(
            "/root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/libexec/rust-analyzer-proc-macro-srv"
        ));
        assert!(!code("/usr/bin/rust-analyzer proc-macro"));
    }

    #[test]
    fn argument_files_are_read_in_place() {
        let dir = std::env::temp_dir().join(format!("tile-invocation-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("args");
        std::fs::write(
            &file,
            "--crate-name\nuser\n--emit=dep-info,metadata\n-C\nopt-level=3\n",
        )
        .unwrap();
        let with_file = |rest: &str| invocation(&format!("rustc @{} {rest}", file.display()));
        assert!(!with_file("").produces_code());
        assert!(!with_file("").debug_assertions());
        assert!(with_file("-C opt-level=0").debug_assertions());
        // An `@file` that is not there is left for rustc to report.
        let missing = invocation("rustc @/nonexistent/tile-args --emit=metadata");
        assert_eq!(missing.args[1], "@/nonexistent/tile-args");
        assert!(!missing.produces_code());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

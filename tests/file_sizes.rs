//! No source file is over [`LIMIT`] lines: a file that grows past it owns more than one
//! thing and is split by responsibility.
//!
//! Counted: every `.rs` file under `crates/`, `src/`, `examples/` and `benches/` (build
//! scripts included), up to its test module (the first line that starts with `#[cfg(test)]`).
//! Not counted: files under a `tests/` directory (integration tests, trybuild cases and
//! their fixtures), which are lists of cases rather than code to read as one.

use std::fs;
use std::path::Path;

/// The most lines a source file may have before its test module.
const LIMIT: usize = 600;

/// The `.rs` files under `dir` that are not under a `tests/` directory, relative to
/// `root` with `/` separators.
fn sources(root: &Path, dir: &Path, files: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            if !["tests", "target", ".git", ".tools"].contains(&name.as_str()) {
                sources(root, &path, files);
            }
        } else if name.ends_with(".rs") {
            let relative = path.strip_prefix(root).expect("a file under the root");
            files.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// The lines of `text` before its test module.
fn code_lines(text: &str) -> usize {
    text.lines()
        .take_while(|line| !line.starts_with("#[cfg(test)]"))
        .count()
}

#[test]
fn code_lines_stop_at_the_test_module() {
    assert_eq!(code_lines("a\nb\n#[cfg(test)]\nmod tests {}\n"), 2);
    assert_eq!(code_lines("a\n    #[cfg(test)]\nb\n"), 3);
    assert_eq!(code_lines(""), 0);
}

#[test]
fn no_source_file_is_over_the_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["crates", "src", "examples", "benches"] {
        sources(root, &root.join(dir), &mut files);
    }
    assert!(
        files.iter().any(|f| f.ends_with("tile-ir/src/lib.rs")),
        "the walk found the crates' sources"
    );
    let mut over: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let text = fs::read_to_string(root.join(file)).ok()?;
            let lines = code_lines(&text);
            (lines > LIMIT).then(|| format!("{file}: {lines} lines"))
        })
        .collect();
    over.sort();
    assert!(
        over.is_empty(),
        "source files over {LIMIT} lines (before their test module); split each by responsibility:\n{}",
        over.join("\n")
    );
}

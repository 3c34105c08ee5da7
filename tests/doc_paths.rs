//! Every repository path that the documentation names exists.
//!
//! Read: `docs/*.md`, `README.md`, `scripts/gpu-bundle/README.md`, and the module header
//! (the `//!` lines a file starts with) of every `.rs` file under `crates/`, `src/`,
//! `examples/`, `benches/` and `tests/`. A path is a word made only of ASCII letters,
//! digits, `_`, `-`, `.` and `/` (whitespace, backticks, quotes, brackets, `,`, `;`, `:` and
//! non-ASCII characters end a word, so `src/lib.rs:12` names `src/lib.rs`; a word holding
//! anything else, such as `<target>`, `*`, `{a,b}` or `$DIR`, is a pattern, not a path) that
//! ends in one of [`EXTENSIONS`], or that ends in `/` and a code span (a directory; not a
//! division as in `N/(8·wn)`).
//!
//! A file exists when some file of the repository ends with the path, so the short forms
//! the docs use resolve (`lower/software_pipeline.rs` is `crates/tile-thread/src/lower/software_pipeline.rs`);
//! a directory, when some file lies under a directory ending with it.
//!
//! Not read as repository paths: URLs and domains (`docs.nvidia.com/...`), absolute paths
//! and paths that leave the repository (`/tmp/x`, `../x`), build and tool output (`target/`,
//! `.tools/`), fenced code blocks and ``double-backtick`` spans (the docs show user code and
//! program output in them), and the names in [`ELSEWHERE`].

use std::fs;
use std::path::Path;

/// The extensions of the files that docs and headers name.
const EXTENSIONS: &[&str] = &["rs", "md", "sh", "py", "toml", "txt", "json", "cpp", "snap"];

/// Names of files that are not the repository's: written when something runs, or in
/// another repository. A `*` stands for any text. Keep it short: a name here is never checked.
const ELSEWHERE: &[&str] = &[
    // `TILE_DUMP`'s files per kernel (docs/guide.md, docs/backends.md).
    "tile-ir*.txt",
    "thread*.txt",
    "*.ptxas.txt",
    // What scripts/gpu-bundle.sh puts in the bundle and its run.sh writes to the results.
    "reference/reference.py",
    "reference/triton_kernels.py",
    "results/*",
    "smoke/*",
    "check.txt",
    "check.json",
    "sanitizers.txt",
    "launch.txt",
    "generated.json",
    "bench.txt",
    // The autotuner's store on disk, one directory per format version.
    "v1/",
    // The upstream files that examples/corpus/ ports (Liger-Kernel, FlashAttention,
    // Triton's tutorials, vLLM, SGLang).
    "liger_kernel/*",
    "flash_attn/*",
    "python/tutorials/*",
    "vllm/*",
    "python/sglang/*",
];

/// Whether `word` matches `pattern`, where one `*` stands for any text.
fn matches(pattern: &str, word: &str) -> bool {
    match pattern.split_once('*') {
        Some((head, tail)) => {
            word.len() >= head.len() + tail.len() && word.starts_with(head) && word.ends_with(tail)
        }
        None => word == pattern,
    }
}

/// Every file under `dir`, relative to `root` with `/` separators, leaving out Git's
/// store, the installed tools (`.tools`) and build output (`target`).
fn walk(root: &Path, dir: &Path, files: &mut Vec<String>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        // The build's `target` is the root's; a module may be named `target` too.
        let skipped =
            [".git", ".tools"].contains(&name.as_str()) || (dir == root && name == "target");
        if is_dir && !skipped {
            walk(root, &path, files);
        } else if !is_dir {
            let relative = path.strip_prefix(root).expect("a file under the root");
            files.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// The repository path `word` names, if it names one (the rules of the module doc);
/// `dir_allowed`: whether it may name a directory (it ends a code span).
fn repo_path(word: &str, dir_allowed: bool) -> Option<&str> {
    let word = word.trim_end_matches('.');
    let word = word.strip_prefix("./").unwrap_or(word);
    let allowed = |c: char| c.is_ascii_alphanumeric() || "_-./".contains(c);
    if word.is_empty() || !word.chars().all(allowed) || word.contains("//") {
        return None;
    }
    let first = word.split('/').next().unwrap_or("");
    let domain = word.contains('/') && first.trim_start_matches('.').contains('.');
    let outside = ["/", "../", "target/", ".tools/"]
        .iter()
        .any(|p| word.starts_with(p));
    let hidden = ELSEWHERE.iter().any(|p| matches(p, word));
    if domain || outside || hidden {
        return None;
    }
    let file = word.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && !stem.ends_with('/') && EXTENSIONS.contains(&ext)
    });
    let dir = dir_allowed && word.len() > 1 && word.ends_with('/');
    (file || dir).then_some(word)
}

/// Where the scan of one file stands.
#[derive(Default)]
struct Scan {
    /// Inside a fenced code block.
    fence: bool,
    /// Inside a `code span`.
    span: bool,
    /// Inside a ``double-backtick`` span.
    quote: bool,
}

impl Scan {
    /// The paths named on one line of Markdown text; code spans may continue over lines and
    /// end with their paragraph.
    fn line(&mut self, text: &str) -> Vec<String> {
        let trimmed = text.trim();
        if trimmed.starts_with("```") {
            self.fence = !self.fence;
            return Vec::new();
        }
        if self.fence || trimmed.is_empty() {
            (self.span, self.quote) = (false, false);
            return Vec::new();
        }
        let mut paths = Vec::new();
        let mut word = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            let separator = c.is_whitespace() || !c.is_ascii() || "`'\"(),;:[]".contains(c);
            if !separator {
                word.push(c);
                continue;
            }
            if !self.quote {
                let dir_allowed = self.span && c == '`';
                paths.extend(repo_path(&word, dir_allowed).map(str::to_string));
            }
            word.clear();
            if c == '`' && chars.peek() == Some(&'`') {
                chars.next();
                self.quote = !self.quote;
            } else if c == '`' && !self.quote {
                self.span = !self.span;
            }
        }
        if !self.quote {
            paths.extend(repo_path(&word, false).map(str::to_string));
        }
        paths
    }
}

/// Whether `path` names a file or directory of `files`.
fn exists(path: &str, files: &[String]) -> bool {
    let suffix = format!("/{path}");
    files.iter().any(|f| {
        let f = format!("/{f}");
        match path.ends_with('/') {
            true => f.contains(&suffix),
            false => f.ends_with(&suffix),
        }
    })
}

/// Every path named in the docs and module headers names a file or directory of the
/// repository; the failure lists each one that does not, with the file and line naming it.
#[test]
fn named_paths_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    walk(root, root, &mut files);
    files.sort();

    let is_doc = |f: &&String| {
        let in_docs = f.starts_with("docs/") && f.ends_with(".md") && f.matches('/').count() == 1;
        in_docs || *f == "README.md" || *f == "scripts/gpu-bundle/README.md"
    };
    let is_source = |f: &&String| {
        let roots = ["crates/", "src/", "examples/", "benches/", "tests/"];
        f.ends_with(".rs") && roots.iter().any(|r| f.starts_with(r))
    };

    let mut missing = Vec::new();
    let mut checked = 0;
    for name in files.iter().filter(|f| is_doc(f) || is_source(f)) {
        let text =
            fs::read_to_string(root.join(name)).unwrap_or_else(|e| panic!("reading {name}: {e}"));
        let markdown = name.ends_with(".md");
        let mut scan = Scan::default();
        for (number, line) in text.lines().enumerate() {
            let line = match (markdown, line.trim_start().strip_prefix("//!")) {
                (true, _) => line,
                (false, Some(doc)) => doc,
                (false, None) if line.trim().is_empty() => continue,
                (false, None) => break,
            };
            for path in scan.line(line) {
                checked += 1;
                if !exists(&path, &files) {
                    missing.push(format!("  {name}:{}: {path}", number + 1));
                }
            }
        }
    }
    assert!(
        checked > 500,
        "only {checked} paths found: is the scan broken?"
    );
    assert!(
        missing.is_empty(),
        "{} of {checked} paths named in docs and module headers name no file of the \
         repository (fix the path, or if a program writes it at run time, add it to \
         ELSEWHERE in tests/doc_paths.rs):\n{}",
        missing.len(),
        missing.join("\n")
    );
}

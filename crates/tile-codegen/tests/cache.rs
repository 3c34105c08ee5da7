//! The kernel cache through the pipeline: a second compilation of the same
//! kernel takes every target's output from the cache, and gets what a
//! compilation gives; an edited kernel, a changed option or a dump misses;
//! a damaged entry is rebuilt, never used; concurrent compilations share
//! the cache; the cache stays within its bound; a cache that cannot be
//! written is a note, not a failed build. Targets compiled concurrently
//! give what they give one at a time.

use std::fs;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use tile_abi::HostIsa;
use tile_codegen::cache::{Cache, CacheError};
use tile_codegen::driver::{self, Compiled, Options};
use tile_codegen::{CodegenOptions, Gfx, Sm, Target};
use tile_ir::{Function, Location};

const TARGETS: [Target; 3] = [
    Target::Nvptx(Sm::Sm80),
    Target::Amdgpu(Gfx::Gfx90a),
    Target::Host(HostIsa::X86_64),
];

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tile-cache-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    dir
}

fn options(cache: Option<&Cache>) -> Options {
    Options {
        targets: TARGETS.to_vec(),
        num_warps: 4,
        codegen: CodegenOptions::default(),
        dump_dir: None,
        cache: cache.cloned(),
        max_threads: None,
        target_warps: Vec::new(),
        target_stages: Vec::new(),
        num_stages: None,
    }
}

fn compile(mut func: Function, options: &Options) -> Compiled {
    driver::compile(&mut func, "BLOCK=256", options).unwrap_or_else(|e| panic!("{e}"))
}

fn vector_add() -> Function {
    tile_ir::samples::vector_add(256).unwrap()
}

/// What a compilation gives the kernel, without how it was obtained.
fn products(compiled: &Compiled) -> Compiled {
    Compiled {
        cached: Vec::new(),
        cache_notes: Vec::new(),
        ..compiled.clone()
    }
}

/// The cache's entry files.
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for shard in fs::read_dir(dir.join("v1/entries")).unwrap() {
        for file in fs::read_dir(shard.unwrap().path()).unwrap() {
            files.push(file.unwrap().path());
        }
    }
    files.sort();
    files
}

#[test]
fn a_second_compilation_hits_every_target_and_gives_the_same_images() {
    let dir = scratch("hit");
    let cache = Cache::open(&dir, 1 << 30).unwrap();
    let fresh = compile(vector_add(), &options(None));
    let first = compile(vector_add(), &options(Some(&cache)));
    assert!(first.cached.is_empty() && first.cache_notes.is_empty());
    assert_eq!(entries(&dir).len(), TARGETS.len());
    let second = compile(vector_add(), &options(Some(&cache)));
    assert_eq!(second.cached, TARGETS);
    assert!(second.cache_notes.is_empty(), "{:?}", second.cache_notes);
    assert_eq!(products(&first), fresh);
    assert_eq!(products(&second), fresh);
    assert!(!fresh.bounds_checks.is_empty() || !fresh.host_checks.is_empty());
    // The texts of the stages come from the cache with the images: a
    // thread-level program for each GPU target, the assembly of the AMD one.
    let texts = &second.texts;
    assert!(texts[0].thread_program.is_some() && texts[1].thread_program.is_some());
    assert!(texts[1]
        .amdgpu_assembly
        .as_ref()
        .unwrap()
        .contains("s_endpgm"));
    assert!(texts[0].amdgpu_assembly.is_none() && texts[2].thread_program.is_none());
    let _ = fs::remove_dir_all(&dir);
}

/// `vector_add` with a location on every op, its lines from `first_line`
/// on (the kernel moved in its file when `first_line` changes).
fn located_vector_add(first_line: u32) -> Function {
    let mut func = vector_add();
    let mut ops = Vec::new();
    func.walk(&mut |op| ops.push(op));
    for (line, op) in (first_line..).zip(ops) {
        func.ops[op].loc = Some(Location {
            file: "src/kernels.rs".into(),
            line,
            column: 5,
            snippet: Some("expr(..)".into()),
        });
    }
    func
}

#[test]
fn a_moved_kernel_hits_and_its_checks_name_its_new_lines() {
    let dir = scratch("moved");
    let cache = Cache::open(&dir, 1 << 30).unwrap();
    let first = compile(located_vector_add(10), &options(Some(&cache)));
    assert!(first.cached.is_empty());
    let moved = compile(located_vector_add(20), &options(Some(&cache)));
    assert_eq!(moved.cached, TARGETS, "{:?}", moved.cache_notes);
    let checks: Vec<String> = moved
        .bounds_checks
        .iter()
        .cloned()
        .chain(moved.host_checks.iter().map(|c| c.op.to_string()))
        .collect();
    assert!(!checks.is_empty());
    for check in &checks {
        assert!(
            check.starts_with("`expr(..)` at src/kernels.rs:2"),
            "{check}"
        );
    }
    assert_eq!(
        moved.images,
        compile(vector_add(), &options(None)).images,
        "locations change no image"
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn an_edited_kernel_or_a_changed_option_misses() {
    let dir = scratch("miss");
    let cache = Cache::open(&dir, 1 << 30).unwrap();
    let base = options(Some(&cache));
    compile(vector_add(), &base);
    // The kernel edited: another block size is another IR.
    let edited = compile(tile_ir::samples::vector_add(512).unwrap(), &base);
    assert!(edited.cached.is_empty());
    // Each option that changes code.
    let fast = Options {
        codegen: CodegenOptions {
            fast_math: true,
            ..CodegenOptions::default()
        },
        ..base.clone()
    };
    assert!(compile(vector_add(), &fast).cached.is_empty());
    let warps = Options {
        num_warps: 8,
        ..base.clone()
    };
    // The host's code does not depend on warps: its entry hits.
    assert_eq!(compile(vector_add(), &warps).cached, [TARGETS[2]]);
    // Nor on the stages of pipelined loops, which the GPU targets' do.
    let stages = Options {
        num_stages: Some(2),
        ..base.clone()
    };
    assert_eq!(compile(vector_add(), &stages).cached, [TARGETS[2]]);
    // A target added to the list: the others hit, it misses.
    let more = Options {
        targets: [TARGETS.as_slice(), &[Target::Nvptx(Sm::Sm90)]].concat(),
        ..base.clone()
    };
    let added = compile(vector_add(), &more);
    assert_eq!(added.cached, TARGETS);
    // And the original still hits after all of this.
    assert_eq!(compile(vector_add(), &base).cached, TARGETS);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn dumps_are_entries_of_their_own_and_are_written_on_a_hit() {
    let dir = scratch("dumps");
    let cache = Cache::open(&dir.join("cache"), 1 << 30).unwrap();
    let dumped = |to: &str| Options {
        dump_dir: Some(dir.join(to)),
        ..options(Some(&cache))
    };
    compile(vector_add(), &options(Some(&cache)));
    // Entries without dump files do not serve a dump.
    let first = compile(vector_add(), &dumped("first"));
    assert!(first.cached.is_empty());
    let second = compile(vector_add(), &dumped("second"));
    assert_eq!(second.cached, TARGETS);
    let files = |to: &str| {
        let stage = dir.join(to).join("vector_add").join("BLOCK=256");
        let mut names: Vec<String> = fs::read_dir(&stage)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
            .into_iter()
            .map(|n| {
                let contents = fs::read(stage.join(&n)).unwrap();
                (n, contents)
            })
            .collect::<Vec<_>>()
    };
    let (written, served) = (files("first"), files("second"));
    assert_eq!(written, served);
    let names: Vec<&str> = served.iter().map(|(n, _)| n.as_str()).collect();
    for name in [
        "tile-ir.opt.txt",
        "thread.mma_sync.txt",
        "thread.txt",
        "sm_80.ptx",
        "gfx90a.s",
        "x86_64.s",
        "host-plan.txt",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_damaged_entry_is_rebuilt_never_used() {
    let dir = scratch("damaged");
    let cache = Cache::open(&dir, 1 << 30).unwrap();
    let good = products(&compile(vector_add(), &options(Some(&cache))));
    // One entry with a flipped bit, one truncated, one emptied.
    let files = entries(&dir);
    let mut flipped = fs::read(&files[0]).unwrap();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 1;
    fs::write(&files[0], flipped).unwrap();
    let truncated = fs::read(&files[1]).unwrap();
    fs::write(&files[1], &truncated[..truncated.len() - 100]).unwrap();
    fs::write(&files[2], b"").unwrap();
    let rebuilt = compile(vector_add(), &options(Some(&cache)));
    assert!(rebuilt.cached.is_empty(), "{:?}", rebuilt.cached);
    assert_eq!(products(&rebuilt), good);
    assert_eq!(rebuilt.cache_notes.len(), 3, "{:?}", rebuilt.cache_notes);
    for note in &rebuilt.cache_notes {
        assert!(note.starts_with("the kernel cache entry "), "{note}");
        assert!(note.ends_with("; it was rebuilt"), "{note}");
    }
    assert!(rebuilt.cache_notes.iter().any(|n| n.contains("checksum")));
    assert!(rebuilt.cache_notes.iter().any(|n| n.contains("truncated")));
    // The rebuilt entries replaced the damaged ones.
    let again = compile(vector_add(), &options(Some(&cache)));
    assert_eq!(again.cached, TARGETS);
    assert_eq!(products(&again), good);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn concurrent_compilations_share_the_cache() {
    let dir = scratch("concurrent");
    let cache = Cache::open(&dir, 1 << 30).unwrap();
    let want = products(&compile(vector_add(), &options(None)));
    // Eight compilations of the same kernel at once, each storing every
    // target's entry (or finding another's), then as many more.
    for _ in 0..2 {
        std::thread::scope(|scope| {
            let runs: Vec<_> = (0..8)
                .map(|_| scope.spawn(|| compile(vector_add(), &options(Some(&cache)))))
                .collect();
            for run in runs {
                let compiled = run.join().unwrap();
                assert!(
                    compiled.cache_notes.is_empty(),
                    "{:?}",
                    compiled.cache_notes
                );
                assert_eq!(products(&compiled), want);
            }
        });
    }
    assert_eq!(entries(&dir).len(), TARGETS.len(), "no temporary file left");
    assert_eq!(
        compile(vector_add(), &options(Some(&cache))).cached,
        TARGETS
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn the_cache_keeps_within_its_bound_dropping_the_least_recently_used() {
    let dir = scratch("bound");
    let sizes = |dir: &Path| -> Vec<u64> {
        entries(dir)
            .iter()
            .map(|f| fs::metadata(f).unwrap().len())
            .collect()
    };
    // Room for one kernel's entries and a little more.
    let probe = Cache::open(&dir.join("probe"), 1 << 30).unwrap();
    compile(vector_add(), &options(Some(&probe)));
    let one_kernel: u64 = sizes(&dir.join("probe")).iter().sum();
    let bound = one_kernel + one_kernel / 2;
    let cache = Cache::open(&dir.join("bounded"), bound).unwrap();
    compile(vector_add(), &options(Some(&cache)));
    std::thread::sleep(std::time::Duration::from_millis(20));
    compile(
        tile_ir::samples::vector_add(512).unwrap(),
        &options(Some(&cache)),
    );
    let total: u64 = sizes(&dir.join("bounded")).iter().sum();
    assert!(total <= bound, "{total} > {bound}");
    // The newer kernel's entries stayed; the older kernel lost some.
    let newer = compile(
        tile_ir::samples::vector_add(512).unwrap(),
        &options(Some(&cache)),
    );
    assert_eq!(newer.cached, TARGETS);
    let older = compile(vector_add(), &options(Some(&cache)));
    assert!(older.cached.len() < TARGETS.len(), "{:?}", older.cached);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_cache_that_cannot_be_written_is_a_note_not_a_failed_build() {
    let dir = scratch("unwritable");
    let cache = Cache::open(&dir, 1 << 30).unwrap();
    // The entries' directory replaced by a file after the cache opened.
    let entries = dir.join("v1/entries");
    fs::remove_dir_all(&entries).unwrap();
    fs::write(&entries, b"not a directory").unwrap();
    let compiled = compile(vector_add(), &options(Some(&cache)));
    assert_eq!(
        products(&compiled),
        products(&compile(vector_add(), &options(None)))
    );
    assert_eq!(
        compiled.cache_notes.len(),
        TARGETS.len(),
        "{:?}",
        compiled.cache_notes
    );
    assert!(compiled.cache_notes[0]
        .starts_with("the kernel cache could not store an entry: cannot write"));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_cache_that_cannot_be_made_says_where_and_that_another_directory_may_help() {
    let dir = scratch("blocked");
    fs::create_dir_all(&dir).unwrap();
    // A file where the cache's directory would be.
    let file = dir.join("cache");
    fs::write(&file, b"not a directory").unwrap();
    let error = Cache::open(&file, 1 << 30).unwrap_err();
    let CacheError::Io { action, path, .. } = &error else {
        panic!("expected an I/O error, found {error:?}");
    };
    assert_eq!((*action, path), ("create", &file.join("v1/entries")));
    assert!(error.another_dir_may_help());
    assert!(
        error
            .to_string()
            .starts_with(&format!("cannot create {}", path.display())),
        "{error}"
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn targets_compiled_concurrently_give_what_they_give_one_at_a_time() {
    let all = Options {
        targets: [
            Target::Nvptx(Sm::Sm80),
            Target::Nvptx(Sm::Sm90),
            Target::Amdgpu(Gfx::Gfx90a),
            Target::Amdgpu(Gfx::Gfx1100),
            Target::Host(HostIsa::X86_64V3),
            Target::Host(HostIsa::X86_64),
        ]
        .to_vec(),
        ..options(None)
    };
    let matmul = || tile_ir::samples::matmul(32, 32, 16, tile_ir::DType::F16).unwrap();
    let one = Options {
        max_threads: Some(NonZeroUsize::MIN),
        ..all.clone()
    };
    let sequential = compile(matmul(), &one);
    let concurrent = compile(matmul(), &all);
    assert_eq!(concurrent, sequential);
    let order: Vec<Target> = concurrent.images.iter().map(|i| i.target).collect();
    assert_eq!(
        order, all.targets,
        "GPU images first, then host levels, in order"
    );
}

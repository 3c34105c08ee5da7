//! docs/layouts.md and the code agree: every table in the doc is preceded
//! by a marker `<!-- table: op | arg | … -->`, and the block after it must
//! be exactly what the code prints for that expression. Run with
//! `LAYOUT_DOCS_BLESS=1` to rewrite the blocks from the code.

use std::path::PathBuf;

use tile_ir::layout::*;

const MARK: &str = "<!-- table: ";

fn doc_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/layouts.md")
}

/// Evaluates `op | arg | …` and draws the result.
fn render(expr: &str) -> Result<String> {
    let parts: Vec<&str> = expr.split('|').map(str::trim).collect();
    let layout = |k: usize| parts[k].parse::<Layout>();
    let tiler = |k: usize| parts[k].parse::<Tiler>();
    let int = |k: usize| parts[k].parse::<i64>().expect("an integer argument");
    let result = match parts[0] {
        "layout" => layout(1)?,
        "coalesce" => coalesce(&layout(1)?),
        "composition" => composition(&layout(1)?, &layout(2)?)?,
        "composition_tiler" => composition_tiler(&layout(1)?, &tiler(2)?)?,
        "pair_with_complement" => {
            let a = layout(1)?;
            let r = complement(&a, int(2))?;
            Layout::concat(&[a, r])
        }
        "logical_divide" => logical_divide(&layout(1)?, &tiler(2)?)?,
        "zipped_divide" => zipped_divide(&layout(1)?, &tiler(2)?)?,
        "logical_product" => logical_product(&layout(1)?, &tiler(2)?)?,
        "blocked_product" => blocked_product(&layout(1)?, &layout(2)?)?,
        "raked_product" => raked_product(&layout(1)?, &layout(2)?)?,
        "tile_to_shape" => tile_to_shape(&layout(1)?, &parts[2].parse()?, None)?,
        "right_inverse" => right_inverse(&layout(1)?)?,
        "left_inverse" => left_inverse(&layout(1)?)?,
        "upcast" => upcast(&layout(1)?, int(2))?,
        "downcast" => downcast(&layout(1)?, int(2))?,
        "swizzle" => return parts[1].parse::<ComposedLayout>()?.to_table(),
        other => panic!("unknown operation `{other}` in docs/layouts.md"),
    };
    result.to_table()
}

/// The doc with every marked block replaced by the code's output.
fn regenerate(doc: &str) -> String {
    let mut out = String::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        let Some(expr) = line.strip_prefix(MARK).and_then(|l| l.strip_suffix(" -->")) else {
            continue;
        };
        let fence = lines.next().expect("a ```text block after the marker");
        assert_eq!(fence, "```text", "after `{line}`");
        for old in lines.by_ref() {
            if old == "```" {
                break;
            }
        }
        let table = render(expr).unwrap_or_else(|e| panic!("`{expr}`: {e}"));
        out.push_str(&format!("```text\n{table}```\n"));
    }
    out
}

#[test]
fn doc_tables_match_the_code() {
    let doc = std::fs::read_to_string(doc_path()).expect("docs/layouts.md");
    let fresh = regenerate(&doc);
    if std::env::var_os("LAYOUT_DOCS_BLESS").is_some() {
        std::fs::write(doc_path(), &fresh).expect("write docs/layouts.md");
        return;
    }
    let markers = doc.lines().filter(|l| l.starts_with(MARK)).count();
    assert!(markers >= 15, "only {markers} tables in docs/layouts.md");
    for (k, (have, want)) in doc.lines().zip(fresh.lines()).enumerate() {
        assert_eq!(
            have,
            want,
            "docs/layouts.md line {}: rerun with LAYOUT_DOCS_BLESS=1",
            k + 1
        );
    }
    assert_eq!(doc, fresh);
}

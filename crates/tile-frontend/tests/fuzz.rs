//! Mutated kernels (token deletions, swaps, duplications and insertions on
//! the examples' bodies and attributes) never make the front end panic:
//! each is parsed, lowered and expanded, and whatever happens must be an
//! `Ok` or a spanned error.

mod common;

use common::EXAMPLES;
use proc_macro2::{TokenStream, TokenTree};
use std::panic::{catch_unwind, AssertUnwindSafe};
use tile_frontend::attr::EnvTargets;
use tile_frontend::expand::{tile_kernel, ExpandOptions};

/// Tokens inserted by mutations: operators, literals at the edges of their
/// ranges, names the examples use, keywords, and delimiters.
const VOCAB: &[&str] = &[
    "+",
    "-",
    "*",
    "/",
    "%",
    "<",
    "==",
    "&&",
    "!",
    ".",
    ",",
    ";",
    "=",
    "..",
    "0",
    "1",
    "-1",
    "2.5",
    "0.0",
    "true",
    "170141183460469231731687303715884105727",
    "1e308",
    "300u8",
    "1.5f16",
    "BLOCK",
    "BM",
    "x",
    "out",
    "pid",
    "acc",
    "t",
    "let",
    "mut",
    "for",
    "in",
    "if",
    "else",
    "as",
    "f16",
    "i64",
    "sum",
    "exp",
    "max_along",
    "transpose",
    "dot",
    "load_masked",
    "store",
    "program_id",
    "partition_view",
    "zeros",
    "::",
    "<",
    ">",
    "cast",
    "step_by",
    "select",
    "reshape",
    "pad",
    "slice",
    "return",
    "while",
    "|",
    "&",
];

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The source as flat token texts, groups as separate delimiters.
fn flatten(ts: TokenStream, out: &mut Vec<String>, joint: &mut bool) {
    for tt in ts {
        match tt {
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    proc_macro2::Delimiter::Parenthesis => ("(", ")"),
                    proc_macro2::Delimiter::Bracket => ("[", "]"),
                    proc_macro2::Delimiter::Brace => ("{", "}"),
                    proc_macro2::Delimiter::None => ("", ""),
                };
                out.push(open.into());
                *joint = false;
                flatten(g.stream(), out, joint);
                out.push(close.into());
            }
            TokenTree::Punct(p) => {
                // Joint punctuation (`::`, `..`, `->`, `+=`) stays one token.
                match out.last_mut().filter(|_| *joint) {
                    Some(last) => last.push(p.as_char()),
                    None => out.push(p.as_char().to_string()),
                }
                *joint = p.spacing() == proc_macro2::Spacing::Joint;
                continue;
            }
            other => out.push(other.to_string()),
        }
        *joint = false;
    }
}

fn is_delimiter(t: &str) -> bool {
    matches!(t, "(" | ")" | "[" | "]" | "{" | "}")
}

/// Applies one to three mutations; delimiters are kept (mostly) balanced so
/// that most mutants still parse and reach the lowering.
fn mutate(tokens: &[String], rng: &mut Rng) -> String {
    let mut t = tokens.to_vec();
    for _ in 0..1 + rng.below(3) {
        let mut i = rng.below(t.len());
        for _ in 0..8 {
            if t.get(i).is_some_and(|x| !is_delimiter(x)) || rng.below(20) == 0 {
                break;
            }
            i = rng.below(t.len());
        }
        match rng.below(4) {
            0 if !t.is_empty() => {
                t.remove(i);
            }
            1 if t.len() > 1 => {
                let j = rng.below(t.len());
                if !is_delimiter(&t[j]) {
                    t.swap(i, j);
                }
            }
            2 if !t.is_empty() => {
                let dup = t[i].clone();
                t.insert(i, dup);
            }
            _ => t.insert(i, VOCAB[rng.below(VOCAB.len())].to_string()),
        }
    }
    t.join(" ")
}

fn run_one(attr: &str, src: &str) {
    let (Ok(attr), Ok(item)) = (attr.parse::<TokenStream>(), src.parse::<TokenStream>()) else {
        return;
    };
    let result = catch_unwind(AssertUnwindSafe(|| {
        // The front end on every mutant; device code (slow to build) on the
        // host target only, which skips the GPU back end.
        let options = ExpandOptions {
            env_targets: Some(EnvTargets::tile_targets("host")),
            ..ExpandOptions::default()
        };
        let _ = tile_kernel(attr.clone(), item.clone(), &options);
        if let Ok(f) = syn::parse2::<syn::ItemFn>(item.clone()) {
            let _ = tile_frontend::translate_kernel(attr.clone(), &f);
        }
    }));
    assert!(
        result.is_ok(),
        "the front end panicked on\n#[tile_kernel({attr})]\n{src}"
    );
}

#[test]
fn mutated_kernels_never_panic() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut parsed = 0;
    for (_, attr, src) in EXAMPLES {
        let mut body = Vec::new();
        flatten(src.parse().expect("example lexes"), &mut body, &mut false);
        let mut head = Vec::new();
        flatten(
            attr.parse().expect("attribute lexes"),
            &mut head,
            &mut false,
        );
        assert!(
            syn::parse_str::<syn::ItemFn>(&body.join(" ")).is_ok(),
            "flattening keeps the example parseable"
        );
        for round in 0..600 {
            let (a, s) = if round % 10 == 0 {
                (mutate(&head, &mut rng), src.to_string())
            } else {
                (attr.to_string(), mutate(&body, &mut rng))
            };
            if syn::parse_str::<syn::ItemFn>(&s).is_ok() {
                parsed += 1;
            }
            run_one(&a, &s);
        }
    }
    // Enough mutants must reach the lowering, or the test proves little.
    assert!(parsed > 400, "only {parsed} mutants parsed as functions");
}

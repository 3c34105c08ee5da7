//! The parser never panics: every prefix of every test program, and many
//! random mutations of them, either parse or return an error. Whatever parses
//! prints to text that parses back to the same text.

mod text_programs;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::panic::{catch_unwind, AssertUnwindSafe};
use tile_ir::text::parse_function;

/// Parses `src`; when it parses, checks print → parse → print. Panics with
/// the input when anything panics.
fn check(src: &str) {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        if let Ok(func) = parse_function(src) {
            let printed = func.to_string();
            match parse_function(&printed) {
                Ok(again) => assert_eq!(again.to_string(), printed),
                Err(e) => panic!("the printed form does not parse: {e}\n{printed}"),
            }
        }
    }));
    if outcome.is_err() {
        panic!("panicked on input:\n{src:?}");
    }
}

/// Every prefix of every hand-written program that does not split a word, a
/// number or a run of spaces (splits inside those give other words or the
/// same tokens, which the mutations cover). The generated program repeats
/// the same few line shapes, so only its first lines are cut.
#[test]
fn every_prefix_parses_or_fails() {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'.';
    let same_class = |a: u8, b: u8| (word(a) && word(b)) || (a == b' ' && b == b' ');
    for (name, src) in text_programs::all() {
        let src = match name {
            "every_variant" => src.lines().take(12).collect::<Vec<_>>().join("\n"),
            _ => src,
        };
        let bytes = src.as_bytes();
        for end in 0..=bytes.len() {
            let inside = end > 0 && end < bytes.len() && same_class(bytes[end - 1], bytes[end]);
            if !inside {
                check(src.get(..end).unwrap_or_default());
            }
        }
    }
}

/// Characters that matter to the lexer, to make mutations likely to reach
/// deep into the grammar.
const ALPHABET: &[u8] = b"%@:,=-x[](){}<>\n 0123456789.eafikntuv_/$";

fn mutate(rng: &mut SmallRng, src: &str, lines: &[&str], words: &[&str]) -> String {
    let mut bytes = src.as_bytes().to_vec();
    for _ in 0..rng.gen_range(1..4) {
        if bytes.is_empty() {
            break;
        }
        let at = rng.gen_range(0..bytes.len());
        match rng.gen_range(0..8) {
            0 => bytes[at] = ALPHABET[rng.gen_range(0..ALPHABET.len())],
            1 => bytes[at] = rng.gen(),
            2 => {
                bytes.remove(at);
            }
            3 => bytes.insert(at, ALPHABET[rng.gen_range(0..ALPHABET.len())]),
            4 => {
                // Duplicate a short span (repeats tokens, names, braces).
                let end = (at + rng.gen_range(1..12)).min(bytes.len());
                let span = bytes[at..end].to_vec();
                bytes.splice(at..at, span);
            }
            5 | 6 => {
                // Replace the word around `at` with a word of some program
                // (another op, dtype, keyword, number or name).
                let is_word = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
                let start = bytes[..at]
                    .iter()
                    .rposition(|b| !is_word(b))
                    .map_or(0, |i| i + 1);
                let end = bytes[at..]
                    .iter()
                    .position(|b| !is_word(b))
                    .map_or(bytes.len(), |i| at + i);
                let word = words[rng.gen_range(0..words.len())];
                bytes.splice(start..end, word.bytes());
            }
            _ => {
                // Splice in a line of another program.
                let line = lines[rng.gen_range(0..lines.len())];
                bytes.splice(at..at, format!("\n{line}\n").into_bytes());
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[test]
fn random_mutations_parse_or_fail() {
    let programs = text_programs::all();
    let lines: Vec<&str> = programs.iter().flat_map(|(_, src)| src.lines()).collect();
    let mut words: Vec<&str> = programs
        .iter()
        .flat_map(|(_, src)| src.split(|c: char| !c.is_ascii_alphanumeric() && c != '_'))
        .filter(|w| !w.is_empty())
        .collect();
    words.sort_unstable();
    words.dedup();
    let mut rng = SmallRng::seed_from_u64(0x7e47);
    for (_, src) in &programs {
        for _ in 0..150 {
            check(&mutate(&mut rng, src, &lines, &words));
        }
    }
}

#[test]
fn arbitrary_bytes_parse_or_fail() {
    let mut rng = SmallRng::seed_from_u64(1);
    for _ in 0..2000 {
        let len = rng.gen_range(0..64);
        let bytes: Vec<u8> = (0..len)
            .map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())])
            .collect();
        check(&format!(
            "kernel @k(%a: i32) {{\n{}",
            String::from_utf8_lossy(&bytes)
        ));
    }
}

//! The source location the front end gives each op it builds: the file,
//! line and column of the Rust expression that made it, and a short snippet
//! of that expression (`x.load(..)`), for run-time errors.
//!
//! Locations come from the spans of the kernel's tokens. Inside the
//! compiler (the `#[tile_kernel]` macro) a span knows its file and
//! position; tokens parsed from a string (the front end called as a library,
//! as its tests do) have no file, and their ops get no location.

use proc_macro2::{Delimiter, Spacing, Span, TokenStream, TokenTree};
use quote::ToTokens;
use tile_ir::Location;

/// The longest snippet kept, in characters; a longer one is cut and ends in
/// `..`.
const MAX_SNIPPET: usize = 60;

/// The location of `node`: where its method name is for a method call (the
/// `load` of `partition_view(x, [B]).load(pid)`), where it starts otherwise;
/// `None` when its tokens have no file.
pub(crate) fn location(node: &dyn ToTokens) -> Option<Location> {
    let tokens: Vec<TokenTree> = node.to_token_stream().into_iter().collect();
    let span = method_span(&tokens).or_else(|| tokens.first().map(TokenTree::span))?;
    let (file, line, column) = position(span)?;
    Some(Location {
        file,
        line,
        column,
        snippet: Some(snippet(&tokens)),
    })
}

/// The file, line (from 1) and column (from 1) of `span`, if it has a file.
pub(crate) fn position(span: Span) -> Option<(String, u32, u32)> {
    let file = span.file();
    let start = span.start();
    if file.is_empty() || file.starts_with('<') || start.line == 0 {
        return None;
    }
    let line = u32::try_from(start.line).ok()?;
    let column = u32::try_from(start.column).ok()?.saturating_add(1);
    Some((file, line, column))
}

/// The span of the method name when `tokens` are a method call (`recv.name(..)`,
/// `recv.name::<T>(..)`), not merely end with one (`a + b.name(..)`).
fn method_span(tokens: &[TokenTree]) -> Option<Span> {
    let stream: TokenStream = tokens.iter().cloned().collect();
    syn::parse2::<syn::ExprMethodCall>(stream)
        .ok()
        .map(|call| call.method.span())
}

/// `tokens` as short Rust text on one line: the arguments of calls and the
/// contents of brackets and blocks are elided (`partition_view(..).load(..)`,
/// `a + b`, `zeros::<f32>(..)`), and the text is cut at [`MAX_SNIPPET`].
pub(crate) fn snippet(tokens: &[TokenTree]) -> String {
    let mut out = Snippet::default();
    for token in tokens {
        out.token(token);
    }
    cut(out.text)
}

/// The text of a snippet being written.
#[derive(Default)]
struct Snippet {
    /// The text so far.
    text: String,
    /// Whether the last token was a word (an identifier or a literal), so
    /// that another word needs a space before it.
    after_word: bool,
    /// Whether the last punctuation joins the next token (`::`, `.`, a
    /// joint operator like the `<` of `<=`, an opening `<` of generics).
    tight: bool,
    /// How many generic `<` are open (after `::`).
    generics: usize,
}

impl Snippet {
    /// Appends one token.
    fn token(&mut self, token: &TokenTree) {
        match token {
            TokenTree::Ident(i) => self.word(&i.to_string()),
            TokenTree::Literal(l) => self.word(&l.to_string()),
            TokenTree::Punct(p) => self.punct(p.as_char(), p.spacing()),
            TokenTree::Group(g) => self.group(g.delimiter(), g.stream()),
        }
    }

    /// An identifier or a literal.
    fn word(&mut self, word: &str) {
        if self.after_word {
            self.text.push(' ');
        }
        self.text.push_str(word);
        self.after_word = true;
        self.tight = false;
    }

    /// Punctuation: `.`, `::` and generics tight, operators spaced.
    fn punct(&mut self, c: char, spacing: Spacing) {
        let path = c == '.' || c == ':' || c == '!';
        let generic_open = c == '<' && self.text.ends_with("::");
        let generic_close = c == '>' && self.generics > 0;
        if generic_open {
            self.generics += 1;
        } else if generic_close {
            self.generics -= 1;
        }
        let tight = path || generic_open || generic_close || self.text.is_empty();
        let separator = c == ',' || c == ';';
        if !tight && !separator && !self.tight && !self.text.ends_with(' ') {
            self.text.push(' ');
        }
        self.text.push(c);
        if separator || (!tight && spacing == Spacing::Alone) {
            self.text.push(' ');
        }
        self.after_word = false;
        self.tight = tight || spacing == Spacing::Joint;
    }

    /// A delimited group: its delimiters with `..` for any contents.
    fn group(&mut self, delimiter: Delimiter, stream: TokenStream) {
        let inner = if stream.is_empty() { "" } else { ".." };
        let (open, close) = match delimiter {
            Delimiter::Parenthesis => ('(', ')'),
            Delimiter::Bracket => ('[', ']'),
            Delimiter::Brace => {
                if self.after_word {
                    self.text.push(' ');
                }
                ('{', '}')
            }
            Delimiter::None => {
                for token in stream {
                    self.token(&token);
                }
                return;
            }
        };
        self.text.push(open);
        self.text.push_str(inner);
        self.text.push(close);
        self.after_word = false;
        self.tight = false;
    }
}

/// `text` without trailing spaces, cut to [`MAX_SNIPPET`] characters.
fn cut(text: String) -> String {
    let text = text.trim_end();
    if text.chars().count() <= MAX_SNIPPET {
        return text.to_string();
    }
    let kept: String = text.chars().take(MAX_SNIPPET - 2).collect();
    format!("{}..", kept.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The snippet of an expression written as Rust.
    fn of(src: &str) -> String {
        let expr: syn::Expr = syn::parse_str(src).unwrap();
        let tokens: Vec<TokenTree> = expr.to_token_stream().into_iter().collect();
        snippet(&tokens)
    }

    #[test]
    fn snippets_elide_arguments_and_keep_the_shape_of_the_expression() {
        assert_eq!(
            of("partition_view(x, [B]).load(pid)"),
            "partition_view(..).load(..)"
        );
        assert_eq!(of("a + b * c"), "a + b * c");
        assert_eq!(of("x.sum(1)"), "x.sum(..)");
        assert_eq!(of("zeros::<f32>([M, N])"), "zeros::<f32>(..)");
        assert_eq!(of("i as f32"), "i as f32");
        assert_eq!(of("a <= b"), "a <= b");
        assert_eq!(of("-x"), "-x");
        assert_eq!(of("(a, b)"), "(..)");
        assert_eq!(of("program_id(0)"), "program_id(..)");
        assert_eq!(of("for i in 0..n { acc = acc + 1; }"), "for i in 0..n {..}");
    }

    #[test]
    fn long_snippets_are_cut() {
        let long =
            of("aaaaaaaaaa + bbbbbbbbbb + cccccccccc + dddddddddd + eeeeeeeeee + ffffffffff");
        assert_eq!(long.chars().count(), MAX_SNIPPET);
        assert!(long.ends_with(".."), "{long}");
    }

    #[test]
    fn a_method_call_is_located_at_its_name_and_a_binary_expression_is_not() {
        let at = |src: &str| {
            let expr: syn::Expr = syn::parse_str(src).unwrap();
            let tokens: Vec<TokenTree> = expr.to_token_stream().into_iter().collect();
            method_span(&tokens).map(|span| span.start().column)
        };
        assert_eq!(at("partition_view(x, [B]).load(pid)"), Some(23));
        assert_eq!(at("x.sum::<f32>(1)"), Some(2));
        assert_eq!(at("a * b + y.load(pid)"), None);
        assert_eq!(at("(a + b).exp()"), Some(8));
    }

    #[test]
    fn tokens_parsed_from_a_string_have_no_location() {
        let expr: syn::Expr = syn::parse_str("x.load(pid)").unwrap();
        assert_eq!(location(&expr), None);
    }
}

//! Debugging macros in kernels: `device_assert!(cond)` and
//! `device_assert!(cond, "format", args..)`, which become `assert` ops, and
//! `device_print!("format", args..)`, which becomes a `print` op.
//!
//! The message follows Rust's format strings as far as a scalar needs:
//! `{}` and `{:?}` take the next argument, `{name}` and `{name:?}` a
//! variable in scope, `{{` and `}}` are braces. Other format specs are
//! compile errors at the literal. A condition known at expansion (a const
//! parameter's arithmetic) is checked there: true builds nothing, false is
//! a compile error.

use super::{Translator, Val};
use quote::ToTokens;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Expr, LitStr, Token};
use tile_ir::assertion::MAX_VALUES;
use tile_ir::device_print::MAX_VALUES as PRINT_VALUES;
use tile_ir::{DType, Shape, Type, Value};

/// A message converted to the IR's form (`{}` only), with what each
/// placeholder takes in order: a captured variable, or (`None`) the next
/// argument after the message.
struct Message {
    text: String,
    slots: Vec<Option<Expr>>,
}

impl Translator<'_> {
    /// A macro used as a statement: `device_assert!`, or an error.
    pub(crate) fn macro_stmt(&mut self, mac: &syn::Macro) -> syn::Result<()> {
        match macro_name(mac).as_str() {
            "device_assert" => self.device_assert(mac),
            "device_print" => self.device_print(mac),
            _ => Err(self.macro_err(mac)),
        }
    }

    /// An error for a macro the translator does not know.
    pub(crate) fn macro_err(&self, mac: &syn::Macro) -> syn::Error {
        let name = macro_name(mac);
        let hint = match name.as_str() {
            "assert" | "debug_assert" | "assert_eq" | "assert_ne" => {
                "; write `device_assert!(cond, \"message {}\", value)`, which checks on the device"
            }
            "println" | "print" | "eprintln" | "eprint" | "dbg" => {
                "; write `device_print!(\"x = {}\", x)`, which prints from the device"
            }
            _ => "",
        };
        self.err(mac, format!("macros (`{name}!`) are not supported in tile kernels: the body is translated to tile IR, not compiled as Rust (the kernel macros are `device_assert!` and `device_print!`){hint}"))
    }

    /// `device_assert!(cond[, "format", args..])`.
    fn device_assert(&mut self, mac: &syn::Macro) -> syn::Result<()> {
        let parts = Punctuated::<Expr, Token![,]>::parse_terminated
            .parse2(mac.tokens.clone())
            .map_err(|e| self.with_label(e))?;
        let mut parts = parts.into_iter();
        let Some(cond_expr) = parts.next() else {
            return Err(self.err(
                mac,
                "`device_assert!` needs a condition: `device_assert!(cond)` or `device_assert!(cond, \"message {}\", value)`",
            ));
        };
        let message =
            match parts.next() {
                Some(Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(lit),
                    ..
                })) => self.message(&lit)?,
                Some(other) => return Err(self.err(
                    &other,
                    "the message of `device_assert!` must be a string literal (a format string)",
                )),
                None => Message {
                    text: escape_braces(&cond_expr.to_token_stream().to_string()),
                    slots: Vec::new(),
                },
            };
        let args = self.arguments(mac, message.slots, parts.collect())?;
        if let Some(extra) = args.get(MAX_VALUES) {
            return Err(self.err(
                extra,
                format!("`device_assert!` reports at most {MAX_VALUES} values"),
            ));
        }
        let cond = self.expr(&cond_expr)?;
        let cond = match cond {
            Val::Bool(true) => return Ok(()),
            Val::Bool(false) => {
                return Err(self.err(
                    &cond_expr,
                    format!(
                        "this assertion fails in every program: {}",
                        message.text.replace("{{", "{").replace("}}", "}")
                    ),
                ))
            }
            other => self.condition(&other, &cond_expr)?,
        };
        let mut values = Vec::with_capacity(args.len());
        for e in &args {
            values.push(self.formatted_value(e)?);
        }
        let id = self.assertions;
        self.assertions += 1;
        self.ir(mac, |b| b.assert(id, &message.text, cond, &values))
    }

    /// `device_print!("format", args..)`.
    fn device_print(&mut self, mac: &syn::Macro) -> syn::Result<()> {
        let parts = Punctuated::<Expr, Token![,]>::parse_terminated
            .parse2(mac.tokens.clone())
            .map_err(|e| self.with_label(e))?;
        let mut parts = parts.into_iter();
        let message = match parts.next() {
            Some(Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(lit),
                ..
            })) => self.message(&lit)?,
            Some(other) => {
                return Err(self.err(
                    &other,
                    "`device_print!` takes a string literal first (a format string)",
                ))
            }
            None => {
                return Err(self.err(
                    mac,
                    "`device_print!` needs a message: `device_print!(\"x = {}\", x)`",
                ))
            }
        };
        let args = self.arguments(mac, message.slots, parts.collect())?;
        if let Some(extra) = args.get(PRINT_VALUES) {
            return Err(self.err(
                extra,
                format!("`device_print!` formats at most {PRINT_VALUES} values"),
            ));
        }
        let mut values = Vec::with_capacity(args.len());
        let mut shape: Option<Shape> = None;
        for e in &args {
            let v = self.expr(e)?;
            let x = self.data(&v, None, e)?;
            if let Some(s) = self.ty(x).tile_shape().cloned() {
                shape = Some(match shape {
                    None => s,
                    Some(prev) => super::ops::broadcast_shapes(prev.dims(), s.dims())
                        .map(Shape)
                        .map_err(|(p, q)| self.err(e, format!("the printed tiles do not broadcast: shapes {prev} and {s} (extents {p} and {q} differ and neither is 1)")))?,
                });
            }
            values.push((x, e));
        }
        let mut operands = Vec::with_capacity(values.len());
        for (x, e) in values {
            operands.push(match (&shape, self.ty(x).tile_shape()) {
                (Some(s), Some(_)) => self.broadcast_to_shape(x, s, e)?,
                _ => x,
            });
        }
        let id = self.prints;
        self.prints += 1;
        self.ir(mac, |b| b.print(id, &message.text, &operands))
    }

    /// The expressions a message's placeholders take in order: captured
    /// variables, and `given` (the arguments after the message) for `{}`.
    fn arguments(
        &self,
        mac: &syn::Macro,
        slots: Vec<Option<Expr>>,
        mut given: Vec<Expr>,
    ) -> syn::Result<Vec<Expr>> {
        let positional = slots.iter().filter(|s| s.is_none()).count();
        if given.len() != positional {
            return Err(self.err(
                mac,
                format!(
                    "the message has {positional} `{{}}` placeholder(s) but {} argument(s) follow it",
                    given.len()
                ),
            ));
        }
        given.reverse();
        slots
            .into_iter()
            .map(|slot| slot.or_else(|| given.pop()))
            .collect::<Option<_>>()
            .ok_or_else(|| self.err(mac, "the message's placeholders and arguments disagree"))
    }

    /// The condition as a `bool` scalar or tile.
    fn condition(&mut self, v: &Val, e: &Expr) -> syn::Result<Value> {
        let x = self.data(v, Some(DType::Bool), e)?;
        match self.ty(x) {
            Type::Scalar(DType::Bool) => Ok(x),
            Type::Tile(t) if t.dtype == DType::Bool => Ok(x),
            other => Err(self.err(
                e,
                format!(
                    "the condition of `device_assert!` must be a bool scalar or tile, found {}",
                    super::value::describe_type(&other)
                ),
            )),
        }
    }

    /// A value the message formats: a scalar.
    fn formatted_value(&mut self, e: &Expr) -> syn::Result<Value> {
        let v = self.expr(e)?;
        let x = self.data(&v, None, e)?;
        match self.ty(x) {
            Type::Scalar(_) => Ok(x),
            other => Err(self.err(
                e,
                format!(
                    "`device_assert!` formats scalars, found {}: reduce the tile first (e.g. `x.max_along(0)`) or make the condition a tile",
                    super::value::describe_type(&other)
                ),
            )),
        }
    }

    /// The IR form of a format string: `{}` placeholders, with the
    /// variables that `{name}` captures as arguments.
    fn message(&self, lit: &LitStr) -> syn::Result<Message> {
        let source = lit.value();
        let mut text = String::new();
        let mut slots = Vec::new();
        let mut chars = source.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            match c {
                '{' if chars.peek().map(|&(_, n)| n) == Some('{') => {
                    chars.next();
                    text.push_str("{{");
                }
                '}' if chars.peek().map(|&(_, n)| n) == Some('}') => {
                    chars.next();
                    text.push_str("}}");
                }
                '{' => {
                    let Some(len) = source[at..].find('}') else {
                        return Err(self.err(
                            lit,
                            "an unclosed `{` in the message; write `{{` for a brace",
                        ));
                    };
                    let inner = &source[at + 1..at + len];
                    let name = inner.strip_suffix(":?").unwrap_or(inner);
                    slots.push(if name.is_empty() {
                        None
                    } else {
                        let ident: syn::Ident = syn::parse_str(name).map_err(|_| {
                            self.err(lit, format!("`{{{inner}}}`: a message formats each value with `{{}}`, `{{:?}}` or `{{name}}` (no positions, widths or precisions)"))
                        })?;
                        Some(syn::parse_quote_spanned!(lit.span()=> #ident))
                    });
                    text.push_str("{}");
                    for _ in 0..len {
                        chars.next();
                    }
                }
                '}' => {
                    return Err(self.err(
                        lit,
                        "an unmatched `}` in the message; write `}}` for a brace",
                    ))
                }
                c => text.push(c),
            }
        }
        Ok(Message { text, slots })
    }
}

/// The macro's name: the last segment of its path.
fn macro_name(mac: &syn::Macro) -> String {
    mac.path
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default()
}

/// `text` with its braces doubled, as a message's literal text.
fn escape_braces(text: &str) -> String {
    text.replace('{', "{{").replace('}', "}}")
}

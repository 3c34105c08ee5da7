//! The text form of the IR: a printer (`Display` for [`crate::Function`]) and
//! a parser ([`parse_function`]) that read and write the same syntax, so that
//! print → parse → print is the identity. The syntax is described in
//! `docs/ir.md` ("Text form").
//!
//! ```
//! let src = "kernel @k(%n: i32) {\n  %0 = add %n, %n : i32\n}";
//! let func = tile_ir::text::parse_function(src)?;
//! assert_eq!(func.to_string(), src);
//! # Ok::<(), tile_ir::text::ParseError>(())
//! ```

mod control;
mod error;
mod lexer;
mod literal;
mod lview;
pub(crate) mod ops;
mod parser;
mod print;
mod scope;
pub(crate) mod syntax;
mod types;

pub use error::ParseError;
pub use lexer::{lex, Token, TokenKind};
pub use literal::parse_scalar;
pub use parser::parse_function;
pub(crate) use parser::Parser;

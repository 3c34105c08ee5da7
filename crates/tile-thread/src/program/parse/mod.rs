//! The parser of the text form ([`super::print`]): [`parse_program`] reads
//! what `Display for Program` writes, so print → parse → print is the
//! identity, and tests can be written in the text form.
//!
//! Register names are looked up in the scope of their region and the
//! enclosing ones; a name used before its definition or defined twice is an
//! error. A result's dtype is the `: <dtype>` the line ends with, except
//! where the printer writes only the first result's: the results of a
//! vector load all have its dtype, a `for` takes its induction variable's
//! dtype from its lower bound and its results' from the initial values, and
//! an `if` takes its results' from the values its first region yields. A
//! `// note` line before an op becomes that op's note. Nothing is checked
//! beyond the structure: run [`super::verify`] for the rules.

#[cfg(test)]
mod every_op;
mod ops;
pub(super) mod syntax;

use super::{OpId, Param, ParamKind, Program, Reg, Region, ThreadOpKind};
use std::collections::HashMap;
use tile_ir::text::{lex, ParseError, Token, TokenKind};
use tile_ir::{DType, TensorType};

/// How deeply regions may nest before the parser gives up (it recurses once
/// per level).
const MAX_NESTING: usize = 64;

/// Parses a thread-level program in the text form.
pub fn parse_program(src: &str) -> Result<Program, ParseError> {
    let tokens = lex(src);
    let mut p = Parser {
        tokens: &tokens,
        pos: 0,
        op: "",
        program: Program::new("", 1),
        scopes: vec![HashMap::new()],
        depth: 0,
    };
    p.kernel()?;
    Ok(p.program)
}

/// The parser's cursor, the program under construction and the register
/// names in scope, innermost last.
pub(super) struct Parser<'t, 'a> {
    tokens: &'t [Token<'a>],
    pos: usize,
    /// The name of the op whose row is being read, for errors.
    op: &'static str,
    program: Program,
    scopes: Vec<HashMap<&'a str, Reg>>,
    depth: usize,
}

/// What an op's line holds before its results are known.
struct Line<'a> {
    kind: ThreadOpKind,
    operands: Vec<Reg>,
    /// The names the line defines, with their tokens.
    results: Vec<Token<'a>>,
    /// For `for`: the names of the induction variable and carried values;
    /// for `while`, of the carried values in the condition region.
    region_args: Vec<Token<'a>>,
}

impl<'a> Parser<'_, 'a> {
    // ---- the cursor ----

    fn peek(&self) -> &Token<'a> {
        // `lex` ends every stream with an end or error token, never consumed.
        &self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    /// The word after the next token when that is a `.` (which of the
    /// `fence` ops a line holds).
    fn peek_ident_after_dot(&self) -> Option<&'a str> {
        let dot = self.tokens.get(self.pos)?;
        let word = self.tokens.get(self.pos + 1)?;
        (dot.kind == TokenKind::Dot && word.kind == TokenKind::Ident).then_some(word.text)
    }

    fn bump(&mut self) -> Token<'a> {
        let token = self.peek().clone();
        if !matches!(token.kind, TokenKind::Eof | TokenKind::Error(_)) {
            self.pos += 1;
        }
        token
    }

    fn eat(&mut self, kind: &TokenKind) -> bool {
        let found = &self.peek().kind == kind;
        if found {
            self.bump();
        }
        found
    }

    fn error_at(token: &Token<'_>, message: impl Into<String>) -> ParseError {
        ParseError {
            line: token.line,
            column: token.column,
            message: message.into(),
        }
    }

    pub(in crate::program) fn expected(&self, what: &str) -> ParseError {
        let found = self.peek();
        match &found.kind {
            TokenKind::Error(message) => Self::error_at(found, message.clone()),
            _ => Self::error_at(
                found,
                format!("expected {what}, found {}", found.describe()),
            ),
        }
    }

    // ---- match_* helpers: each consumes what it expects or says what it
    // expected ----

    fn match_token(&mut self, kind: TokenKind, what: &str) -> Result<Token<'a>, ParseError> {
        if self.peek().kind == kind {
            Ok(self.bump())
        } else {
            Err(self.expected(what))
        }
    }

    fn match_keyword(&mut self, word: &str) -> Result<Token<'a>, ParseError> {
        if self.peek().is_keyword(word) {
            Ok(self.bump())
        } else {
            Err(self.expected(&format!("`{word}`")))
        }
    }

    fn match_ident(&mut self, what: &str) -> Result<Token<'a>, ParseError> {
        self.match_token(TokenKind::Ident, what)
    }

    fn match_int<T: std::str::FromStr>(&mut self, what: &str) -> Result<T, ParseError> {
        let token = self.match_token(TokenKind::Int, what)?;
        token
            .text
            .parse()
            .map_err(|_| Self::error_at(&token, format!("{what} {} is out of range", token.text)))
    }

    fn match_dtype(&mut self) -> Result<DType, ParseError> {
        let token = self.match_ident("a dtype")?;
        Self::dtype_of(&token)
    }

    fn dtype_of(token: &Token<'_>) -> Result<DType, ParseError> {
        token
            .text
            .parse()
            .map_err(|e: tile_ir::dtype::UnknownDType| Self::error_at(token, e.to_string()))
    }

    fn match_line_end(&mut self) -> Result<(), ParseError> {
        if self.peek().kind == TokenKind::Eof {
            return Ok(());
        }
        self.match_token(TokenKind::Newline, "the end of the line")?;
        Ok(())
    }

    fn skip_blank_lines(&mut self) {
        while self.eat(&TokenKind::Newline) {}
    }

    /// A register operand, looked up in scope.
    fn match_reg(&mut self) -> Result<Reg, ParseError> {
        let token = self.match_token(TokenKind::Value, "a register")?;
        self.scopes
            .iter()
            .rev()
            .find_map(|scope| scope.get(token.text).copied())
            .ok_or_else(|| Self::error_at(&token, format!("`{}` is not defined", token.text)))
    }

    /// `%a, %b, ...` up to a token that is not a comma (possibly none).
    fn match_regs(&mut self) -> Result<Vec<Reg>, ParseError> {
        let mut regs = Vec::new();
        if self.peek().kind != TokenKind::Value {
            return Ok(regs);
        }
        loop {
            regs.push(self.match_reg()?);
            if !self.eat(&TokenKind::Comma) {
                return Ok(regs);
            }
        }
    }

    /// The position of the parameter named by the next token.
    fn match_param(&mut self) -> Result<usize, ParseError> {
        let token = self.match_ident("a parameter name")?;
        self.program
            .params
            .iter()
            .position(|p| p.name == token.text)
            .ok_or_else(|| Self::error_at(&token, format!("no parameter `{}`", token.text)))
    }

    /// `@s<n>`: an existing shared allocation.
    fn match_shared(&mut self) -> Result<super::SharedId, ParseError> {
        let token = self.match_token(TokenKind::Global, "a shared allocation `@s<n>`")?;
        let index = token
            .text
            .strip_prefix("@s")
            .and_then(|n| n.parse::<usize>().ok());
        index
            .and_then(|i| self.program.shared.iter().nth(i).map(|(id, _)| id))
            .ok_or_else(|| Self::error_at(&token, format!("no shared allocation `{}`", token.text)))
    }

    // ---- the kernel ----

    /// `kernel <name> warps <n> (<params>)`, the shared allocations, then the
    /// body in braces.
    fn kernel(&mut self) -> Result<(), ParseError> {
        self.skip_blank_lines();
        self.match_keyword("kernel")?;
        self.program.name = self.match_ident("the kernel's name")?.text.to_string();
        self.match_keyword("warps")?;
        self.program.num_warps = self.match_int("the number of warps")?;
        self.match_token(TokenKind::LParen, "`(`")?;
        while self.peek().kind != TokenKind::RParen {
            if !self.program.params.is_empty() {
                self.match_token(TokenKind::Comma, "`,` or `)`")?;
            }
            let param = self.param()?;
            self.program.params.push(param);
        }
        self.bump();
        self.match_line_end()?;
        while self.peek().is_keyword("shared") {
            self.bump();
            let name = self.match_token(TokenKind::Global, "`@s<n>`")?;
            if name.text != format!("@s{}", self.program.shared.len()) {
                return Err(Self::error_at(
                    &name,
                    format!(
                        "expected `@s{}`, found `{}`",
                        self.program.shared.len(),
                        name.text
                    ),
                ));
            }
            self.match_token(TokenKind::Colon, "`:`")?;
            let dtype = self.match_dtype()?;
            self.match_token(TokenKind::LBracket, "`[`")?;
            let len = self.match_int("the allocation's length")?;
            self.match_token(TokenKind::RBracket, "`]`")?;
            let align = if self.peek().is_keyword("align") {
                self.bump();
                self.match_int("the allocation's alignment")?
            } else {
                super::SHARED_ALIGN
            };
            let aliases = if self.peek().is_keyword("aliases") {
                self.bump();
                Some(self.match_shared()?)
            } else {
                None
            };
            self.match_line_end()?;
            let alloc = self.program.alloc_shared(dtype, len);
            self.program.shared[alloc].align = align;
            self.program.shared[alloc].aliases = aliases;
        }
        let open = self.match_token(TokenKind::LBrace, "`{`")?;
        self.match_line_end()?;
        self.program.body = self.region(Vec::new(), &open)?;
        self.bump();
        self.skip_blank_lines();
        if self.peek().kind != TokenKind::Eof {
            return Err(self.expected("the end of the input"));
        }
        Ok(())
    }

    /// `<name>: tensor<<dtype>, <rank>>` (or `tensor<<dtype>, <rank>,
    /// aligned>`), `<name>: tensors<..>`, a tensor of an earlier array
    /// `<name>: tensor<..> of <array>`, or `<name>: <dtype>`.
    fn param(&mut self) -> Result<Param, ParseError> {
        let name = self.match_ident("a parameter name")?.text.to_string();
        self.match_token(TokenKind::Colon, "`:`")?;
        let kind = if self.peek().is_keyword("tensor") {
            self.bump();
            let ty = self.tensor_type()?;
            if self.peek().is_keyword("of") {
                self.bump();
                let array = self.match_param()?;
                ParamKind::Element { ty, array }
            } else {
                ParamKind::Tensor(ty)
            }
        } else if self.peek().is_keyword("tensors") {
            self.bump();
            ParamKind::Tensors(self.tensor_type()?)
        } else {
            ParamKind::Scalar(self.match_dtype()?)
        };
        Ok(Param { name, kind })
    }

    /// `<<dtype>, <rank>>` or `<<dtype>, <rank>, aligned>`.
    fn tensor_type(&mut self) -> Result<TensorType, ParseError> {
        self.match_token(TokenKind::LAngle, "`<`")?;
        let dtype = self.match_dtype()?;
        self.match_token(TokenKind::Comma, "`,`")?;
        let rank = self.match_int("the tensor's rank")?;
        let aligned = self.eat(&TokenKind::Comma);
        if aligned {
            self.match_keyword("aligned")?;
        }
        self.match_token(TokenKind::RAngle, "`>`")?;
        Ok(TensorType {
            dtype,
            rank,
            aligned,
        })
    }

    /// The ops of a region up to its closing `}` (not consumed); `args` are
    /// its arguments' names and registers.
    fn region(
        &mut self,
        args: Vec<(Token<'a>, Reg)>,
        open: &Token<'_>,
    ) -> Result<Region, ParseError> {
        if self.depth == MAX_NESTING {
            return Err(Self::error_at(
                open,
                format!("regions nest deeper than {MAX_NESTING}"),
            ));
        }
        self.depth += 1;
        self.scopes.push(HashMap::new());
        let mut region = Region::default();
        for (token, reg) in args {
            self.define(&token, reg)?;
            region.args.push(reg);
        }
        let mut note: Option<String> = None;
        loop {
            match &self.peek().kind {
                TokenKind::RBrace => break,
                TokenKind::Newline => {
                    self.bump();
                }
                TokenKind::Comment => {
                    let token = self.bump();
                    let text = token.text.trim_start_matches("//");
                    note = Some(text.strip_prefix(' ').unwrap_or(text).to_string());
                }
                TokenKind::Eof => {
                    return Err(Self::error_at(open, "this `{` is never closed"));
                }
                _ => {
                    let id = self.op()?;
                    if let Some(note) = note.take() {
                        self.program.notes.insert(id, note);
                    }
                    region.ops.push(id);
                }
            }
        }
        self.scopes.pop();
        self.depth -= 1;
        Ok(region)
    }

    fn define(&mut self, token: &Token<'a>, reg: Reg) -> Result<(), ParseError> {
        let defined = self
            .scopes
            .iter()
            .any(|scope| scope.contains_key(token.text));
        if defined {
            return Err(Self::error_at(
                token,
                format!("`{}` is defined twice", token.text),
            ));
        }
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(token.text, reg);
        }
        Ok(())
    }

    /// One op's line, with its regions.
    fn op(&mut self) -> Result<OpId, ParseError> {
        let mut results = Vec::new();
        if self.peek().kind == TokenKind::Value {
            loop {
                results.push(self.match_token(TokenKind::Value, "a result name")?);
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            self.match_token(TokenKind::Equals, "`=`")?;
        }
        let start = self.peek().clone();
        let mut line = self.op_body()?;
        line.results = results;
        let printed = if self.eat(&TokenKind::Colon) {
            Some(self.match_dtype()?)
        } else {
            None
        };
        let id = match line.kind {
            ThreadOpKind::For | ThreadOpKind::While | ThreadOpKind::If => {
                self.structured(line, &start)?
            }
            _ => {
                let dtype = match (printed, line.results.is_empty()) {
                    (Some(d), false) => d,
                    (None, true) => DType::Bool,
                    (Some(_), true) => {
                        return Err(Self::error_at(&start, "a type without results"))
                    }
                    (None, false) => return Err(self.expected("`:` and the result's dtype")),
                };
                let types = vec![dtype; line.results.len()];
                let id = self
                    .program
                    .create_op(line.kind, line.operands, &types, Vec::new());
                let regs = self.program.ops[id].results.clone();
                for (token, reg) in line.results.iter().zip(regs) {
                    self.define(token, reg)?;
                }
                id
            }
        };
        self.match_line_end()?;
        Ok(id)
    }

    /// A `for`, `while` or `if` with its regions, its results typed from
    /// them.
    fn structured(&mut self, line: Line<'a>, start: &Token<'_>) -> Result<OpId, ParseError> {
        let open = self.match_token(TokenKind::LBrace, "`{`")?;
        let mut regions = Vec::new();
        let result_types: Vec<DType> = if line.kind == ThreadOpKind::For {
            // Operands: lo, hi, step, then the initial carried values.
            let types: Vec<DType> = line
                .operands
                .iter()
                .map(|&r| self.program.dtype(r))
                .collect();
            let mut arg_types = vec![types[0]];
            arg_types.extend_from_slice(&types[3..]);
            let args = line
                .region_args
                .iter()
                .zip(&arg_types)
                .map(|(t, &d)| (t.clone(), self.program.new_reg(d)))
                .collect();
            regions.push(self.region(args, &open)?);
            self.bump();
            types[3..].to_vec()
        } else if line.kind == ThreadOpKind::While {
            let types: Vec<DType> = line
                .operands
                .iter()
                .map(|&r| self.program.dtype(r))
                .collect();
            let args = line
                .region_args
                .iter()
                .zip(&types)
                .map(|(t, &d)| (t.clone(), self.program.new_reg(d)))
                .collect();
            regions.push(self.region(args, &open)?);
            self.bump();
            self.match_keyword("do")?;
            self.match_token(TokenKind::LParen, "`(`")?;
            let mut names = Vec::new();
            while self.peek().kind == TokenKind::Value {
                names.push(self.bump());
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            self.match_token(TokenKind::RParen, "`)`")?;
            if names.len() != types.len() {
                return Err(Self::error_at(
                    start,
                    format!(
                        "the body of `while` takes {} values but the loop carries {}",
                        names.len(),
                        types.len()
                    ),
                ));
            }
            let args = names
                .into_iter()
                .zip(&types)
                .map(|(t, &d)| (t, self.program.new_reg(d)))
                .collect();
            let open = self.match_token(TokenKind::LBrace, "`{`")?;
            regions.push(self.region(args, &open)?);
            self.bump();
            types
        } else {
            regions.push(self.region(Vec::new(), &open)?);
            self.bump();
            self.match_keyword("else")?;
            let open = self.match_token(TokenKind::LBrace, "`{`")?;
            regions.push(self.region(Vec::new(), &open)?);
            self.bump();
            let yielded = regions[0]
                .ops
                .last()
                .map(|&id| &self.program.ops[id])
                .filter(|op| op.kind == ThreadOpKind::Yield)
                .map(|op| op.operands.clone())
                .unwrap_or_default();
            yielded.iter().map(|&r| self.program.dtype(r)).collect()
        };
        if result_types.len() != line.results.len() {
            return Err(Self::error_at(
                start,
                format!(
                    "`{}` has {} results but {} names",
                    line.kind.name(),
                    result_types.len(),
                    line.results.len()
                ),
            ));
        }
        let id = self
            .program
            .create_op(line.kind, line.operands, &result_types, regions);
        let regs = self.program.ops[id].results.clone();
        for (token, reg) in line.results.iter().zip(regs) {
            self.define(token, reg)?;
        }
        Ok(id)
    }
}

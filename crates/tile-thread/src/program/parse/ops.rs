//! The middle of each op's line: its name and operands, up to its type or
//! its region, read by the op table's formats (`tile_ir::format::read_line`); the loops,
//! which bind their regions' arguments, by hand.

use super::{Line, Parser};
use crate::program::{Reg, ThreadOpKind};
use tile_ir::format::{mnemonic, read_line, LineReader};
use tile_ir::text::{ParseError, Token, TokenKind};

impl<'a> Parser<'_, 'a> {
    /// The op's name and operands, up to its type or its region: the first
    /// row of the table whose format reads the line, or the error of the
    /// row that read furthest.
    pub(super) fn op_body(&mut self) -> Result<Line<'a>, ParseError> {
        let name = self.peek().clone();
        match name.text {
            "for" if name.kind == TokenKind::Ident => return self.for_loop(),
            "while" if name.kind == TokenKind::Ident => return self.while_loop(),
            _ => {}
        }
        let start = self.pos;
        let mut furthest: Option<(usize, ParseError)> = None;
        for &(variant, format, _) in ThreadOpKind::ROWS {
            let lead = format
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next()
                .unwrap_or_default();
            if !lead.is_empty() && lead != name.text {
                continue;
            }
            self.pos = start;
            self.op = mnemonic(format);
            match ThreadOpKind::parse_variant(variant, self) {
                Ok((kind, operands)) => {
                    return Ok(Line {
                        kind,
                        operands,
                        results: Vec::new(),
                        region_args: Vec::new(),
                    })
                }
                Err(error) => {
                    if furthest.as_ref().is_none_or(|(at, _)| self.pos > *at) {
                        furthest = Some((self.pos, error));
                    }
                }
            }
        }
        self.pos = start;
        match furthest {
            Some((at, error)) if at > start => Err(error),
            _ => Err(Self::error_at(&name, format!("unknown op `{}`", name.text))),
        }
    }

    /// Reads an op's line by `format` ([`read_line`]), each attribute by
    /// `attribute`. Returns the operands in format order.
    pub(in crate::program) fn fields(
        &mut self,
        format: &'static str,
        attribute: &mut dyn FnMut(&mut Self, &str) -> Result<(), ParseError>,
    ) -> Result<Vec<Reg>, ParseError> {
        let mut operands = Vec::new();
        read_line(self, format, &mut operands, &mut |p, name, _| {
            attribute(p, name)
        })?;
        Ok(operands)
    }

    /// The attribute value a row's format read, or an error naming the
    /// attribute its format lacks.
    pub(in crate::program) fn read<T>(
        &self,
        value: Option<T>,
        name: &str,
    ) -> Result<T, ParseError> {
        value.ok_or_else(|| self.expected(&format!("`{}` to have attribute `{name}`", self.op)))
    }

    /// `for %iv = %lo to %hi step %step iter(%a = %init, ...)`.
    fn for_loop(&mut self) -> Result<Line<'a>, ParseError> {
        self.bump();
        let mut region_args = vec![self.match_token(TokenKind::Value, "the induction variable")?];
        self.match_token(TokenKind::Equals, "`=`")?;
        let lo = self.match_reg()?;
        self.match_keyword("to")?;
        let hi = self.match_reg()?;
        self.match_keyword("step")?;
        let step = self.match_reg()?;
        let mut operands = vec![lo, hi, step];
        self.carried(&mut region_args, &mut operands)?;
        Ok(Line {
            kind: ThreadOpKind::For,
            operands,
            results: Vec::new(),
            region_args,
        })
    }

    /// `while iter(%a = %init, ...)`.
    fn while_loop(&mut self) -> Result<Line<'a>, ParseError> {
        self.bump();
        let (mut region_args, mut operands) = (Vec::new(), Vec::new());
        self.carried(&mut region_args, &mut operands)?;
        Ok(Line {
            kind: ThreadOpKind::While,
            operands,
            results: Vec::new(),
            region_args,
        })
    }

    /// `iter(%a = %init, ...)` of a loop: the carried values' names pushed
    /// to `names`, their initial registers to `operands`.
    fn carried(
        &mut self,
        names: &mut Vec<Token<'a>>,
        operands: &mut Vec<Reg>,
    ) -> Result<(), ParseError> {
        self.match_keyword("iter")?;
        self.match_token(TokenKind::LParen, "`(`")?;
        while self.peek().kind == TokenKind::Value {
            names.push(self.bump());
            self.match_token(TokenKind::Equals, "`=`")?;
            operands.push(self.match_reg()?);
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.match_token(TokenKind::RParen, "`)`")?;
        Ok(())
    }
}

/// The thread program's parser reads an op's line by its format: operands
/// are registers in scope.
impl LineReader for Parser<'_, '_> {
    type Operand = Reg;

    fn next_token(&self) -> &Token<'_> {
        self.peek()
    }

    fn bump(&mut self) {
        Parser::bump(self);
    }

    fn expected(&self, what: &str) -> ParseError {
        Parser::expected(self, what)
    }

    fn operand(&mut self, _role: &str) -> Result<Reg, ParseError> {
        self.match_reg()
    }

    fn operands(&mut self, _role: &str) -> Result<Vec<Reg>, ParseError> {
        self.match_regs()
    }

    fn bracketed(&mut self, _role: &str) -> Result<Vec<Reg>, ParseError> {
        self.match_token(TokenKind::LBracket, "`[`")?;
        let regs = self.match_regs()?;
        self.match_token(TokenKind::RBracket, "`]`")?;
        Ok(regs)
    }
}

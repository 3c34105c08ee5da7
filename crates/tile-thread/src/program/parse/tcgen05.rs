//! The tensor-memory ops of the text form: `tmem.alloc 128 @s0[%i]`,
//! `tmem.dealloc 128 %t`, `tmem.load.x64 %t`, `tmem.store %t, %v…`,
//! `tcgen05.mma.m128n64k16.f16[.bk][.sw64|.sw32] @s1[%ia], @s2[%ib], %d,
//! %accumulate mask(%m)` and `tcgen05.commit_wait @s3[%i] mask(%m)`.

use super::Parser;
use crate::program::{Reg, Tcgen05Kind, ThreadOpKind};
use tile_ir::text::{ParseError, TokenKind};

impl Parser<'_, '_> {
    /// A `tmem` op after its name: its kind and operands.
    pub(super) fn tmem(&mut self) -> Result<(ThreadOpKind, Vec<Reg>), ParseError> {
        self.match_token(TokenKind::Dot, "`.alloc`, `.dealloc`, `.load` or `.store`")?;
        let what = self.match_ident("`alloc`, `dealloc`, `load` or `store`")?;
        match what.text {
            "alloc" => {
                let columns = self.match_int("the columns")?;
                let slot = self.match_shared()?;
                let index =
                    self.match_reg_group(TokenKind::LBracket, TokenKind::RBracket, "`[`")?;
                Ok((ThreadOpKind::TmemAlloc { columns, slot }, index))
            }
            "dealloc" => {
                let columns = self.match_int("the columns")?;
                Ok((
                    ThreadOpKind::TmemDealloc { columns },
                    vec![self.match_reg()?],
                ))
            }
            "load" => {
                self.match_token(TokenKind::Dot, "`.x` and the columns")?;
                let shape = self.match_ident("`x` and the columns")?;
                let columns = shape.text.strip_prefix('x').and_then(|n| n.parse().ok());
                let columns = columns.ok_or_else(|| {
                    Self::error_at(&shape, format!("unknown load shape `{}`", shape.text))
                })?;
                Ok((ThreadOpKind::TmemLoad { columns }, vec![self.match_reg()?]))
            }
            "store" => Ok((ThreadOpKind::TmemStore, self.match_regs()?)),
            other => Err(Self::error_at(&what, format!("unknown `tmem.{other}`"))),
        }
    }

    /// A `tcgen05` op after its name: its kind and operands.
    pub(super) fn tcgen05(&mut self) -> Result<(ThreadOpKind, Vec<Reg>), ParseError> {
        self.match_token(TokenKind::Dot, "`.mma` or `.commit_wait`")?;
        let what = self.match_ident("`mma` or `commit_wait`")?;
        if what.text == "commit_wait" {
            let bar = self.match_shared()?;
            let mut operands =
                self.match_reg_group(TokenKind::LBracket, TokenKind::RBracket, "`[`")?;
            operands.extend(self.mask()?);
            return Ok((ThreadOpKind::Tcgen05CommitWait { bar }, operands));
        }
        if what.text != "mma" {
            return Err(Self::error_at(
                &what,
                format!("unknown `tcgen05.{}`", what.text),
            ));
        }
        self.match_token(TokenKind::Dot, "`.` and an instruction shape")?;
        let shape = self.match_ident("an instruction shape")?;
        self.match_token(TokenKind::Dot, "`.` and the operands' dtype")?;
        let dtype = self.match_dtype()?;
        let (b_major, a_swizzle) = self.descriptor_suffixes("tcgen05.mma")?;
        let n = shape
            .text
            .strip_prefix("m128n")
            .and_then(|s| s.strip_suffix("k16"))
            .and_then(|n| n.parse().ok());
        let kind = n
            .and_then(|n| Tcgen05Kind::new(dtype, n, b_major))
            .ok_or_else(|| {
                let text = format!("unknown tcgen05.mma `{}.{dtype}`", shape.text);
                Self::error_at(&shape, text)
            })?;
        let a = self.match_shared()?;
        let mut operands = self.match_reg_group(TokenKind::LBracket, TokenKind::RBracket, "`[`")?;
        self.match_token(TokenKind::Comma, "`,`")?;
        let b = self.match_shared()?;
        operands.extend(self.match_reg_group(TokenKind::LBracket, TokenKind::RBracket, "`[`")?);
        self.match_token(TokenKind::Comma, "`,`")?;
        operands.push(self.match_reg()?);
        self.match_token(TokenKind::Comma, "`,`")?;
        operands.push(self.match_reg()?);
        operands.extend(self.mask()?);
        let kind = ThreadOpKind::Tcgen05Mma {
            kind,
            a,
            a_swizzle,
            b,
        };
        Ok((kind, operands))
    }

    /// `mask(%m)`: the mask register.
    fn mask(&mut self) -> Result<Vec<Reg>, ParseError> {
        self.match_keyword("mask")?;
        self.match_reg_group(TokenKind::LParen, TokenKind::RParen, "`(`")
    }
}

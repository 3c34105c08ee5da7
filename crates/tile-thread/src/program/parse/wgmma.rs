//! The `wgmma` ops of the text form: `wgmma.fence`, `wgmma.commit`,
//! `wgmma.wait`, and the instruction with A in shared memory
//! (`wgmma.m64n64k16.f16[.bk][.sw64|.sw32] @s0[%i], @s1[%j], %c…`) or in
//! registers (`wgmma.m64n64k16.f16[.bk] {%a…}, @s1[%j], %c…`); `.bk` marks a
//! K-major B.

use super::Parser;
use crate::program::{DescriptorSwizzle, Reg, SharedId, ThreadOpKind, WgmmaKind};
use tile_hw::wgmma::Major;
use tile_ir::text::{ParseError, TokenKind};

impl Parser<'_, '_> {
    /// A `wgmma` op after its name: its kind and operands.
    pub(super) fn wgmma(&mut self) -> Result<(ThreadOpKind, Vec<Reg>), ParseError> {
        self.match_token(TokenKind::Dot, "`.` and an instruction or `fence`")?;
        let what = self.match_ident("an instruction shape, `fence`, `commit` or `wait`")?;
        let shape = match what.text {
            "fence" => return Ok((ThreadOpKind::WgmmaFence, vec![])),
            "commit" => return Ok((ThreadOpKind::WgmmaCommit, vec![])),
            "wait" => {
                let pending = self.match_int("the groups left in flight")?;
                return Ok((ThreadOpKind::WgmmaWait { pending }, self.match_regs()?));
            }
            shape => shape,
        };
        self.match_token(TokenKind::Dot, "`.` and the operands' dtype")?;
        let dtype = self.match_dtype()?;
        let n = shape
            .strip_prefix("m64n")
            .and_then(|s| s.strip_suffix("k16"))
            .and_then(|n| n.parse().ok());
        let kind = n
            .and_then(|n| WgmmaKind::new(dtype, n))
            .ok_or_else(|| Self::error_at(&what, format!("unknown wgmma `{shape}.{dtype}`")))?;
        let (b_major, a_swizzle) = self.descriptor_suffixes("wgmma")?;
        let kind = kind.with_b_major(b_major);
        if self.peek().kind == TokenKind::LBrace {
            if a_swizzle != DescriptorSwizzle::B128 {
                return Err(Self::error_at(
                    &what,
                    "a wgmma with A from registers has no swizzle",
                ));
            }
            return self.wgmma_register_a(kind);
        }
        let a = self.match_shared()?;
        let mut operands = self.match_reg_group(TokenKind::LBracket, TokenKind::RBracket, "`[`")?;
        let b = self.wgmma_b(&mut operands)?;
        let kind = ThreadOpKind::Wgmma {
            kind,
            a,
            a_swizzle,
            b,
        };
        Ok((kind, operands))
    }

    /// The rest of a `wgmma` with A from registers, from its `{`.
    fn wgmma_register_a(
        &mut self,
        kind: WgmmaKind,
    ) -> Result<(ThreadOpKind, Vec<Reg>), ParseError> {
        let mut operands = self.match_reg_group(TokenKind::LBrace, TokenKind::RBrace, "`{`")?;
        let b = self.wgmma_b(&mut operands)?;
        Ok((ThreadOpKind::WgmmaRegisterA { kind, b }, operands))
    }

    /// `, @s<b>[%j], %c…` after A: B's allocation; its index and the
    /// accumulators join `operands`.
    fn wgmma_b(&mut self, operands: &mut Vec<Reg>) -> Result<SharedId, ParseError> {
        self.match_token(TokenKind::Comma, "`,`")?;
        let b = self.match_shared()?;
        operands.extend(self.match_reg_group(TokenKind::LBracket, TokenKind::RBracket, "`[`")?);
        self.match_token(TokenKind::Comma, "`,`")?;
        operands.extend(self.match_regs()?);
        Ok(b)
    }

    /// The optional `.bk` (a K-major B) and `.sw64` or `.sw32` (A's rows of
    /// 64 or 32 bytes; without one, 128), in that order, of a `wgmma` or
    /// `tcgen05.mma` (`op`): B's major and A's swizzle.
    pub(super) fn descriptor_suffixes(
        &mut self,
        op: &str,
    ) -> Result<(Major, DescriptorSwizzle), ParseError> {
        let (mut b_major, mut swizzle) = (Major::Mn, None);
        while self.peek().kind == TokenKind::Dot && swizzle.is_none() {
            self.bump();
            let word = self.match_ident("`bk`, `sw64` or `sw32`")?;
            if word.text == "bk" && b_major == Major::Mn {
                b_major = Major::K;
                continue;
            }
            swizzle = word
                .text
                .strip_prefix("sw")
                .and_then(|bytes| bytes.parse().ok())
                .and_then(DescriptorSwizzle::for_rows);
            if swizzle.is_none() {
                return Err(Self::error_at(
                    &word,
                    format!(
                        "unknown {op} suffix `{}`: `bk` (a K-major B), then `sw64` or `sw32`",
                        word.text
                    ),
                ));
            }
        }
        Ok((b_major, swizzle.unwrap_or(DescriptorSwizzle::B128)))
    }
}

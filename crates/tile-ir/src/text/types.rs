//! The syntax of types: `f32`, `tile<4x8xf32>`, `tensor<f32, 2>` (or
//! `tensor<f32, 2, aligned>`), `tensors<f32, 2>` and
//! `view<f32, [4, 8]>` (as [`crate::Type`]'s `Display` prints them).

use super::error::ParseError;
use super::lexer::TokenKind;
use super::parser::Parser;
use crate::dtype::DType;
use crate::types::{LayoutViewType, PartitionViewType, Shape, TensorType, TileType, Type};

impl Parser<'_, '_> {
    /// The rest of a `tensor<..>` or `tensors<..>` type after its `keyword`:
    /// `<f32, 2>` or `<f32, 2, aligned>`.
    fn tensor_type(&mut self, keyword: &str) -> Result<TensorType, ParseError> {
        self.match_token(TokenKind::LAngle, &format!("`<` after `{keyword}`"))?;
        let dtype = self.match_dtype()?;
        self.match_token(TokenKind::Comma, "`,` after the tensor's dtype")?;
        let rank = self.match_usize("a tensor rank")?;
        let aligned = self.peek_is(&TokenKind::Comma);
        if aligned {
            self.bump();
            self.match_keyword("aligned", "`aligned` or `>` after the tensor's rank")?;
        }
        self.match_token(TokenKind::RAngle, "`>` to close the tensor type")?;
        Ok(TensorType {
            dtype,
            rank,
            aligned,
        })
    }

    /// Consumes a type.
    pub fn parse_type(&mut self) -> Result<Type, ParseError> {
        if !self.peek_is(&TokenKind::Ident) {
            return Err(self.expected("a type"));
        }
        let token = self.bump();
        match token.text {
            "tile" => {
                self.match_token(TokenKind::LAngle, "`<` after `tile`")?;
                let mut dims = Vec::new();
                while self.peek_is(&TokenKind::Int) {
                    dims.push(self.match_usize("a tile extent")?);
                    self.match_token(TokenKind::Times, "`x` after a tile extent")?;
                }
                let dtype = self.match_dtype()?;
                self.match_token(TokenKind::RAngle, "`>` to close the tile type")?;
                Ok(Type::Tile(TileType {
                    shape: Shape::new(dims),
                    dtype,
                }))
            }
            "tensor" => Ok(Type::Tensor(self.tensor_type("tensor")?)),
            "tensors" => Ok(Type::Tensors(self.tensor_type("tensors")?)),
            "view" => {
                self.match_token(TokenKind::LAngle, "`<` after `view`")?;
                let dtype = self.match_dtype()?;
                self.match_token(TokenKind::Comma, "`,` after the view's dtype")?;
                let tile = Shape::new(self.match_int_list("dimension")?);
                self.match_token(TokenKind::RAngle, "`>` to close the view type")?;
                Ok(Type::PartitionView(PartitionViewType { dtype, tile }))
            }
            "lview" => {
                let open = self.match_token(TokenKind::LAngle, "`<` after `lview`")?;
                let dtype = self.match_dtype()?;
                self.match_token(TokenKind::Comma, "`,` after the layout view's dtype")?;
                let swizzle = if self.peek().is_keyword("Sw") {
                    let swizzle = self.match_swizzle()?;
                    self.match_keyword("o", "`o` between the swizzle and the layout")?;
                    Some(swizzle)
                } else {
                    None
                };
                let (layout, masked) = self.match_view_layout(&open)?;
                Ok(Type::LayoutView(LayoutViewType {
                    dtype,
                    layout,
                    masked,
                    swizzle,
                }))
            }
            name => name
                .parse()
                .map(Type::Scalar)
                .map_err(|_| Self::error_at(&token, format!("unknown type `{name}`"))),
        }
    }

    /// Consumes a dtype name.
    pub fn match_dtype(&mut self) -> Result<DType, ParseError> {
        let token = self.match_ident("a dtype")?;
        token
            .text
            .parse()
            .map_err(|e: crate::dtype::UnknownDType| Self::error_at(&token, e.to_string()))
    }
}

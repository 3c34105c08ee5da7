//! The op table's machinery: `thread_ops!` turns one row per op (its
//! variant, attribute fields with their syntaxes, its format and what its
//! results are) into [`super::ThreadOpKind`] and what the printer, the
//! parser and the verifier read from it.
//!
//! A row reads
//!
//! ```text
//! /// docs
//! LoadShared { alloc: SharedId as Shared, width: u8 as SharedWidth }
//!     = "ld.shared$width $alloc[%index:i32]" -> Rule,
//! ```
//!
//! where each field names its attribute syntax (`parse/syntax.rs`), the
//! format is as `tile_ir::format` describes, and the results are a
//! [`Results`]. Generated: the enum, `format`, `results`,
//! `write_attribute`, `attribute_count`, `parse_variant` and `ROWS`.

use tile_ir::DType;

/// What an op's results are, as far as its row says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Results {
    /// None.
    Nothing,
    /// One `i32`.
    I32,
    /// One `i64`.
    I64,
    /// One `bool`.
    Bool,
    /// Given by the op's typing rule in the verifier (they depend on its
    /// operands or attributes).
    Rule,
    /// A structured op's, given by its regions; its text and checks are
    /// its own (`for`, `while`, `if`).
    Region,
}

impl Results {
    /// The dtypes the row fixes, if it fixes them.
    pub(crate) fn fixed(self) -> Option<&'static [DType]> {
        match self {
            Results::Nothing => Some(&[]),
            Results::I32 => Some(&[DType::I32]),
            Results::I64 => Some(&[DType::I64]),
            Results::Bool => Some(&[DType::Bool]),
            Results::Rule | Results::Region => None,
        }
    }
}

/// Declares [`super::ThreadOpKind`] from its rows.
macro_rules! thread_ops {
    (
        $(#[$enum_meta:meta])*
        pub enum $kind:ident {
            $(
                $(#[$meta:meta])*
                $variant:ident
                $( { $( $(#[$field_meta:meta])* $field:ident : $field_ty:ty as $field_syntax:ty ),* $(,)? } )?
                $( ( $tuple:ident : $tuple_ty:ty as $tuple_syntax:ty ) )?
                = $format:literal -> $results:ident,
            )*
        }
    ) => {
        $(#[$enum_meta])*
        pub enum $kind {
            $(
                $(#[$meta])*
                $variant $( { $( $(#[$field_meta])* $field: $field_ty ),* } )? $( ($tuple_ty) )?,
            )*
        }

        impl $kind {
            /// Every op's variant name, format and attribute fields, in
            /// declaration order.
            pub(crate) const ROWS: &'static [(&'static str, &'static str, &'static [&'static str])] =
                &[$((
                    stringify!($variant),
                    $format,
                    &[$($(stringify!($field)),*)? $(stringify!($tuple))?],
                )),*];

            /// The op's format (`format.rs`).
            pub(crate) fn format(&self) -> &'static str {
                match self {
                    $(Self::$variant { .. } => $format,)*
                }
            }

            /// What the op's results are.
            pub(crate) fn results(&self) -> $crate::program::table::Results {
                match self {
                    $(Self::$variant { .. } => $crate::program::table::Results::$results,)*
                }
            }

            /// Writes the attribute `name` in its syntax.
            #[allow(unused_variables)]
            pub(crate) fn write_attribute(
                &self,
                name: &str,
                params: &[$crate::program::Param],
                out: &mut String,
            ) {
                use $crate::program::parse::syntax::Syntax;
                match self {
                    $(Self::$variant $({ $($field),* })? $(($tuple))? => {
                        $($(if name == stringify!($field) {
                            <$field_syntax as Syntax<$field_ty>>::write($field, params, out);
                        })*)?
                        $(if name == stringify!($tuple) {
                            <$tuple_syntax as Syntax<$tuple_ty>>::write($tuple, params, out);
                        })?
                    })*
                }
            }

            /// The attribute `name` as a number of operands, where it is one.
            #[allow(unused_variables)]
            pub(crate) fn attribute_count(&self, name: &str) -> Option<usize> {
                use $crate::program::parse::syntax::Syntax;
                match self {
                    $(Self::$variant $({ $($field),* })? $(($tuple))? => {
                        $($(if name == stringify!($field) {
                            return <$field_syntax as Syntax<$field_ty>>::count($field);
                        })*)?
                        $(if name == stringify!($tuple) {
                            return <$tuple_syntax as Syntax<$tuple_ty>>::count($tuple);
                        })?
                        None
                    })*
                }
            }

            /// Reads the rest of an op's line as the row of `variant`: the
            /// kind and its operands.
            #[allow(unused_mut, unused_variables)]
            pub(in crate::program) fn parse_variant(
                variant: &str,
                p: &mut $crate::program::parse::Parser<'_, '_>,
            ) -> Result<(Self, Vec<$crate::program::Reg>), tile_ir::text::ParseError> {
                use $crate::program::parse::syntax::Syntax;
                $(if variant == stringify!($variant) {
                    $($(let mut $field: Option<$field_ty> = None;)*)?
                    $(let mut $tuple: Option<$tuple_ty> = None;)?
                    let operands = p.fields($format, &mut |p, name| {
                        $($(if name == stringify!($field) {
                            $field = Some(<$field_syntax as Syntax<$field_ty>>::parse(p)?);
                        })*)?
                        $(if name == stringify!($tuple) {
                            $tuple = Some(<$tuple_syntax as Syntax<$tuple_ty>>::parse(p)?);
                        })?
                        Ok(())
                    })?;
                    let kind = Self::$variant
                        $({ $($field: p.read($field, stringify!($field))?),* })?
                        $((p.read($tuple, stringify!($tuple))?))?;
                    return Ok((kind, operands));
                })*
                Err(p.expected(&format!("an op ({variant} is not one)")))
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use crate::program::ThreadOpKind;

    /// Every row is well formed ([`tile_ir::format::check`]).
    #[test]
    fn every_row_is_well_formed() {
        for &(variant, format, fields) in ThreadOpKind::ROWS {
            assert_eq!(tile_ir::format::check(format, fields), Ok(()), "{variant}");
        }
    }
}

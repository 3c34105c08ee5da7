//! The op tables' machinery: `op_table!` turns one row per op (its variant,
//! its attribute fields with their text syntaxes, and its format) into the
//! enum ([`super::OpKind`], [`crate::LViewOp`]), its `name`, and the
//! [`Table`] the printer and the parser read.
//!
//! A row reads
//!
//! ```text
//! /// docs
//! Reduce { kind: ReduceKind as Word, axis: usize as Decimal, keepdim: bool as KeepDim }
//!     = "reduce $kind %operand axis $axis$keepdim",
//! ```
//!
//! where each field names its syntax (`text/syntax/`: how it is
//! written and read, or that it comes from the op's result type) and the
//! format is as [`crate::format`] describes. An op whose format starts
//! with an attribute is named by that attribute (`$op %operand*`: the
//! unary and binary ops, a nested table's op).

use crate::function::Value;
use crate::text::syntax::{Operands, Pending};
use crate::text::{ParseError, Parser};

/// One op of a table: its variant's name, its format, and each attribute
/// field with whether the line writes it (`false`: its result type gives
/// it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Row {
    /// The variant's name.
    pub variant: &'static str,
    /// The op's format.
    pub format: &'static str,
    /// Each attribute field's name, and whether the line writes it (read
    /// by the rows' well-formedness test).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fields: &'static [(&'static str, bool)],
}

/// What a table gives the printer and the parser.
pub(crate) trait Table: Sized + 'static {
    /// Every op's row, in declaration order.
    const ROWS: &'static [Row];

    /// The op's format.
    fn format(&self) -> &'static str;

    /// Writes the attribute `name` in its syntax.
    fn write_attribute(&self, name: &str, operands: &Operands<'_>, out: &mut String);

    /// The attribute `name` as a number of operands, where it is one.
    fn attribute_count(&self, name: &str) -> Option<usize>;

    /// Reads the rest of an op's line as the row of `variant`, pushing its
    /// operands; the kind waits for the result types.
    fn parse_variant(
        variant: &str,
        p: &mut Parser<'_, '_>,
        operands: &mut Vec<Value>,
    ) -> Result<Pending<Self>, ParseError>;
}

/// Declares an op enum from its rows (see the module docs).
macro_rules! op_table {
    (
        $(#[$enum_meta:meta])*
        pub enum $kind:ident {
            $(
                $(#[$meta:meta])*
                $variant:ident
                $( { $( $(#[$field_meta:meta])* $field:ident : $field_ty:ty as $field_syntax:ty ),* $(,)? } )?
                $( ( $tuple:ident : $tuple_ty:ty as $tuple_syntax:ty ) )?
                = $format:literal,
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
            /// The op's name as written in the text form and in error
            /// messages.
            pub fn name(&self) -> &'static str {
                let mnemonic =
                    $crate::format::mnemonic($crate::ops::table::Table::format(self));
                if !mnemonic.is_empty() {
                    return mnemonic;
                }
                match self {
                    $($(Self::$variant($tuple) => {
                        <$tuple_syntax as $crate::text::syntax::Syntax<$tuple_ty>>::word($tuple)
                    })?)*
                    #[allow(unreachable_patterns)]
                    _ => "",
                }
            }
        }

        impl $crate::ops::table::Table for $kind {
            const ROWS: &'static [$crate::ops::table::Row] = &[$(
                $crate::ops::table::Row {
                    variant: stringify!($variant),
                    format: $format,
                    fields: &[
                        $($((
                            stringify!($field),
                            <$field_syntax as $crate::text::syntax::Syntax<$field_ty>>::WRITTEN,
                        )),*)?
                        $((
                            stringify!($tuple),
                            <$tuple_syntax as $crate::text::syntax::Syntax<$tuple_ty>>::WRITTEN,
                        ))?
                    ],
                }
            ),*];

            fn format(&self) -> &'static str {
                match self {
                    $(Self::$variant { .. } => $format,)*
                }
            }

            #[allow(unused_variables)]
            fn write_attribute(
                &self,
                name: &str,
                operands: &$crate::text::syntax::Operands<'_>,
                out: &mut String,
            ) {
                use $crate::text::syntax::Syntax;
                match self {
                    $(Self::$variant $({ $($field),* })? $(($tuple))? => {
                        $($(if name == stringify!($field) {
                            <$field_syntax as Syntax<$field_ty>>::write($field, operands, out);
                        })*)?
                        $(if name == stringify!($tuple) {
                            <$tuple_syntax as Syntax<$tuple_ty>>::write($tuple, operands, out);
                        })?
                    })*
                }
            }

            #[allow(unused_variables)]
            fn attribute_count(&self, name: &str) -> Option<usize> {
                use $crate::text::syntax::Syntax;
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

            #[allow(unused_mut, unused_variables)]
            fn parse_variant(
                variant: &str,
                p: &mut $crate::text::Parser<'_, '_>,
                operands: &mut Vec<$crate::function::Value>,
            ) -> Result<$crate::text::syntax::Pending<Self>, $crate::text::ParseError> {
                use $crate::text::syntax::Syntax;
                $(if variant == stringify!($variant) {
                    $($(
                        let mut $field: Option<<$field_syntax as Syntax<$field_ty>>::Read> = None;
                    )*)?
                    $(let mut $tuple: Option<<$tuple_syntax as Syntax<$tuple_ty>>::Read> = None;)?
                    $crate::format::read_line(p, $format, operands, &mut |p, name, operands| {
                        $($(if name == stringify!($field) {
                            $field = Some(<$field_syntax as Syntax<$field_ty>>::parse(p, operands)?);
                        })*)?
                        $(if name == stringify!($tuple) {
                            $tuple = Some(<$tuple_syntax as Syntax<$tuple_ty>>::parse(p, operands)?);
                        })?
                        Ok(())
                    })?;
                    return Ok(Box::new(move |results| {
                        Ok(Self::$variant
                            $({ $($field: <$field_syntax as Syntax<$field_ty>>::finish($field, results)?),* })?
                            $((<$tuple_syntax as Syntax<$tuple_ty>>::finish($tuple, results)?))?)
                    }));
                })*
                Err(p.expected(&format!("an op ({variant} is not one)")))
            }
        }
    };
}

pub(crate) use op_table;

#[cfg(test)]
mod tests {
    use super::{Row, Table};
    use crate::{LViewOp, OpKind};

    /// The ops whose lines the parser and the printer write by hand (they
    /// open regions); their formats are their names.
    const BY_HAND: [&str; 3] = ["For", "While", "If"];

    /// Every row but those written by hand is well formed
    /// ([`crate::format::check`]).
    fn check(rows: &[Row]) {
        for row in rows.iter().filter(|r| !BY_HAND.contains(&r.variant)) {
            let written: Vec<&str> = row.fields.iter().filter(|f| f.1).map(|f| f.0).collect();
            assert_eq!(
                crate::format::check(row.format, &written),
                Ok(()),
                "{}",
                row.variant
            );
        }
    }

    #[test]
    fn every_row_is_well_formed() {
        check(OpKind::ROWS);
        check(LViewOp::ROWS);
    }
}

//! Whether an op table's row is well formed: [`check`], which the tables'
//! tests run on every row.

use super::{pieces, Count, Piece};
use crate::dtype::DType;

/// Whether an op table's row is well formed: its `format` names each
/// attribute of `written` (the fields its line writes) once and nothing
/// else, gives each fixed dtype a real name, counts lists by attributes it
/// has and by roles before them, closes its groups and has at most one
/// list of the operands left over; else what is wrong. The tables' tests
/// check every row.
pub fn check(format: &'static str, written: &[&str]) -> Result<(), String> {
    let pieces = pieces(format);
    let mut named: Vec<&str> = pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Attribute(a) => Some(*a),
            _ => None,
        })
        .collect();
    named.sort_unstable();
    let mut fields = written.to_vec();
    fields.sort_unstable();
    if named != fields {
        return Err(format!(
            "`{format}` names {named:?}, the row writes {fields:?}"
        ));
    }
    let mut roles = Vec::new();
    for piece in &pieces {
        if let Piece::Operand { name, list, .. } = piece {
            match list {
                Some(Count::Attribute(a)) if !named.contains(a) => {
                    return Err(format!("`{format}` counts by `{a}`, no attribute"))
                }
                Some(Count::Rank(role)) if !roles.contains(role) => {
                    return Err(format!("`{format}` counts by `{role}`, no role before"))
                }
                _ => {}
            }
            roles.push(*name);
        }
    }
    for operand in format.split('%').skip(1) {
        let role_end = operand
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(operand.len());
        if let Some(rest) = operand[role_end..].strip_prefix(':') {
            let dtype: String = rest
                .chars()
                .take_while(char::is_ascii_alphanumeric)
                .collect();
            if dtype.parse::<DType>().is_err() {
                return Err(format!("`{format}`: `{dtype}` is no dtype"));
            }
        }
    }
    let opens = pieces.iter().filter(|p| **p == Piece::GroupStart).count();
    let closes = pieces.iter().filter(|p| **p == Piece::GroupEnd).count();
    if opens != closes {
        return Err(format!(
            "`{format}` opens {opens} groups and closes {closes}"
        ));
    }
    let rest = pieces
        .iter()
        .filter(|p| {
            matches!(
                p,
                Piece::Operand {
                    list: Some(Count::Rest),
                    ..
                }
            )
        })
        .count();
    if rest > 1 {
        return Err(format!(
            "`{format}` has {rest} lists of the operands left over"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_row_says_what_is_wrong() {
        assert_eq!(check("dim %tensor axis $axis", &["axis"]), Ok(()));
        assert!(check("dim %tensor axis $axis", &[]).is_err());
        assert!(check("x %a*$n", &[]).is_err());
        assert!(check("x %a[%i*@b], %b", &[]).is_err());
        assert!(check("x %a:f31", &[]).is_err());
        assert!(check("x [? %a", &[]).is_err());
        assert!(check("x %a*, %b*", &[]).is_err());
    }
}

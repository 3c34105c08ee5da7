//! The operand formats of the op table (`table.rs`): how one op's line is
//! written, read as pieces, and where each operand role sits in the op's
//! operand list.
//!
//! A format is the op's text with placeholders:
//!
//! * `$name`: the attribute `name` of the op kind, written by its syntax
//!   (`syntax.rs`);
//! * `%name`: one operand; `%name:i32` one of a fixed dtype;
//! * `%name*`: a comma-separated list of operands, as many as the op has
//!   beyond its other operands; `%name*8` eight of them, `%name*$width` as
//!   many as the attribute `width` counts; a dtype may come before the `*`
//!   (`%masks:bool*$width`);
//! * `[? … ?]`: a group written only where the op's operands include it
//!   (and read where its first word follows);
//! * anything else: literal text.
//!
//! Operands sit in the operand list in the order the format writes them.

use super::ThreadOpKind;
use tile_ir::DType;

/// How many operands a list holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Count {
    /// Whatever the op's other operands leave.
    Rest,
    /// A fixed number.
    Fixed(usize),
    /// The count an attribute holds (a vector width).
    Attribute(&'static str),
}

/// One piece of a format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Text written as it stands.
    Literal(&'static str),
    /// An attribute of the op kind, by field name.
    Attribute(&'static str),
    /// An operand role: its name, its dtype where the format fixes one, and
    /// whether it is a list (and how long).
    Operand {
        name: &'static str,
        dtype: Option<DType>,
        list: Option<Count>,
    },
    /// The start of an optional group.
    GroupStart,
    /// The end of an optional group.
    GroupEnd,
}

/// The pieces of `format`, in order.
pub(crate) fn pieces(format: &'static str) -> Vec<Piece> {
    let bytes = format.as_bytes();
    let word_end = |from: usize| {
        (from..bytes.len())
            .find(|&i| !(bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_'))
            .unwrap_or(bytes.len())
    };
    let mut pieces = Vec::new();
    let (mut i, mut literal) = (0, 0);
    let flush = |pieces: &mut Vec<Piece>, literal: usize, end: usize| {
        if literal < end {
            pieces.push(Piece::Literal(&format[literal..end]));
        }
    };
    while i < bytes.len() {
        let piece_start = i;
        let piece = match (bytes[i], bytes.get(i + 1)) {
            (b'$', _) => {
                let end = word_end(i + 1);
                let name = &format[i + 1..end];
                i = end;
                Piece::Attribute(name)
            }
            (b'%', _) => {
                let end = word_end(i + 1);
                let name = &format[i + 1..end];
                i = end;
                let mut dtype = None;
                if bytes.get(i) == Some(&b':') {
                    let end = word_end(i + 1);
                    dtype = Some(format[i + 1..end].parse().unwrap_or(DType::Bool));
                    i = end;
                }
                let mut list = None;
                if bytes.get(i) == Some(&b'*') {
                    i += 1;
                    list = Some(match bytes.get(i) {
                        Some(b'$') => {
                            let end = word_end(i + 1);
                            let name = &format[i + 1..end];
                            i = end;
                            Count::Attribute(name)
                        }
                        Some(b) if b.is_ascii_digit() => {
                            let end = word_end(i);
                            let n = format[i..end].parse().unwrap_or(0);
                            i = end;
                            Count::Fixed(n)
                        }
                        _ => Count::Rest,
                    });
                }
                Piece::Operand { name, dtype, list }
            }
            (b'[', Some(b'?')) => {
                i += 2;
                Piece::GroupStart
            }
            (b'?', Some(b']')) => {
                i += 2;
                Piece::GroupEnd
            }
            _ => {
                i += 1;
                continue;
            }
        };
        flush(&mut pieces, literal, piece_start);
        pieces.push(piece);
        literal = i;
    }
    flush(&mut pieces, literal, bytes.len());
    pieces
}

/// The text before a format's first placeholder or space, without a
/// trailing `.`: the op's name (`ld.global` of `ld.global.$width …`).
pub(crate) fn mnemonic(format: &'static str) -> &'static str {
    let end = format.find(['$', '%', ' ', '[']).unwrap_or(format.len());
    format[..end].trim_end_matches('.')
}

/// Where an operand role sits in an op's operand list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    /// The role's name.
    pub name: &'static str,
    /// The dtype the format fixes, if any.
    pub dtype: Option<DType>,
    /// Its first operand.
    pub start: usize,
    /// Its operands: 1 for a single one.
    pub len: usize,
}

/// How one op's operands split into the roles of its format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Whether each optional group is written, in format order.
    pub groups: Vec<bool>,
    /// Each role's operands, in format order.
    pub slots: Vec<Slot>,
}

impl Layout {
    /// The split of `operands` operands of an op of `kind`, or `None` when
    /// no choice of its optional groups fits that many.
    pub(crate) fn of(kind: &ThreadOpKind, operands: usize) -> Option<Layout> {
        let pieces = pieces(kind.format());
        let groups = pieces.iter().filter(|p| **p == Piece::GroupStart).count();
        // Every group written first, then fewer: the fullest fit wins.
        (0u32..1 << groups)
            .rev()
            .find_map(|mask| Self::fit(kind, &pieces, mask, operands))
    }

    /// The layout with the groups of `mask` written, if `operands` fits it.
    fn fit(kind: &ThreadOpKind, pieces: &[Piece], mask: u32, operands: usize) -> Option<Layout> {
        let mut groups = Vec::new();
        let mut slots = Vec::new();
        let mut skipping = false;
        for piece in pieces {
            match *piece {
                Piece::GroupStart => {
                    let written = mask & (1 << groups.len()) != 0;
                    groups.push(written);
                    skipping = !written;
                }
                Piece::GroupEnd => skipping = false,
                Piece::Operand { name, dtype, list } if !skipping => {
                    let len = match list {
                        None => Some(1),
                        Some(Count::Fixed(n)) => Some(n),
                        Some(Count::Attribute(a)) => Some(kind.attribute_count(a)?),
                        Some(Count::Rest) => None,
                    };
                    slots.push((name, dtype, len));
                }
                _ => {}
            }
        }
        let fixed: usize = slots.iter().filter_map(|s| s.2).sum();
        let rest = slots.iter().filter(|s| s.2.is_none()).count();
        let left = operands.checked_sub(fixed)?;
        if rest > 1 || (rest == 0 && left != 0) {
            return None;
        }
        let mut start = 0;
        let slots = slots
            .into_iter()
            .map(|(name, dtype, len)| {
                let len = len.unwrap_or(left);
                let slot = Slot {
                    name,
                    dtype,
                    start,
                    len,
                };
                start += len;
                slot
            })
            .collect();
        Some(Layout { groups, slots })
    }

    /// The slot of role `name`.
    pub(crate) fn slot(&self, name: &str) -> Option<&Slot> {
        self.slots.iter().find(|s| s.name == name)
    }
}

/// An op's operands (or anything held per operand) by role name: the named
/// view the emulator and the emitters read instead of positions.
#[derive(Clone, Debug)]
pub struct Roles<'a, T> {
    layout: Layout,
    values: &'a [T],
}

impl<'a, T> Roles<'a, T> {
    /// `values`, one per operand of an op of `kind`, by role; `None` when
    /// their number fits no layout of its format.
    pub fn of(kind: &ThreadOpKind, values: &'a [T]) -> Option<Roles<'a, T>> {
        Some(Roles {
            layout: Layout::of(kind, values.len())?,
            values,
        })
    }

    /// The operands of role `name` (empty for a role the op does not
    /// have, or an optional group it does not write).
    pub fn list(&self, name: &str) -> &'a [T] {
        self.layout
            .slot(name)
            .map_or(&[], |s| &self.values[s.start..s.start + s.len])
    }

    /// The single operand of role `name`, if the op has it.
    pub fn get(&self, name: &str) -> Option<&'a T> {
        self.layout
            .slot(name)
            .filter(|s| s.len == 1)
            .map(|s| &self.values[s.start])
    }

    /// The role of operand number `index`.
    pub fn role_at(&self, index: usize) -> Option<&'static str> {
        let slots = self.layout.slots.iter();
        slots
            .filter(|s| (s.start..s.start + s.len).contains(&index))
            .map(|s| s.name)
            .next()
    }
}

impl Roles<'_, DType> {
    /// Whether every role whose dtype the format fixes has it.
    pub(crate) fn typed(&self) -> bool {
        self.layout.slots.iter().all(|s| {
            s.dtype.is_none_or(|d| {
                self.values[s.start..s.start + s.len]
                    .iter()
                    .all(|&x| x == d)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_format_reads_as_its_pieces() {
        let p = pieces("st.global.$width $param[%addr:i64][? if(%ok:bool) else[%lanes*$width]?]");
        assert_eq!(
            p,
            [
                Piece::Literal("st.global."),
                Piece::Attribute("width"),
                Piece::Literal(" "),
                Piece::Attribute("param"),
                Piece::Literal("["),
                Piece::Operand {
                    name: "addr",
                    dtype: Some(DType::I64),
                    list: None
                },
                Piece::Literal("]"),
                Piece::GroupStart,
                Piece::Literal(" if("),
                Piece::Operand {
                    name: "ok",
                    dtype: Some(DType::Bool),
                    list: None
                },
                Piece::Literal(") else["),
                Piece::Operand {
                    name: "lanes",
                    dtype: None,
                    list: Some(Count::Attribute("width"))
                },
                Piece::Literal("]"),
                Piece::GroupEnd,
            ]
        );
        assert_eq!(
            pieces("wgmma.$kind {%a*8}, %acc:f32*")[3],
            Piece::Operand {
                name: "a",
                dtype: None,
                list: Some(Count::Fixed(8))
            }
        );
        assert_eq!(mnemonic("ld.global.$width $param"), "ld.global");
        assert_eq!(mnemonic("ld.shared$width $alloc"), "ld.shared");
        assert_eq!(mnemonic("wgmma.fence"), "wgmma.fence");
        assert_eq!(mnemonic("$op %x"), "");
    }

    #[test]
    fn operands_split_by_role_and_groups_by_count() {
        let narrow = ThreadOpKind::LoadGlobal { param: 0, width: 1 };
        let roles = Roles::of(&narrow, &[10, 11, 12]).unwrap();
        assert_eq!(
            (roles.get("addr"), roles.get("ok"), roles.list("lanes")),
            (Some(&10), None, &[][..])
        );
        assert_eq!(
            (roles.list("masks"), roles.list("others")),
            (&[11][..], &[12][..])
        );
        let wide = ThreadOpKind::StoreGlobal { param: 0, width: 2 };
        let ops: Vec<u32> = (0..8).collect();
        let roles = Roles::of(&wide, &ops).unwrap();
        assert_eq!(
            (roles.get("addr"), roles.get("ok"), roles.list("lanes")),
            (Some(&0), Some(&1), &[2, 3][..])
        );
        assert_eq!(
            (roles.list("values"), roles.list("masks")),
            (&[4, 5][..], &[6, 7][..])
        );
        assert!(Roles::of(&wide, &ops[..7]).is_none());
        let store = ThreadOpKind::TmemStore;
        let roles = Roles::of(&store, &[1, 2, 3]).unwrap();
        assert_eq!(
            (roles.get("address"), roles.list("values")),
            (Some(&1), &[2, 3][..])
        );
        let at: Vec<_> = (0..4).map(|i| roles.role_at(i)).collect();
        assert_eq!(at, [Some("address"), Some("values"), Some("values"), None]);
    }
}

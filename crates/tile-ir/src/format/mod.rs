//! Op formats: how an op table (the tile IR's [`crate::OpKind`] and
//! [`crate::LViewOp`], the thread program's ops) writes one op's line, read
//! as pieces, and where each operand role sits in the op's operand list.
//!
//! A format is the op's text with placeholders:
//!
//! * `$name`: the attribute `name` of the op kind, written by its syntax;
//! * `%name`: one operand; `%name:i32` one of a fixed dtype;
//! * `%name*`: a comma-separated list of operands, as many as the op has
//!   beyond its other operands; `%name*8` eight of them, `%name*$shape` as
//!   many as the attribute `shape` counts (a vector width, a shape's rank),
//!   `%name*@tensor` as many as the rank of the tensor operand `tensor`; a
//!   dtype may come before the `*` (`%masks:bool*$width`);
//! * `[? … ?]`: a group written only where the op's operands include it
//!   (and read where its first word follows);
//! * anything else: literal text.
//!
//! Operands sit in the operand list in the order the format writes them.

use crate::dtype::DType;

mod check;
mod read;

pub use check::check;
pub use read::{read_line, AttributeReader, LineReader};

/// How many operands a list holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    /// Whatever the op's other operands leave.
    Rest,
    /// A fixed number.
    Fixed(usize),
    /// The count an attribute holds (a vector width, a shape's rank).
    Attribute(&'static str),
    /// The rank of the tensor operand of the named role.
    Rank(&'static str),
}

/// One piece of a format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Text written as it stands.
    Literal(&'static str),
    /// An attribute of the op kind, by field name.
    Attribute(&'static str),
    /// An operand role: its name, its dtype where the format fixes one, and
    /// whether it is a list (and how long).
    Operand {
        /// The role's name.
        name: &'static str,
        /// The dtype the format fixes, if any.
        dtype: Option<DType>,
        /// For a list, how many operands it holds.
        list: Option<Count>,
    },
    /// The start of an optional group.
    GroupStart,
    /// The end of an optional group.
    GroupEnd,
}

/// The pieces of `format`, in order.
pub fn pieces(format: &'static str) -> Vec<Piece> {
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
                        Some(&sigil @ (b'$' | b'@')) => {
                            let end = word_end(i + 1);
                            let name = &format[i + 1..end];
                            i = end;
                            if sigil == b'$' {
                                Count::Attribute(name)
                            } else {
                                Count::Rank(name)
                            }
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
/// trailing `.`: the op's name (`ld.global` of `ld.global.$width …`);
/// empty where the format starts with an attribute (`$op %x*`).
pub fn mnemonic(format: &'static str) -> &'static str {
    let end = format.find(['$', '%', ' ', '[']).unwrap_or(format.len());
    format[..end].trim_end_matches('.')
}

/// Where an operand role sits in an op's operand list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
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
pub struct Layout {
    /// Whether each optional group is written, in format order.
    pub groups: Vec<bool>,
    /// Each role's operands, in format order.
    pub slots: Vec<Slot>,
}

impl Layout {
    /// The split of `operands` operands by `format`, or `None` when no
    /// choice of its optional groups fits that many. `count` gives the
    /// length of a list counted by an attribute or by an operand's rank,
    /// seeing the roles placed before it. The fullest fit wins, earlier
    /// groups before later ones; a group that would hold no operands is
    /// not written.
    pub fn of(
        format: &'static str,
        operands: usize,
        count: &dyn Fn(Count, &[Slot]) -> Option<usize>,
    ) -> Option<Layout> {
        let pieces = pieces(format);
        let groups = pieces.iter().filter(|p| **p == Piece::GroupStart).count();
        // Counting down with the bits reversed tries every group first,
        // then drops the last groups before the first ones.
        let reversed = |n: u32| (0..groups).fold(0, |m, b| m | ((n >> b) & 1) << (groups - 1 - b));
        (0u32..1 << groups)
            .rev()
            .find_map(|n| Self::fit(&pieces, reversed(n), operands, count))
    }

    /// The layout with the groups of `mask` written, if `operands` fits it.
    fn fit(
        pieces: &[Piece],
        mask: u32,
        operands: usize,
        count: &dyn Fn(Count, &[Slot]) -> Option<usize>,
    ) -> Option<Layout> {
        let mut groups = Vec::new();
        let mut slots: Vec<Slot> = Vec::new();
        // The length of the list taking the rest, filled in at the end.
        let mut rest = None;
        let mut skipping = false;
        let mut group_operands = 0;
        for piece in pieces {
            match *piece {
                Piece::GroupStart => {
                    let written = mask & (1 << groups.len()) != 0;
                    groups.push(written);
                    skipping = !written;
                    group_operands = 0;
                }
                Piece::GroupEnd => {
                    if !skipping && group_operands == 0 {
                        return None;
                    }
                    skipping = false;
                }
                Piece::Operand { name, dtype, list } if !skipping => {
                    let len = match list {
                        None => 1,
                        Some(Count::Fixed(n)) => n,
                        Some(Count::Rest) if rest.is_none() => {
                            rest = Some(slots.len());
                            0
                        }
                        Some(Count::Rest) => return None,
                        Some(counted) => count(counted, &slots)?,
                    };
                    group_operands += len;
                    slots.push(Slot {
                        name,
                        dtype,
                        start: 0,
                        len,
                    });
                }
                _ => {}
            }
        }
        let fixed: usize = slots.iter().map(|s| s.len).sum();
        let left = operands.checked_sub(fixed)?;
        match rest {
            Some(index) => slots[index].len = left,
            None if left != 0 => return None,
            None => {}
        }
        let mut start = 0;
        for slot in &mut slots {
            slot.start = start;
            start += slot.len;
        }
        Some(Layout { groups, slots })
    }

    /// A best-effort split of `operands` operands that fit no layout of
    /// `format` (a malformed op, to print): no group written, each single
    /// role the next operand (past the end where there are too few), a
    /// list what is left.
    pub fn partial(format: &'static str, operands: usize) -> Layout {
        let pieces = pieces(format);
        let singles = pieces
            .iter()
            .filter(|p| matches!(p, Piece::Operand { list: None, .. }))
            .count();
        let mut slots = Vec::new();
        let (mut start, mut skipping, mut groups) = (0, false, Vec::new());
        for piece in &pieces {
            match *piece {
                Piece::GroupStart => {
                    groups.push(false);
                    skipping = true;
                }
                Piece::GroupEnd => skipping = false,
                Piece::Operand { name, dtype, list } if !skipping => {
                    let len = match list {
                        None => 1,
                        Some(_) => operands.saturating_sub(singles),
                    };
                    slots.push(Slot {
                        name,
                        dtype,
                        start,
                        len,
                    });
                    start += len;
                }
                _ => {}
            }
        }
        Layout { groups, slots }
    }

    /// The slot of role `name`.
    pub fn slot(&self, name: &str) -> Option<&Slot> {
        self.slots.iter().find(|s| s.name == name)
    }

    /// The line `format` writes under this layout: literal text as it
    /// stands, each attribute by `attribute`, each role's operands by
    /// `operands`; trailing spaces trimmed.
    pub fn render(
        &self,
        format: &'static str,
        attribute: &mut dyn FnMut(&str, &mut String),
        operands: &mut dyn FnMut(&Slot, &mut String),
    ) -> String {
        let mut line = String::new();
        let (mut group, mut skipping) = (0, false);
        for piece in pieces(format) {
            match piece {
                Piece::GroupStart => {
                    skipping = !self.groups.get(group).copied().unwrap_or(false);
                    group += 1;
                }
                Piece::GroupEnd => skipping = false,
                _ if skipping => {}
                Piece::Literal(text) => line.push_str(text),
                Piece::Attribute(name) => attribute(name, &mut line),
                Piece::Operand { name, .. } => {
                    if let Some(slot) = self.slot(name) {
                        operands(slot, &mut line);
                    }
                }
            }
        }
        line.truncate(line.trim_end().len());
        line
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
        assert_eq!(
            pieces("gather %tensor[%index*@tensor], %operand*")[3],
            Piece::Operand {
                name: "index",
                dtype: None,
                list: Some(Count::Rank("tensor"))
            }
        );
        assert_eq!(mnemonic("ld.global.$width $param"), "ld.global");
        assert_eq!(mnemonic("ld.shared$width $alloc"), "ld.shared");
        assert_eq!(mnemonic("wgmma.fence"), "wgmma.fence");
        assert_eq!(mnemonic("$op %x"), "");
    }

    /// Counts by rank see the roles before them; groups without operands
    /// are not written; a malformed op still splits for printing.
    #[test]
    fn operands_split_by_counts_and_groups() {
        let rank = |c: Count, placed: &[Slot]| match c {
            Count::Rank(role) => placed.iter().any(|s| s.name == role).then_some(2),
            Count::Attribute(_) => Some(0),
            _ => None,
        };
        let gather = "gather %tensor[%index*@tensor], %operand*";
        let layout = Layout::of(gather, 5, &rank).unwrap();
        let lens: Vec<_> = layout
            .slots
            .iter()
            .map(|s| (s.name, s.start, s.len))
            .collect();
        assert_eq!(lens, [("tensor", 0, 1), ("index", 1, 2), ("operand", 3, 2)]);
        assert!(Layout::of(gather, 2, &rank).is_none());
        let view = "partition_view %tensor $shape[? offset(%offset*$shape)?]";
        let layout = Layout::of(view, 1, &rank).unwrap();
        assert_eq!(layout.groups, [false]);
        let line = layout.render(view, &mut |_, out| out.push_str("[]"), &mut |s, out| {
            out.push_str(s.name)
        });
        assert_eq!(line, "partition_view tensor []");
        let partial = Layout::partial("store %tile, %view[%index*]", 1);
        let lens: Vec<_> = partial.slots.iter().map(|s| (s.start, s.len)).collect();
        assert_eq!(lens, [(0, 1), (1, 1), (2, 0)]);
    }
}

//! The op table's formats (`table.rs`) in the thread program: the format
//! grammar is [`tile_ir::format`]'s; here, how a thread op's operands split
//! into its roles ([`Roles`]), with lists counted by its attributes.

use super::ThreadOpKind;
use tile_ir::format::{Count, Layout};
use tile_ir::DType;

/// The split of `operands` operands of an op of `kind` by its format.
pub(crate) fn layout(kind: &ThreadOpKind, operands: usize) -> Option<Layout> {
    Layout::of(kind.format(), operands, &|count, _| match count {
        Count::Attribute(name) => kind.attribute_count(name),
        _ => None,
    })
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
            layout: layout(kind, values.len())?,
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

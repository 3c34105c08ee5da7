//! Arenas of IR entities named by typed `u32` handles.
//!
//! An entity is appended once and never removed; passes that delete ops simply
//! stop referring to them. A [`Handle`] is four bytes, `Copy`, and cannot be
//! confused with the handle of another entity kind.

use std::fmt;
use std::marker::PhantomData;

/// A typed index into an [`Arena<T>`].
pub struct Handle<T> {
    index: u32,
    kind: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    /// The handle of the entity stored at `index`.
    pub fn from_index(index: usize) -> Self {
        let index = u32::try_from(index).expect("an arena holds at most u32::MAX entities");
        Handle {
            index,
            kind: PhantomData,
        }
    }

    /// The position of this handle's entity in its arena.
    pub fn index(self) -> usize {
        self.index as usize
    }
}

impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Handle<T> {}
impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}
impl<T> Eq for Handle<T> {}
impl<T> PartialOrd for Handle<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Handle<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.index.cmp(&other.index)
    }
}
impl<T> std::hash::Hash for Handle<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.index.hash(state);
    }
}
impl<T> fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.index)
    }
}

/// Append-only storage of entities of one kind.
#[derive(Clone, Debug, PartialEq)]
pub struct Arena<T> {
    items: Vec<T>,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena { items: Vec::new() }
    }
}

impl<T> Arena<T> {
    /// An empty arena.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `item` and returns its handle.
    pub fn append(&mut self, item: T) -> Handle<T> {
        let handle = Handle::from_index(self.items.len());
        self.items.push(item);
        handle
    }

    /// The number of entities stored.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the arena holds no entity.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The entity named by `handle`, or `None` for a handle of another arena
    /// that points past this one's end.
    pub fn get(&self, handle: Handle<T>) -> Option<&T> {
        self.items.get(handle.index())
    }

    /// Every entity, mutably, in the order they were appended.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.items.iter_mut()
    }

    /// Every handle with its entity, in the order they were appended.
    pub fn iter(&self) -> impl Iterator<Item = (Handle<T>, &T)> {
        self.items
            .iter()
            .enumerate()
            .map(|(i, item)| (Handle::from_index(i), item))
    }
}

impl<T> std::ops::Index<Handle<T>> for Arena<T> {
    type Output = T;
    fn index(&self, handle: Handle<T>) -> &T {
        &self.items[handle.index()]
    }
}

impl<T> std::ops::IndexMut<Handle<T>> for Arena<T> {
    fn index_mut(&mut self, handle: Handle<T>) -> &mut T {
        &mut self.items[handle.index()]
    }
}

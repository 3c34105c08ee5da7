//! The tile IR (work in progress).

pub mod layout;

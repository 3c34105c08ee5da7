//! The tile IR (work in progress).
pub mod descriptor;
pub mod view;

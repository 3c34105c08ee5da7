//! The tile IR (work in progress).

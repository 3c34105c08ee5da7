//! Public `#[tile_fn]` helpers, as a library of shared kernel code would
//! export them: kernels in other crates name them in `uses(..)` by their
//! path in this crate (`tests/shared_helpers.rs` in the workspace's root).
//! Two modules define a helper of the same name, which must not collide.

use tile_macros::tile_fn;

/// Activation functions.
pub mod activations {
    use tile_macros::tile_fn;

    /// `x · sigmoid(x)`.
    #[tile_fn]
    pub fn silu(t: Tile) -> Tile {
        t / ((-t).exp() + 1.0)
    }

    /// `max(x, 0)²`, through [`super::squared`].
    #[tile_fn]
    pub fn relu_squared(t: Tile) -> Tile {
        squared(max(t, 0.0))
    }
}

/// Polynomials.
pub mod poly {
    use tile_macros::tile_fn;

    /// `x² + 1`: the same name as the crate root's `squared`.
    #[tile_fn]
    pub fn squared(t: Tile) -> Tile {
        t * t + 1.0
    }
}

/// `x²`.
#[tile_fn]
pub fn squared(t: Tile) -> Tile {
    t * t
}

//! Results written with a `scatter` ([`Gen::scatter_output`]): each
//! program writes its tile to the elements of a 1-D tensor that it alone
//! owns, rotated by a constant, under a generated mask; the elements it
//! masks off keep the tensor's input values.

use super::{Built, Gen};
use tile_ir::builder::Builder;
use tile_ir::{BinaryOp, DType, TileType, Type};

impl Gen<'_> {
    /// Builds a value of tile type `t` and scatters it into a new 1-D
    /// tensor of `programs · numel` elements: element `j` (row-major) of
    /// program `p` to `p · numel + (j + shift) mod numel`, where the mask
    /// holds. Half the time `shift` is 0, so that a thread's consecutive
    /// elements are consecutive in the tensor.
    pub(super) fn scatter_output(&mut self, b: &mut Builder, t: &TileType) -> Built<()> {
        let depth = self.rng.range(1, self.cfg.max_depth.max(1));
        let dims = t.shape.dims().to_vec();
        let numel: usize = dims.iter().product();
        let programs = self.grid.iter().product::<u32>() as usize;
        let tensor = self.tensor_param(b, t.dtype, vec![programs * numel])?;
        let value = self.value(b, &Type::Tile(t.clone()), depth)?;
        let mask = self.value(b, &super::tile(dims.clone(), DType::Bool), depth)?;
        let shift = if self.rng.chance(0.5) {
            0
        } else {
            self.rng.range(0, numel.max(1) - 1)
        };
        let pid = self.linear_program(b)?;
        let constant = |g: &mut Self, b: &mut Builder, v: usize| -> Built<_> {
            let c = g.int_constant(b, DType::I32, v as i128)?;
            b.broadcast(c, &dims)
        };
        let j = b.iota(&dims, DType::I32)?;
        let shift = constant(self, b, shift)?;
        let shifted = b.binary(BinaryOp::Add, j, shift)?;
        let numel_tile = constant(self, b, numel)?;
        let rotated = b.binary(BinaryOp::Rem, shifted, numel_tile)?;
        let size = self.int_constant(b, DType::I32, numel as i128)?;
        let start = b.binary(BinaryOp::Mul, pid, size)?;
        let start = b.broadcast(start, &dims)?;
        let index = b.binary(BinaryOp::Add, rotated, start)?;
        b.scatter(tensor, &[index], value, mask)?;
        Ok(())
    }
}

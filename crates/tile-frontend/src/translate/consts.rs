//! Compile-time arguments: shape and axis lists, single axes, counts and
//! dtype turbofish arguments. They are ordinary expressions over literals
//! and const parameters, folded while translating.

use super::{Translator, Val};
use crate::signature::{dtype_of, ELEMENT_TYPES};
use quote::ToTokens;
use syn::{Expr, GenericArgument};
use tile_ir::DType;

impl Translator<'_> {
    /// A compile-time integer argument.
    pub(crate) fn const_int(&mut self, e: &Expr, what: &str) -> syn::Result<i128> {
        match self.expr(e)? {
            Val::Int(i) => Ok(i),
            other => Err(self.err(
                e,
                format!("{what} must be a compile-time integer (literals, const parameters and arithmetic on them), found {}", self.describe(&other)),
            )),
        }
    }

    /// A non-negative compile-time integer.
    pub(crate) fn const_usize(&mut self, e: &Expr, what: &str) -> syn::Result<usize> {
        let i = self.const_int(e, what)?;
        usize::try_from(i)
            .map_err(|_| self.err(e, format!("{what} must not be negative, found {i}")))
    }

    /// The elements of an array argument `[a, b, ...]`.
    pub(crate) fn array_elems<'e>(&self, e: &'e Expr, what: &str) -> syn::Result<Vec<&'e Expr>> {
        match e {
            Expr::Array(a) => Ok(a.elems.iter().collect()),
            Expr::Reference(r) => self.array_elems(&r.expr, what),
            Expr::Paren(p) => self.array_elems(&p.expr, what),
            other => Err(self.err(
                other,
                format!("{what} is written as an array, e.g. `[BM, BN]`"),
            )),
        }
    }

    /// A tile shape `[M, N, ...]`: positive compile-time extents.
    pub(crate) fn shape_arg(&mut self, e: &Expr) -> syn::Result<Vec<usize>> {
        let elems = self.array_elems(e, "a shape")?;
        if elems.is_empty() {
            return Err(self.err(e, "a tile shape needs at least one extent"));
        }
        let mut out = Vec::new();
        for x in elems {
            let d = self.const_usize(x, "a tile extent")?;
            if d == 0 {
                return Err(self.err(x, "tile extents must be positive, found 0"));
            }
            out.push(d);
        }
        Ok(out)
    }

    /// A list of non-negative integers `[a, b, ...]` (axes, amounts).
    pub(crate) fn usize_list(&mut self, e: &Expr, what: &str) -> syn::Result<Vec<usize>> {
        let elems = self.array_elems(e, what)?;
        elems
            .into_iter()
            .map(|x| self.const_usize(x, what))
            .collect()
    }

    /// An axis of a tile of rank `rank`; negative axes count from the end.
    pub(crate) fn axis_arg(&mut self, e: &Expr, rank: usize, of: &str) -> syn::Result<usize> {
        let a = self.const_int(e, "an axis")?;
        let r = rank as i128;
        let norm = if a < 0 { a + r } else { a };
        if norm < 0 || norm >= r {
            return Err(self.err(
                e,
                format!("axis {a} is out of range for {of} of rank {rank} (axes are 0..{rank})"),
            ));
        }
        Ok(norm as usize)
    }

    /// The dtype of a turbofish argument `::<f32>`, if one is written.
    pub(crate) fn turbofish_dtype(
        &self,
        args: Option<&syn::AngleBracketedGenericArguments>,
        node: &dyn ToTokens,
    ) -> syn::Result<Option<DType>> {
        let Some(args) = args else { return Ok(None) };
        let mut it = args.args.iter();
        let d = match it.next() {
            Some(GenericArgument::Type(syn::Type::Path(p))) => {
                p.path.get_ident().and_then(dtype_of)
            }
            _ => None,
        };
        let Some(d) = d else {
            return Err(self.err(args, format!("expected an element type ({ELEMENT_TYPES})")));
        };
        if it.next().is_some() {
            return Err(self.err(node, "expected one type argument"));
        }
        Ok(Some(d))
    }
}

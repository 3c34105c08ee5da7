//! The kernel's signature: const generic parameters (tile sizes and other
//! compile-time integers) and the runtime parameters, global tensors
//! (`&Tensor<T>` read, `&mut Tensor<T>` written, rank 1 unless written as
//! `Tensor<T, 2>`), tensor arrays (`&[Tensor<T, R>]`, `&mut [Tensor<T, R>]`)
//! and scalars.

use crate::diag::err;
use syn::{
    FnArg, GenericArgument, GenericParam, Ident, ItemFn, Pat, PathArguments, Type, Visibility,
};
pub use tile_abi::ParamKind;
use tile_ir::DType;

/// The integer types a const parameter may have.
const CONST_TYPES: [&str; 8] = ["usize", "u32", "u64", "i32", "i64", "isize", "u16", "i16"];

/// A const generic parameter of the kernel.
#[derive(Clone, Debug)]
pub struct ConstParam {
    /// Its name, e.g. `BLOCK`.
    pub name: Ident,
    /// Its Rust type, e.g. `usize`.
    pub ty: Ident,
}

/// A runtime parameter of the kernel.
#[derive(Clone, Debug)]
pub struct ParamSig {
    /// Its name.
    pub name: Ident,
    /// Its element type.
    pub dtype: DType,
    /// The Rust element type as written (`f32`, `f16`, ...).
    pub elem: Ident,
    /// Tensor or scalar.
    pub kind: ParamKind,
    /// Whether the attribute promises this tensor aligned (`aligned(...)`,
    /// [`KernelSig::mark_aligned`]).
    pub aligned: bool,
}

/// The signature of a `#[tile_kernel]` function.
#[derive(Clone, Debug)]
pub struct KernelSig {
    /// The kernel's name.
    pub name: Ident,
    /// Its visibility, given to the generated launcher.
    pub vis: Visibility,
    /// Its const generic parameters, in order.
    pub consts: Vec<ConstParam>,
    /// Its runtime parameters, in order.
    pub params: Vec<ParamSig>,
}

impl KernelSig {
    /// Reads and checks the signature of `item`.
    pub fn parse(item: &ItemFn) -> syn::Result<KernelSig> {
        let sig = &item.sig;
        if let Some(t) = &sig.asyncness {
            return Err(err(t, "a tile kernel cannot be `async`"));
        }
        if let Some(t) = &sig.unsafety {
            return Err(err(
                t,
                "a tile kernel cannot be `unsafe`: launches are checked, so the launcher is safe",
            ));
        }
        if let Some(t) = &sig.constness {
            return Err(err(t, "a tile kernel cannot be `const`"));
        }
        if let Some(t) = &sig.abi {
            return Err(err(t, "a tile kernel cannot have an `extern` ABI"));
        }
        if let Some(v) = &sig.variadic {
            return Err(err(v, "a tile kernel cannot be variadic"));
        }
        if let syn::ReturnType::Type(_, ty) = &sig.output {
            if !matches!(&**ty, Type::Tuple(t) if t.elems.is_empty()) {
                return Err(err(
                    ty,
                    "a tile kernel returns nothing: write results to a `&mut Tensor<T>` parameter",
                ));
            }
        }
        if let Some(w) = &sig.generics.where_clause {
            return Err(err(w, "a tile kernel cannot have a `where` clause"));
        }
        let mut consts = Vec::new();
        for g in &sig.generics.params {
            match g {
                GenericParam::Const(c) => {
                    let ty = match &c.ty {
                        Type::Path(p) => p.path.get_ident().filter(|i| CONST_TYPES.contains(&i.to_string().as_str())),
                        _ => None,
                    };
                    let Some(ty) = ty.cloned() else {
                        return Err(err(&c.ty, format!("a const parameter has an integer type ({})", CONST_TYPES.join(", "))));
                    };
                    if let Some(d) = &c.default {
                        return Err(err(d, "const parameters take their values from `configs(...)`, not from defaults"));
                    }
                    consts.push(ConstParam { name: c.ident.clone(), ty });
                }
                GenericParam::Type(t) => {
                    return Err(err(t, "a tile kernel has no type parameters: write one kernel per dtype, or a const parameter"))
                }
                GenericParam::Lifetime(l) => return Err(err(l, "a tile kernel has no lifetime parameters")),
            }
        }
        let mut params: Vec<ParamSig> = Vec::new();
        for input in &sig.inputs {
            let FnArg::Typed(pt) = input else {
                return Err(err(
                    input,
                    "a tile kernel is a free function; it takes no `self`",
                ));
            };
            let Pat::Ident(pi) = &*pt.pat else {
                return Err(err(&pt.pat, "a kernel parameter is a plain name"));
            };
            if pi.by_ref.is_some() || pi.mutability.is_some() || pi.subpat.is_some() {
                return Err(err(
                    &pt.pat,
                    "a kernel parameter is a plain name (no `mut`, `ref` or `@`)",
                ));
            }
            let name = pi.ident.clone();
            if name.to_string().starts_with("r#") {
                return Err(err(
                    &name,
                    "raw identifiers are not supported as kernel parameter names",
                ));
            }
            if params.iter().any(|p| p.name == name) || consts.iter().any(|c| c.name == name) {
                return Err(err(
                    &name,
                    format!("the parameter name `{name}` is used twice"),
                ));
            }
            let (dtype, elem, kind) = param_type(&pt.ty)?;
            params.push(ParamSig {
                name,
                dtype,
                elem,
                kind,
                aligned: false,
            });
        }
        Ok(KernelSig {
            name: sig.ident.clone(),
            vis: item.vis.clone(),
            consts,
            params,
        })
    }

    /// Marks the tensor parameters `names` (from `aligned(...)`) aligned;
    /// an error at the name that is no tensor parameter, or is named twice.
    pub fn mark_aligned(&mut self, names: &[Ident]) -> syn::Result<()> {
        for name in names {
            let kernel = &self.name;
            let param = self
                .params
                .iter_mut()
                .find(|p| p.name == *name)
                .ok_or_else(|| {
                    err(
                        name,
                        format!("`aligned` names `{name}`, which is not a parameter of `{kernel}`"),
                    )
                })?;
            if param.kind == ParamKind::Scalar {
                return Err(err(
                    name,
                    format!("`aligned` takes tensor parameters; `{name}` is a scalar"),
                ));
            }
            if param.aligned {
                return Err(err(name, format!("`{name}` is named twice in `aligned`")));
            }
            param.aligned = true;
        }
        Ok(())
    }
}

/// The dtype of a Rust element type, if it is one tiles can hold.
pub fn dtype_of(ident: &Ident) -> Option<DType> {
    dtype_named(&ident.to_string())
}

/// The dtype of a Rust element type name (`f32`, `bf16`, ...).
pub fn dtype_named(name: &str) -> Option<DType> {
    match name {
        "bool" => Some(DType::Bool),
        "i8" => Some(DType::I8),
        "i16" => Some(DType::I16),
        "i32" => Some(DType::I32),
        "i64" => Some(DType::I64),
        "u8" => Some(DType::U8),
        "u16" => Some(DType::U16),
        "u32" => Some(DType::U32),
        "u64" => Some(DType::U64),
        "f16" => Some(DType::F16),
        "bf16" => Some(DType::BF16),
        "f32" => Some(DType::F32),
        "f64" => Some(DType::F64),
        "f8e4m3" => Some(DType::F8E4M3),
        "f8e5m2" => Some(DType::F8E5M2),
        "f4e2m1" => Some(DType::F4E2M1),
        "f6e2m3" => Some(DType::F6E2M3),
        "f6e3m2" => Some(DType::F6E3M2),
        "f8e8m0" => Some(DType::F8E8M0),
        _ => None,
    }
}

/// The element types, as listed in errors.
pub const ELEMENT_TYPES: &str =
    "bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64, f8e4m3, f8e5m2, f4e2m1, f6e2m3, f6e3m2, f8e8m0";

fn elem_type(ty: &Type) -> syn::Result<(DType, Ident)> {
    if let Type::Path(p) = ty {
        if let Some(id) = p.path.get_ident() {
            if let Some(d) = dtype_of(id) {
                return Ok((d, id.clone()));
            }
        }
    }
    Err(err(
        ty,
        format!("expected an element type ({ELEMENT_TYPES})"),
    ))
}

fn param_type(ty: &Type) -> syn::Result<(DType, Ident, ParamKind)> {
    let Type::Reference(r) = ty else {
        if let Ok((d, id)) = elem_type(ty) {
            return Ok((d, id, ParamKind::Scalar));
        }
        return Err(err(
            ty,
            format!("a kernel parameter is `&Tensor<T>`, `&mut Tensor<T>`, `&Tensor<T, RANK>`, a tensor array `&[Tensor<T, RANK>]` or a scalar ({ELEMENT_TYPES})"),
        ));
    };
    let mutable = r.mutability.is_some();
    if let Type::Slice(slice) = &*r.elem {
        let (dtype, elem, rank) = tensor_type(&slice.elem)?;
        return Ok((dtype, elem, ParamKind::Tensors { rank, mutable }));
    }
    let (dtype, elem, rank) = tensor_type(&r.elem)?;
    Ok((dtype, elem, ParamKind::Tensor { rank, mutable }))
}

/// `Tensor<T>` or `Tensor<T, RANK>`: the element type and the rank.
fn tensor_type(ty: &Type) -> syn::Result<(DType, Ident, usize)> {
    let tensor = match ty {
        Type::Path(p) if p.qself.is_none() => {
            p.path.segments.last().filter(|s| s.ident == "Tensor")
        }
        _ => None,
    };
    let Some(seg) = tensor else {
        return Err(err(
            ty,
            "a reference parameter must be `&Tensor<T>`, `&mut Tensor<T>` or a tensor array `&[Tensor<T>]`",
        ));
    };
    let PathArguments::AngleBracketed(args) = &seg.arguments else {
        return Err(err(
            seg,
            "write the element type: `Tensor<f32>` (and the rank if not 1: `Tensor<f32, 2>`)",
        ));
    };
    let mut it = args.args.iter();
    let (dtype, elem) = match it.next() {
        Some(GenericArgument::Type(t)) => elem_type(t)?,
        _ => {
            return Err(err(
                args,
                "the first argument of `Tensor<..>` is the element type",
            ))
        }
    };
    let rank = match it.next() {
        None => 1,
        Some(GenericArgument::Const(syn::Expr::Lit(l))) => rank_lit(&l.lit)?,
        Some(GenericArgument::Type(Type::Path(p))) if p.path.get_ident().is_some() => {
            return Err(err(
                p,
                "the rank of a tensor is written as an integer literal, e.g. `Tensor<f32, 2>`",
            ))
        }
        Some(other) => {
            return Err(err(
                other,
                "the rank of a tensor is written as an integer literal, e.g. `Tensor<f32, 2>`",
            ))
        }
    };
    if let Some(extra) = it.next() {
        return Err(err(
            extra,
            "`Tensor` takes an element type and an optional rank",
        ));
    }
    Ok((dtype, elem, rank))
}

fn rank_lit(lit: &syn::Lit) -> syn::Result<usize> {
    let syn::Lit::Int(i) = lit else {
        return Err(err(lit, "the rank of a tensor is an integer literal"));
    };
    let rank: usize = i.base10_parse()?;
    if rank == 0 || rank > 8 {
        return Err(err(
            i,
            format!("a tensor has 1 to 8 axes, found rank {rank}"),
        ));
    }
    Ok(rank)
}

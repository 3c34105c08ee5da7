//! Specializations: one value for every const parameter, taken from the
//! attribute's `configs(...)` sets and checked against the signature.

use crate::attr::KernelAttr;
use crate::diag::{err, err_at};
use crate::signature::KernelSig;
use proc_macro2::Span;
use std::fmt;

/// The values of a kernel's const parameters for one compiled version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Specialization {
    /// `(name, value)` in the order of the kernel's const parameters.
    pub values: Vec<(String, i128)>,
}

impl Specialization {
    /// The label used in dumps and messages: `BM=64,BN=64`, or `default` for
    /// a kernel without const parameters.
    pub fn label(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Specialization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.values.is_empty() {
            return f.write_str("default");
        }
        for (i, (n, v)) in self.values.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{n}={v}")?;
        }
        Ok(())
    }
}

/// The specializations the attribute asks for, one per `configs(...)`, or the
/// single empty one for a kernel without const parameters.
pub fn resolve(attr: &KernelAttr, sig: &KernelSig) -> syn::Result<Vec<Specialization>> {
    let names: Vec<String> = sig.consts.iter().map(|c| c.name.to_string()).collect();
    if sig.consts.is_empty() {
        if let Some(c) = attr.configs.first() {
            return Err(err_at(
                c.span,
                format!(
                    "`configs(...)` sets const parameters, but `{}` has none",
                    sig.name
                ),
            ));
        }
        return Ok(vec![Specialization { values: Vec::new() }]);
    }
    if attr.configs.is_empty() {
        return Err(err_at(
            Span::call_site(),
            format!(
                "`{}` has const parameters ({}) but no specialization: add `configs({})` to the attribute",
                sig.name,
                names.join(", "),
                names.iter().map(|n| format!("{n} = ...")).collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    let mut out: Vec<Specialization> = Vec::new();
    for config in &attr.configs {
        for (name, _) in &config.values {
            if !names.contains(&name.to_string()) {
                return Err(err(
                    name,
                    format!(
                        "`{name}` is not a const parameter of `{}`; its const parameters are {}",
                        sig.name,
                        names.join(", ")
                    ),
                ));
            }
        }
        let mut values = Vec::new();
        for c in &sig.consts {
            let Some((_, lit)) = config.values.iter().find(|(n, _)| *n == c.name) else {
                return Err(err_at(
                    config.span,
                    format!(
                        "this `configs(...)` is missing a value for the const parameter `{}`",
                        c.name
                    ),
                ));
            };
            let value: i128 = lit.base10_parse()?;
            check_range(value, &c.ty.to_string())
                .map_err(|m| err(lit, format!("`{}`: {m}", c.name)))?;
            values.push((c.name.to_string(), value));
        }
        let spec = Specialization { values };
        if out.contains(&spec) {
            return Err(err_at(
                config.span,
                format!("the specialization {spec} is listed twice"),
            ));
        }
        out.push(spec);
    }
    Ok(out)
}

fn check_range(value: i128, ty: &str) -> Result<(), String> {
    let (lo, hi): (i128, i128) = match ty {
        "u16" => (0, u16::MAX.into()),
        "i16" => (i16::MIN.into(), i16::MAX.into()),
        "u32" => (0, u32::MAX.into()),
        "i32" => (i32::MIN.into(), i32::MAX.into()),
        "i64" | "isize" => (i64::MIN.into(), i64::MAX.into()),
        _ => (0, u64::MAX.into()),
    };
    if value < lo || value > hi {
        return Err(format!("{value} does not fit in {ty}"));
    }
    Ok(())
}

//! Ordering between a program's memory accesses: `fence(order, scope)`,
//! `debug_barrier()`, and the grid dependency calls of programmatic
//! dependent launch, `gdc_wait()` and `gdc_launch_dependents()`.

use super::{Translator, Val};
use syn::{Expr, ExprCall};
use tile_ir::{MemOrder, MemScope};

impl Translator<'_> {
    /// `fence([order][, scope])`: `Ordering::Acquire`, `Release`, `AcqRel`
    /// (the default) or `SeqCst`, and `Scope::Cta` or `Scope::Gpu` (the
    /// default).
    pub(crate) fn fence_call(&mut self, c: &ExprCall, args: &[&Expr]) -> syn::Result<Val> {
        if args.len() > 2 {
            return Err(self.err(
                c,
                format!(
                    "`fence(order, scope)` takes at most 2 arguments, found {}",
                    args.len()
                ),
            ));
        }
        let (mut order, mut scope) = (None, None);
        for &arg in args {
            let Expr::Path(p) = arg else {
                return Err(self.err(arg, "`fence` takes `Ordering::…` and `Scope::…`"));
            };
            let names: Vec<String> = p
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            match names.as_slice() {
                [.., kind, name] if kind == "Ordering" && order.is_none() => {
                    order = Some(match name.as_str() {
                        "Acquire" => MemOrder::Acquire,
                        "Release" => MemOrder::Release,
                        "AcqRel" => MemOrder::AcqRel,
                        "SeqCst" => MemOrder::SeqCst,
                        "Relaxed" => return Err(self.err(p, "a fence of `Ordering::Relaxed` orders nothing: use Acquire, Release, AcqRel or SeqCst")),
                        other => return Err(self.err(p, format!("unknown ordering `{other}`: use Acquire, Release, AcqRel or SeqCst"))),
                    });
                }
                [.., kind, name] if kind == "Scope" && scope.is_none() => {
                    scope = Some(match name.as_str() {
                        "Cta" => MemScope::Cta,
                        "Gpu" => MemScope::Gpu,
                        other => return Err(self.err(p, format!("unknown scope `{other}`: use Scope::Cta or Scope::Gpu (tensors live in device memory)"))),
                    });
                }
                _ => {
                    return Err(self.err(arg, "`fence` takes one `Ordering::…` and one `Scope::…`"))
                }
            }
        }
        let order = order.unwrap_or(MemOrder::AcqRel);
        let scope = scope.unwrap_or(MemScope::Gpu);
        self.ir(c, |b| b.fence(order, scope))?;
        Ok(Val::Unit)
    }

    /// `debug_barrier()`: every access of the program before it happens
    /// before every access after it (Triton's `debug_barrier`).
    pub(crate) fn debug_barrier_call(&mut self, c: &ExprCall, args: &[&Expr]) -> syn::Result<Val> {
        self.argn(args, 0, "debug_barrier()", c)?;
        self.ir(c, |b| b.barrier())?;
        Ok(Val::Unit)
    }

    /// `gdc_wait()` or `gdc_launch_dependents()`: the grid dependency
    /// calls of programmatic dependent launch (Triton's
    /// `tl.extra.cuda.gdc_wait`/`gdc_launch_dependents`).
    pub(crate) fn grid_call(
        &mut self,
        c: &ExprCall,
        args: &[&Expr],
        which: GridCall,
    ) -> syn::Result<Val> {
        match which {
            GridCall::Wait => {
                self.argn(args, 0, "gdc_wait()", c)?;
                self.ir(c, |b| b.grid_wait())?;
            }
            GridCall::LaunchDependents => {
                self.argn(args, 0, "gdc_launch_dependents()", c)?;
                self.ir(c, |b| b.grid_launch_dependents())?;
            }
        }
        Ok(Val::Unit)
    }
}

/// Which grid dependency call.
#[derive(Clone, Copy)]
pub(crate) enum GridCall {
    /// `gdc_wait()`.
    Wait,
    /// `gdc_launch_dependents()`.
    LaunchDependents,
}

//! LLVM's diagnostics, caught: without a handler, LLVM prints a backend
//! error (a kernel whose shared memory exceeds the target's, say) and exits
//! the process, which for `#[tile_kernel]` is the compiler. With
//! [`Diagnostics`] installed on a context, errors are collected instead and
//! the code generator reports them as [`crate::EmitError::Backend`].

use inkwell::context::Context;
use inkwell::llvm_sys::core::{
    LLVMContextSetDiagnosticHandler, LLVMDisposeMessage, LLVMGetDiagInfoDescription,
    LLVMGetDiagInfoSeverity,
};
use inkwell::llvm_sys::prelude::LLVMDiagnosticInfoRef;
use inkwell::llvm_sys::LLVMDiagnosticSeverity;
use std::ffi::{c_void, CStr};
use std::sync::Mutex;

/// The errors LLVM reported on one context while this value lives.
pub(crate) struct Diagnostics<'ctx> {
    ctx: &'ctx Context,
    errors: Box<Mutex<Vec<String>>>,
}

impl<'ctx> Diagnostics<'ctx> {
    /// Installs the handler on `ctx`, replacing LLVM's default.
    pub(crate) fn install(ctx: &'ctx Context) -> Diagnostics<'ctx> {
        let errors: Box<Mutex<Vec<String>>> = Box::default();
        let state: *const Mutex<Vec<String>> = &*errors;
        // SAFETY: `ctx` is a live context; the state pointer stays valid
        // until `drop` removes the handler (the box is not moved out of
        // `self`, and `self` borrows the context, so it drops first).
        unsafe {
            LLVMContextSetDiagnosticHandler(ctx.raw(), Some(handler), state as *mut c_void);
        }
        Diagnostics { ctx, errors }
    }

    /// The errors reported so far, joined, if any; they are cleared.
    pub(crate) fn take_errors(&self) -> Option<String> {
        let mut errors = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        (!errors.is_empty()).then(|| std::mem::take(&mut *errors).join("; "))
    }
}

impl Drop for Diagnostics<'_> {
    fn drop(&mut self) {
        // SAFETY: the context is live (borrowed); with no handler LLVM no
        // longer touches the state this value owns.
        unsafe {
            LLVMContextSetDiagnosticHandler(self.ctx.raw(), None, std::ptr::null_mut());
        }
    }
}

/// Records an error's description; warnings, remarks and notes are dropped.
extern "C" fn handler(info: LLVMDiagnosticInfoRef, state: *mut c_void) {
    // SAFETY: LLVM passes a live diagnostic; `state` is the mutex
    // `Diagnostics::install` registered, alive while the handler is set.
    unsafe {
        if LLVMGetDiagInfoSeverity(info) != LLVMDiagnosticSeverity::LLVMDSError {
            return;
        }
        let raw = LLVMGetDiagInfoDescription(info);
        if raw.is_null() {
            return;
        }
        let text = CStr::from_ptr(raw).to_string_lossy().into_owned();
        LLVMDisposeMessage(raw);
        let errors = &*(state as *const Mutex<Vec<String>>);
        errors.lock().unwrap_or_else(|e| e.into_inner()).push(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::{Machine, Target};
    use inkwell::InlineAsmDialect;
    use inkwell::OptimizationLevel;
    use tile_abi::HostIsa;

    /// An inline assembly operand no register can hold is a backend error
    /// (a diagnostic, after which LLVM goes on): it is caught, the process
    /// lives on, and the next diagnostics start empty.
    #[test]
    fn backend_errors_are_collected_not_fatal() {
        let ctx = Context::create();
        let diagnostics = Diagnostics::install(&ctx);
        let machine = Machine::new(Target::Host(HostIsa::X86_64), OptimizationLevel::None).unwrap();
        let module = ctx.create_module("bad");
        machine.configure(&module);
        let i128t = ctx.i128_type();
        let f = module.add_function("f", i128t.fn_type(&[], false), None);
        let b = ctx.create_builder();
        b.position_at_end(ctx.append_basic_block(f, "entry"));
        // No register of x86 is called `notareg`.
        let asm = ctx.create_inline_asm(
            i128t.fn_type(&[], false),
            "nop".into(),
            "={notareg}".into(),
            true,
            false,
            Some(InlineAsmDialect::ATT),
            false,
        );
        let call = b
            .build_indirect_call(i128t.fn_type(&[], false), asm, &[], "r")
            .unwrap();
        b.build_return(Some(&call.try_as_basic_value().basic().unwrap()))
            .unwrap();
        assert!(diagnostics.take_errors().is_none());
        let _ = machine.emit_object(&module);
        let errors = diagnostics
            .take_errors()
            .expect("LLVM reported the operand");
        assert!(
            errors.contains("couldn't allocate output register"),
            "{errors}"
        );
        assert!(diagnostics.take_errors().is_none());
    }
}

//! Runtime checks: a failed check writes the status record and returns its
//! code from the kernel, so nothing after it runs.

use super::error::HostError;
use super::kernel::HostKernel;
use inkwell::values::IntValue;
use tile_abi::status::{STATUS_CHECK, STATUS_INDEX};
use tile_ir::OpId;

pub(super) use tile_abi::FaultCode as Code;

/// An op with checks: what the status record's `check` names.
#[derive(Clone, Debug)]
pub(super) struct CheckSite {
    /// The op.
    pub(super) op: OpId,
    /// The op as `ValueNames::describe_site` writes it: its source location
    /// and tensor parameters, and its text form.
    pub(super) describe: String,
    /// How many values its failures record.
    pub(super) values: usize,
}

impl<'a, 'ctx> HostKernel<'a, 'ctx> {
    /// Continues where `ok` (an `i1`) holds; elsewhere records `code` for op
    /// `id` with `values` (`i64`, the first four kept) and returns.
    pub(super) fn check(
        &mut self,
        ok: IntValue<'ctx>,
        id: OpId,
        code: Code,
        values: &[IntValue<'ctx>],
    ) -> Result<(), HostError> {
        let ctx = self.e.ctx;
        let (i32t, i64t, i8t) = (ctx.i32_type(), ctx.i64_type(), ctx.i8_type());
        let position = match self.checks.iter().position(|site| site.op == id) {
            Some(p) => p,
            None => {
                self.checks.push(CheckSite {
                    op: id,
                    describe: self.names.describe_site(self.func, id),
                    values: values.len().min(4),
                });
                self.checks.len() - 1
            }
        };
        let fail = ctx.append_basic_block(self.f, "fail");
        let cont = ctx.append_basic_block(self.f, "ok");
        let b = &self.e.b;
        b.build_conditional_branch(ok, cont, fail)?;
        b.position_at_end(fail);
        let code = i32t.const_int(code as u64, false);
        b.build_store(self.status, code)?;
        let at = self.gep(i8t.into(), self.status, self.i64(STATUS_CHECK as i64))?;
        b.build_store(at, i32t.const_int(position as u64, false))?;
        for (k, &v) in values.iter().take(4).enumerate() {
            let at = self.gep(
                i8t.into(),
                self.status,
                self.i64((STATUS_INDEX + 8 * k as u64) as i64),
            )?;
            let v = b.build_int_s_extend_or_bit_cast(v, i64t, "value")?;
            b.build_store(at, v)?;
        }
        self.fence_streams()?;
        self.e.b.build_return(Some(&code))?;
        b.position_at_end(cont);
        Ok(())
    }
}

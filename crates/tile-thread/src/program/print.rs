//! The text form of the thread-level program: its `Display`.
//!
//! ```text
//! kernel vector_add warps 1 (x: tensor<f32, 1>, out: tensor<f32, 1>)
//! shared @s0: f32[64]
//! {
//!   %0 = thread_id
//!   %1 = const 1 : i32
//!   %2 = add %0, %1 : i32
//!   %5 = ld.global.v1 x[%3] mask(%4) other(%1) : f32
//!   st.global.v1 out[%3], %5 mask(%4)
//!   %9 = for %6 = %1 to %2 step %1 iter(%7 = %5) {
//!     yield %7
//!   }
//! }
//! ```
//!
//! Registers print as `%<n>`, numbered in text order, allocations as `@s<index>`, and every op that
//! defines a register ends with ` : <dtype>` of its first result.

use super::format::layout;
use super::{Op, ParamKind, Program, Reg, Region, ThreadOpKind};
use std::fmt::{self, Write};
use tile_ir::Type;

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kernel {} warps {} (", self.name, self.num_warps)?;
        for (i, p) in self.params.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match &p.kind {
                ParamKind::Tensor(t) => write!(f, "{}: {}", p.name, Type::Tensor(*t))?,
                ParamKind::Scalar(d) => write!(f, "{}: {d}", p.name)?,
                ParamKind::Tensors(t) => write!(f, "{}: {}", p.name, Type::Tensors(*t))?,
                ParamKind::Element { ty, array } => write!(
                    f,
                    "{}: {} of {}",
                    p.name,
                    Type::Tensor(*ty),
                    self.params.get(*array).map_or("?", |a| a.name.as_str())
                )?,
            }
        }
        f.write_str(")\n")?;
        for (id, alloc) in self.shared.iter() {
            write!(f, "shared @s{}: {}[{}]", id.index(), alloc.dtype, alloc.len)?;
            if alloc.align != super::SHARED_ALIGN {
                write!(f, " align {}", alloc.align)?;
            }
            if let Some(root) = alloc.aliases {
                write!(f, " aliases @s{}", root.index())?;
            }
            writeln!(f)?;
        }
        f.write_str("{\n")?;
        self.print_region(f, &Names::new(self), &self.body, 1)?;
        f.write_str("}\n")
    }
}

/// Register names: `%<n>` numbered in text order (definitions first seen
/// as the program is printed), so that snapshots read top to bottom.
struct Names(Vec<Option<usize>>);

impl Names {
    fn new(program: &Program) -> Names {
        let mut names = Names(vec![None; program.regs.len()]);
        let mut next = 0;
        names.region(program, &program.body, &mut next);
        names
    }

    fn define(&mut self, r: Reg, next: &mut usize) {
        if let Some(slot) = self.0.get_mut(r.index()) {
            if slot.is_none() {
                *slot = Some(*next);
                *next += 1;
            }
        }
    }

    fn region(&mut self, program: &Program, region: &Region, next: &mut usize) {
        for &id in &region.ops {
            let Some(op) = program.ops.get(id) else {
                continue;
            };
            for &r in &op.results {
                self.define(r, next);
            }
            for nested in &op.regions {
                for &r in &nested.args {
                    self.define(r, next);
                }
                self.region(program, nested, next);
            }
        }
    }

    fn reg(&self, r: Reg) -> String {
        match self.0.get(r.index()).copied().flatten() {
            Some(n) => format!("%{n}"),
            None => format!("%?{}", r.index()),
        }
    }

    fn list(&self, regs: &[Reg]) -> String {
        regs.iter()
            .map(|&r| self.reg(r))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Program {
    fn print_region(
        &self,
        f: &mut dyn Write,
        names: &Names,
        region: &Region,
        depth: usize,
    ) -> fmt::Result {
        for &id in &region.ops {
            if let Some(note) = self.notes.get(&id) {
                writeln!(f, "{}// {note}", "  ".repeat(depth))?;
            }
            self.print_op(f, names, &self.ops[id], depth)?;
        }
        Ok(())
    }

    /// The first line of an op's text form (for error messages).
    pub fn op_text(&self, op: super::OpId) -> String {
        let mut text = String::new();
        if let Some(op) = self.ops.get(op) {
            let _ = self.print_op(&mut text, &Names::new(self), op, 0);
        }
        text.lines()
            .next()
            .unwrap_or_default()
            .trim_end_matches(" {")
            .to_string()
    }

    /// One op (and its regions) at indentation `depth`.
    fn print_op(&self, f: &mut dyn Write, names: &Names, op: &Op, depth: usize) -> fmt::Result {
        let pad = "  ".repeat(depth);
        f.write_str(&pad)?;
        if !op.results.is_empty() {
            write!(f, "{} = ", names.list(&op.results))?;
        }
        let line = match op.kind {
            ThreadOpKind::For => loop_line(names, op, 3),
            ThreadOpKind::While => loop_line(names, op, 0),
            _ => self.formatted(names, op),
        };
        f.write_str(&line)?;
        if let Some(&first) = op.results.first() {
            write!(f, " : {}", self.dtype(first))?;
        }
        match op.kind {
            ThreadOpKind::For | ThreadOpKind::While | ThreadOpKind::If => {
                f.write_str(" {\n")?;
                for (i, region) in op.regions.iter().enumerate() {
                    if i > 0 && op.kind == ThreadOpKind::While {
                        writeln!(f, "{pad}}} do({}) {{", names.list(&region.args))?;
                    } else if i > 0 {
                        writeln!(f, "{pad}}} else {{")?;
                    }
                    self.print_region(f, names, region, depth + 1)?;
                }
                writeln!(f, "{pad}}}")
            }
            _ => f.write_str("\n"),
        }
    }
}

impl Program {
    /// An op's line by its format, or its name and operands where they fit
    /// no layout of the format.
    fn formatted(&self, names: &Names, op: &Op) -> String {
        let Some(layout) = layout(&op.kind, op.operands.len()) else {
            return format!("{} ({})", op.kind.name(), names.list(&op.operands));
        };
        layout.render(
            op.kind.format(),
            &mut |name, line| op.kind.write_attribute(name, &self.params, line),
            &mut |slot, line| {
                let regs = &op.operands[slot.start..slot.start + slot.len];
                line.push_str(&names.list(regs));
            },
        )
    }
}

/// A loop's line: `for %iv = %lo to %hi step %step iter(%a = %init, ...)`
/// (`bounds` 3) or `while iter(%a = %init, ...)` (`bounds` 0).
fn loop_line(names: &Names, op: &Op, bounds: usize) -> String {
    let args = op.regions.first().map_or(&[][..], |r| &r.args[..]);
    let (Some(head), Some(carried)) = (op.operands.get(..bounds), args.get(bounds.min(1)..)) else {
        return format!("{} ({})", op.kind.name(), names.list(&op.operands));
    };
    let iters = carried
        .iter()
        .zip(&op.operands[bounds..])
        .map(|(a, i)| format!("{} = {}", names.reg(*a), names.reg(*i)))
        .collect::<Vec<_>>()
        .join(", ");
    match (head, args.first()) {
        ([lo, hi, step], Some(iv)) => format!(
            "for {} = {} to {} step {} iter({iters})",
            names.reg(*iv),
            names.reg(*lo),
            names.reg(*hi),
            names.reg(*step)
        ),
        ([], _) => format!("while iter({iters})"),
        _ => format!("{} ({})", op.kind.name(), names.list(&op.operands)),
    }
}

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

use super::{DescriptorSwizzle, GlobalOperands, Op, ParamKind, Program, Reg, Region, ThreadOpKind};
use std::fmt::{self, Write};
use tile_hw::wgmma::REGISTER_A_ELEMENTS;
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

    fn param_name(&self, index: usize) -> &str {
        self.params.get(index).map_or("?", |p| p.name.as_str())
    }

    /// One op (and its regions) at indentation `depth`.
    fn print_op(&self, f: &mut dyn Write, names: &Names, op: &Op, depth: usize) -> fmt::Result {
        let reg = |r: Reg| names.reg(r);
        let list = |regs: &[Reg]| names.list(regs);
        // `[%addr]`, with the vector condition and the lanes of a wide access.
        let global_address = |g: &GlobalOperands<'_, Reg>| match g.vector_ok {
            None => format!("[{}]", reg(*g.addr)),
            Some(&ok) => format!("[{}] if({}) else[{}]", reg(*g.addr), reg(ok), list(g.lanes)),
        };
        let pad = "  ".repeat(depth);
        f.write_str(&pad)?;
        if !op.results.is_empty() {
            write!(f, "{} = ", list(&op.results))?;
        }
        let o = &op.operands;
        let mut line = String::new();
        let text = &mut line;
        let name = op.kind.name();
        let _ = match &op.kind {
            ThreadOpKind::BlockId { axis } | ThreadOpKind::GridDim { axis } => {
                write!(text, "{name} {axis}")
            }
            ThreadOpKind::Const(v) => write!(text, "const {v}"),
            ThreadOpKind::Param { index } => write!(text, "param {}", self.param_name(*index)),
            ThreadOpKind::TensorDim { param, axis }
            | ThreadOpKind::TensorStride { param, axis } => {
                write!(text, "{name} {}.{axis}", self.param_name(*param))
            }
            ThreadOpKind::TensorAlign { param } => {
                write!(text, "align {}", self.param_name(*param))
            }
            ThreadOpKind::Cmp(pred) => write!(text, "cmp {pred} {}", list(o)),
            ThreadOpKind::Fence { order, scope } => write!(text, "fence.{order}.{scope}"),
            ThreadOpKind::Cast { to } => write!(text, "cast {} to {to}", list(o)),
            ThreadOpKind::Bitcast { to } => write!(text, "bitcast {} to {to}", list(o)),
            ThreadOpKind::LoadGlobal { param, width } => {
                match GlobalOperands::load(o, usize::from(*width)) {
                    Some(g) => write!(
                        text,
                        "ld.global.v{width} {}{} mask({}) other({})",
                        self.param_name(*param),
                        global_address(&g),
                        list(g.masks),
                        list(g.others)
                    ),
                    None => write!(text, "ld.global.v{width} ({})", list(o)),
                }
            }
            ThreadOpKind::StoreGlobal { param, width } => {
                match GlobalOperands::store(o, usize::from(*width)) {
                    Some(g) => write!(
                        text,
                        "st.global.v{width} {}{}, {} mask({})",
                        self.param_name(*param),
                        global_address(&g),
                        list(g.values),
                        list(g.masks)
                    ),
                    None => write!(text, "st.global.v{width} ({})", list(o)),
                }
            }
            ThreadOpKind::AtomicGlobal {
                param,
                op: update,
                order,
                scope,
            } => {
                let (addr, rest) = o
                    .split_first()
                    .map_or((String::new(), &o[..]), |(a, r)| (reg(*a), r));
                let (values, mask) = rest.split_at(rest.len().saturating_sub(1));
                write!(
                    text,
                    "atom.global.{update}.{order}.{scope} {}[{addr}], {} mask({})",
                    self.param_name(*param),
                    list(values),
                    list(mask)
                )
            }
            ThreadOpKind::LoadShared { alloc, width } => write!(
                text,
                "ld.shared{} @s{}[{}]",
                shared_width(*width),
                alloc.index(),
                list(o)
            ),
            ThreadOpKind::StoreShared { alloc, width } => match o.as_slice() {
                [i, values @ .., m] if !values.is_empty() => write!(
                    text,
                    "st.shared{} @s{}[{}], {} mask({})",
                    shared_width(*width),
                    alloc.index(),
                    reg(*i),
                    list(values),
                    reg(*m)
                ),
                _ => write!(text, "st.shared @s{} {}", alloc.index(), list(o)),
            },
            ThreadOpKind::Check { kind, op: checked } => match o.split_first() {
                Some((ok, values)) => write!(
                    text,
                    "check.{} {} [{}] {checked:?}",
                    kind.name(),
                    reg(*ok),
                    list(values)
                ),
                None => write!(text, "check.{} {checked:?}", kind.name()),
            },
            ThreadOpKind::Print { id } => match o.as_slice() {
                [on, element, values @ ..] => write!(
                    text,
                    "print {id} {}, {} [{}]",
                    reg(*on),
                    reg(*element),
                    list(values)
                ),
                _ => write!(text, "print {id} {}", list(o)),
            },
            ThreadOpKind::Shuffle { mode, width } => {
                write!(text, "shfl.{} {} width {width}", mode.name(), list(o))
            }
            ThreadOpKind::Mma { kind } => write!(text, "mma.{} {}", kind.name(), list(o)),
            ThreadOpKind::CopyAsync { param, alloc } => match o.as_slice() {
                [addr, index, n, mask] => write!(
                    text,
                    "cp.async @s{}[{}], {}[{}] count({}) mask({})",
                    alloc.index(),
                    reg(*index),
                    self.param_name(*param),
                    reg(*addr),
                    reg(*n),
                    reg(*mask)
                ),
                _ => write!(text, "cp.async @s{} {}", alloc.index(), list(o)),
            },
            ThreadOpKind::Wgmma {
                kind,
                a,
                a_swizzle,
                b,
            } => match o.split_first() {
                Some((ia, rest)) => match rest.split_first() {
                    Some((ib, acc)) => write!(
                        text,
                        "wgmma.{}{} @s{}[{}], @s{}[{}], {}",
                        kind.name(),
                        swizzle_suffix(*a_swizzle),
                        a.index(),
                        reg(*ia),
                        b.index(),
                        reg(*ib),
                        list(acc)
                    ),
                    None => write!(text, "wgmma.{} {}", kind.name(), list(o)),
                },
                None => write!(text, "wgmma.{}", kind.name()),
            },
            ThreadOpKind::WgmmaRegisterA { kind, b } => {
                let a = &o[..o.len().min(REGISTER_A_ELEMENTS)];
                match o.get(a.len()..).and_then(<[Reg]>::split_first) {
                    Some((ib, acc)) if a.len() == REGISTER_A_ELEMENTS => write!(
                        text,
                        "wgmma.{} {{{}}}, @s{}[{}], {}",
                        kind.name(),
                        list(a),
                        b.index(),
                        reg(*ib),
                        list(acc)
                    ),
                    _ => write!(text, "wgmma.{} {}", kind.name(), list(o)),
                }
            }
            ThreadOpKind::MbarrierInit { alloc } | ThreadOpKind::MbarrierExpectTx { alloc } => {
                match o.as_slice() {
                    [index, value, mask] => write!(
                        text,
                        "{name} @s{}[{}], {} mask({})",
                        alloc.index(),
                        reg(*index),
                        reg(*value),
                        reg(*mask)
                    ),
                    _ => write!(text, "{name} @s{} {}", alloc.index(), list(o)),
                }
            }
            ThreadOpKind::MbarrierWait { alloc } => match o.as_slice() {
                [index, parity] => write!(
                    text,
                    "mbarrier.wait @s{}[{}], {}",
                    alloc.index(),
                    reg(*index),
                    reg(*parity)
                ),
                _ => write!(text, "mbarrier.wait @s{} {}", alloc.index(), list(o)),
            },
            ThreadOpKind::TmaLoad {
                param,
                rows,
                alloc,
                bar,
            } => match o.as_slice() {
                [index, c0, c1, b, mask] => write!(
                    text,
                    "tma.load @s{}[{}], {} box {rows} [{}, {}], @s{}[{}] mask({})",
                    alloc.index(),
                    reg(*index),
                    self.param_name(*param),
                    reg(*c0),
                    reg(*c1),
                    bar.index(),
                    reg(*b),
                    reg(*mask)
                ),
                _ => write!(text, "tma.load @s{} {}", alloc.index(), list(o)),
            },
            ThreadOpKind::TmemAlloc { columns, slot } => {
                write!(text, "tmem.alloc {columns} @s{}[{}]", slot.index(), list(o))
            }
            ThreadOpKind::TmemDealloc { columns } => {
                write!(text, "tmem.dealloc {columns} {}", list(o))
            }
            ThreadOpKind::Tcgen05Mma {
                kind,
                a,
                a_swizzle,
                b,
            } => match o.as_slice() {
                [ia, ib, d, accumulate, mask] => write!(
                    text,
                    "tcgen05.mma.{}{} @s{}[{}], @s{}[{}], {}, {} mask({})",
                    kind.name(),
                    swizzle_suffix(*a_swizzle),
                    a.index(),
                    reg(*ia),
                    b.index(),
                    reg(*ib),
                    reg(*d),
                    reg(*accumulate),
                    reg(*mask)
                ),
                _ => write!(text, "tcgen05.mma.{} {}", kind.name(), list(o)),
            },
            ThreadOpKind::Tcgen05CommitWait { bar } => match o.as_slice() {
                [index, mask] => write!(
                    text,
                    "tcgen05.commit_wait @s{}[{}] mask({})",
                    bar.index(),
                    reg(*index),
                    reg(*mask)
                ),
                _ => write!(text, "tcgen05.commit_wait @s{} {}", bar.index(), list(o)),
            },
            ThreadOpKind::TmemLoad { columns } => write!(text, "tmem.load.x{columns} {}", list(o)),
            ThreadOpKind::TmemStore => write!(text, "tmem.store {}", list(o)),
            ThreadOpKind::WgmmaFence => write!(text, "wgmma.fence"),
            ThreadOpKind::WgmmaCommit => write!(text, "wgmma.commit"),
            ThreadOpKind::WgmmaWait { pending } => write!(text, "wgmma.wait {pending} {}", list(o)),
            ThreadOpKind::FenceProxyAsync => write!(text, "fence.proxy.async"),
            ThreadOpKind::GridWait => write!(text, "griddepcontrol.wait"),
            ThreadOpKind::GridLaunchDependents => write!(text, "griddepcontrol.launch_dependents"),
            ThreadOpKind::CommitAsync => write!(text, "cp.async.commit"),
            ThreadOpKind::WaitAsync { pending } => write!(text, "cp.async.wait {pending}"),
            ThreadOpKind::LdMatrix { alloc, shape } => write!(
                text,
                "ldmatrix.x{}{} @s{}[{}]",
                shape.count,
                if shape.trans { ".trans" } else { "" },
                alloc.index(),
                list(o)
            ),
            ThreadOpKind::For => {
                let body = op.regions.first();
                let args = body.map_or(&[][..], |r| &r.args[..]);
                match (o.get(..3), args.split_first()) {
                    (Some([lo, hi, step]), Some((iv, carried))) => {
                        let inits = &o[3..];
                        let iters = carried
                            .iter()
                            .zip(inits)
                            .map(|(a, i)| format!("{} = {}", reg(*a), reg(*i)))
                            .collect::<Vec<_>>()
                            .join(", ");
                        write!(
                            text,
                            "for {} = {} to {} step {} iter({iters})",
                            reg(*iv),
                            reg(*lo),
                            reg(*hi),
                            reg(*step)
                        )
                    }
                    _ => write!(text, "for {}", list(o)),
                }
            }
            ThreadOpKind::While => {
                let args = op.regions.first().map_or(&[][..], |r| &r.args[..]);
                let iters = args
                    .iter()
                    .zip(o)
                    .map(|(a, i)| format!("{} = {}", reg(*a), reg(*i)))
                    .collect::<Vec<_>>()
                    .join(", ");
                write!(text, "while iter({iters})")
            }
            _ if o.is_empty() => write!(text, "{name}"),
            _ => write!(text, "{name} {}", list(o)),
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
                        let args: Vec<String> = region.args.iter().map(|&a| reg(a)).collect();
                        writeln!(f, "{pad}}} do({}) {{", args.join(", "))?;
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

/// The mnemonic's suffix for A's swizzle in `wgmma`: none for 128 bytes,
/// `.sw64`, `.sw32` or `.sw0` otherwise.
fn swizzle_suffix(swizzle: DescriptorSwizzle) -> String {
    match swizzle.row_bytes() {
        Some(128) => String::new(),
        bytes => format!(".sw{}", bytes.unwrap_or(0)),
    }
}

/// A shared access's width in the text form: none for one element,
/// `.v<w>` for a vector.
fn shared_width(width: u8) -> String {
    if width == 1 {
        String::new()
    } else {
        format!(".v{width}")
    }
}

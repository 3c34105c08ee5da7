//! Guard clauses: a kernel that ends a program early, as Triton kernels do
//! (`if pid_m * BLOCK_M >= num_tokens: return`), written
//! `if cond { ..; return; }` at the top level of its body. The rest of the
//! body becomes the `if`'s `else`, so the program stays structured control
//! flow: `if cond { .. } else { rest }`.

use syn::{Block, Expr, ExprBlock, ExprIf, Stmt};

/// The kernel body `stmts` with each guard clause at its top level folded
/// into an `if`/`else` over the statements after it (and the helpers among
/// those kept at the top, where helpers are defined); `None` where it has
/// none.
pub(crate) fn fold_guards(stmts: &[Stmt]) -> Option<Vec<Stmt>> {
    let at = stmts.iter().position(|s| guard(s).is_some())?;
    let mut folded = guard(&stmts[at])?.clone();
    folded.then_branch.stmts.pop();
    let (helpers, rest): (Vec<Stmt>, Vec<Stmt>) = stmts[at + 1..]
        .iter()
        .cloned()
        .partition(|s| matches!(s, Stmt::Item(_)));
    let rest = fold_guards(&rest).unwrap_or(rest);
    let else_token = syn::token::Else(folded.if_token.span);
    let rest = Expr::Block(ExprBlock {
        attrs: Vec::new(),
        label: None,
        block: Block {
            brace_token: folded.then_branch.brace_token,
            stmts: rest,
        },
    });
    folded.else_branch = Some((else_token, Box::new(rest)));
    let mut out = stmts[..at].to_vec();
    out.extend(helpers);
    out.push(Stmt::Expr(Expr::If(folded), None));
    Some(out)
}

/// The `if` of `stmt` if it is a guard clause: no `else`, its block ending
/// with a `return;` of no value.
fn guard(stmt: &Stmt) -> Option<&ExprIf> {
    let Stmt::Expr(Expr::If(e), _) = stmt else {
        return None;
    };
    let returns = matches!(
        e.then_branch.stmts.last(),
        Some(Stmt::Expr(Expr::Return(r), _)) if r.expr.is_none()
    );
    (e.else_branch.is_none() && returns).then_some(e)
}

//! Which memory a kernel reads and writes, judged from its OpenCL C source (issue #41), so that a
//! race is told as certain when it is, without the `-cl-kernel-arg-info` almost no program
//! passes. Each `__kernel`'s parameters are read with their qualifiers (`const`, `__constant`,
//! `__local`, `read_only` / `write_only` images and pipes), and a pointer declared writable is
//! judged by its body: stored through (`a[i] = …`, `*p += …`, `vstore4(v, i, p)`, an atomic) is a
//! write, only loaded from is a read (`body.rs`; a local pointer made from it by casts and
//! offsets is followed as the parameter). Whatever the judge cannot follow (the pointer passed to a
//! function or copied otherwise, a type from a header, a branch of an `#if` it cannot evaluate) it
//! does not guess: the parameter keeps what its declaration says, with the reason. In layers:
//! `lex.rs` (tokens), `words.rs` (type words), `body.rs` (a body's uses), here the parameters.

mod body;
pub mod lex;
mod words;

use lex::{Token, matching};
use std::collections::HashMap;
use words::*;

/// How a kernel touches what one parameter points to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access {
    /// Not memory a buffer can be passed for: a scalar, a sampler, a struct by value, `__local`.
    NotMemory,
    /// Only read (why: a qualifier, or a body that only loads from it).
    Reads(String),
    /// Written (why: what in the body stores through it, or a `write_only` image).
    Writes(String),
    /// Declared writable, and the body does not show whether it writes (why).
    MayWrite(String),
    /// Not judged (why).
    Unsure(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    pub name: String,
    pub access: Access,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    pub name: String,
    pub args: Vec<Arg>,
}

/// Every kernel of a program's source, judged, with the build's options (for `-D`).
pub fn kernels(src: &str, options: &str) -> Vec<Kernel> {
    let lexed = lex::lex(src, &lex::defines_of(options));
    let t = &lexed.tokens;
    let typedefs = typedefs(t);
    let mut found: Vec<(Kernel, bool)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < t.len() {
        match t[i].text.as_str() {
            "{" => depth += 1,
            "}" => depth = depth.saturating_sub(1),
            "__kernel" | "kernel" if depth == 0 => {
                if let Some((k, body, next)) = kernel_at(t, i, &typedefs, &lexed.includes) {
                    match found.iter_mut().find(|(f, _)| f.name == k.name) {
                        // A definition after its prototype replaces it.
                        Some(f) if !f.1 && body => *f = (k, body),
                        Some(f) if body => {
                            for a in &mut f.0.args {
                                a.access = Access::Unsure(format!(
                                    "`{}` is defined twice (in branches of an `#if`)",
                                    k.name
                                ));
                            }
                        }
                        Some(_) => {}
                        None => found.push((k, body)),
                    }
                    i = next;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    found.into_iter().map(|(k, _)| k).collect()
}

/// `typedef … NAME;` at file scope: NAME → its tokens.
fn typedefs(t: &[Token]) -> HashMap<String, Vec<Token>> {
    let mut out = HashMap::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < t.len() {
        match t[i].text.as_str() {
            "{" => depth += 1,
            "}" => depth = depth.saturating_sub(1),
            "typedef" if depth == 0 => {
                let mut inner = 0usize;
                let end = (i..t.len())
                    .find(|&j| {
                        match t[j].text.as_str() {
                            "{" => inner += 1,
                            "}" => inner = inner.saturating_sub(1),
                            _ => {}
                        }
                        inner == 0 && t[j].is(";")
                    })
                    .unwrap_or(t.len());
                let body = &t[i + 1..end];
                // `typedef struct { … } NAME;` holds no pointer of ours: only its name matters.
                if let Some(name) = body.last().filter(|n| n.is_word()) {
                    let ty = if body.iter().any(|x| x.is("{")) {
                        vec![Token {
                            text: "struct".into(),
                            unsure: None,
                        }]
                    } else {
                        body[..body.len() - 1].to_vec()
                    };
                    out.insert(name.text.clone(), ty);
                }
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Tokens without `__attribute__((…))`.
fn without_attributes(t: &[Token]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < t.len() {
        if t[i].is("__attribute__") || t[i].is("__attribute") {
            i = match t.get(i + 1) {
                Some(p) if p.is("(") => matching(t, i + 1),
                _ => i + 1,
            };
        } else {
            out.push(t[i].clone());
            i += 1;
        }
    }
    out
}

/// The kernel whose `__kernel` is at `at`: its judged parameters, whether it has a body, and
/// where the tokens after it begin.
fn kernel_at(
    t: &[Token],
    at: usize,
    typedefs: &HashMap<String, Vec<Token>>,
    includes: &[String],
) -> Option<(Kernel, bool, usize)> {
    // Skip attribute parentheses between `__kernel` and the name.
    let mut open = None;
    let mut j = at + 1;
    while j < t.len() {
        if t[j].is("__attribute__") || t[j].is("__attribute") {
            j = matching(t, j + 1);
            continue;
        }
        if t[j].is("(") {
            open = Some(j);
            break;
        }
        if t[j].is(";") || t[j].is("{") {
            return None;
        }
        j += 1;
    }
    let open = open?;
    let name = t
        .get(open.checked_sub(1)?)
        .filter(|n| n.is_word())?
        .text
        .clone();
    let close = matching(t, open);
    let params = &t[open + 1..close.saturating_sub(1)];
    let (body, next) = match t.get(close) {
        Some(b) if b.is("{") => {
            let end = matching(t, close);
            (Some(&t[close + 1..end.saturating_sub(1)]), end)
        }
        _ => (None, close + 1),
    };
    let mut args = Vec::new();
    for p in split_commas(params) {
        let p = without_attributes(p);
        if p.is_empty() || (p.len() == 1 && p[0].is("void")) {
            continue;
        }
        args.push(param(&p, typedefs, includes, body, &name));
    }
    let has_body = body.is_some();
    Some((Kernel { name, args }, has_body, next))
}

fn split_commas(t: &[Token]) -> Vec<&[Token]> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, x) in t.iter().enumerate() {
        match x.text.as_str() {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth = depth.saturating_sub(1),
            "," if depth == 0 => {
                out.push(&t[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < t.len() {
        out.push(&t[start..]);
    }
    out
}

/// One parameter, judged.
fn param(
    p: &[Token],
    typedefs: &HashMap<String, Vec<Token>>,
    includes: &[String],
    body: Option<&[Token]>,
    kernel: &str,
) -> Arg {
    // The name: the last word, before any `[…]`.
    let end = p.iter().position(|x| x.is("[")).unwrap_or(p.len());
    let array = end < p.len();
    let name = p[..end]
        .iter()
        .rev()
        .find(|x| x.is_word())
        .map_or_else(String::new, |x| x.text.clone());
    let unsure = |why: String| Arg {
        name: name.clone(),
        access: Access::Unsure(why),
    };
    if let Some(why) = p.iter().find_map(|x| x.unsure.clone()) {
        return unsure(format!("its declaration is {why}"));
    }
    // The type's words, typedefs replaced (a few levels: one names another).
    let mut ty: Vec<Token> = p[..end]
        .iter()
        .filter(|x| x.text != name)
        .cloned()
        .collect();
    for _ in 0..4 {
        if !ty.iter().any(|x| typedefs.contains_key(&x.text)) {
            break;
        }
        ty = ty
            .into_iter()
            .flat_map(|x| typedefs.get(&x.text).cloned().unwrap_or_else(|| vec![x]))
            .collect();
    }
    let star = ty.iter().position(|x| x.is("*"));
    let pointer = star.is_some() || array;
    let before: &[Token] = &ty[..star.unwrap_or(ty.len())];
    let has = |words: &[&str]| ty.iter().any(|x| words.contains(&x.text.as_str()));
    let access = |a: &str| has(&[a, &format!("__{a}")]);
    let image = ty.iter().find(|x| is_image(&x.text));
    if !pointer {
        let pipe = has(&["pipe"]);
        let what = if pipe { "pipe" } else { "image" };
        if image.is_some() || pipe {
            let a = if access("write_only") {
                Access::Writes(format!("a `write_only` {what}"))
            } else if access("read_write") {
                Access::MayWrite(format!("a `read_write` {what}"))
            } else {
                Access::Reads(format!("a `read_only` {what}"))
            };
            return Arg { name, access: a };
        }
        let unknown = ty.iter().find(|x| {
            x.is_word()
                && !plain_type(&x.text)
                && !QUALIFIERS.contains(&x.text.as_str())
                && !ADDRESS.contains(&x.text.as_str())
        });
        return match unknown {
            // A struct's own name after `struct` is fine.
            Some(u)
                if !ty
                    .iter()
                    .any(|x| matches!(x.text.as_str(), "struct" | "union" | "enum")) =>
            {
                let from = match includes.first() {
                    Some(h) => format!(" (from `#include {h}`?)"),
                    None => String::new(),
                };
                unsure(format!(
                    "its type `{}` is not one clxfer knows{from}",
                    u.text
                ))
            }
            _ => Arg {
                name,
                access: Access::NotMemory,
            },
        };
    }
    let in_ = |words: &[&str]| before.iter().any(|x| words.contains(&x.text.as_str()));
    let a = if in_(&["__local", "local"]) {
        Access::NotMemory
    } else if in_(&["__constant", "constant"]) {
        Access::Reads("`__constant`".into())
    } else if in_(&["const"]) {
        Access::Reads("a pointer to `const`".into())
    } else {
        match body {
            None => Access::MayWrite(format!(
                "not `const`, and `{kernel}` is declared without its body"
            )),
            Some(b) => judge_body(b, &name, kernel),
        }
    };
    Arg { name, access: a }
}

/// What the body does with what `name` points to.
fn judge_body(b: &[Token], name: &str, kernel: &str) -> Access {
    match body::judge_pointer(b, name, kernel, 0) {
        Ok(Some(w)) => Access::Writes(format!("`{kernel}` stores through `{name}`: {w}")),
        Ok(None) => Access::Reads(format!("`{kernel}` only loads from `{name}`")),
        Err(why) => Access::MayWrite(format!("not `const`; {why}")),
    }
}

#[cfg(test)]
mod tests;

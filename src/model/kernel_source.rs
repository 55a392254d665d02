//! Which memory a kernel reads and writes, judged from its OpenCL C source (issue #41), so that a
//! race is told as certain when it is, without the `-cl-kernel-arg-info` almost no program
//! passes. Each `__kernel`'s parameters are read with their qualifiers (`const`, `__constant`,
//! `__local`, `read_only` / `write_only` images and pipes), and a pointer declared writable is
//! judged by its body: stored through (`a[i] = …`, `*p += …`, `vstore4(v, i, p)`, an atomic) is a
//! write, only loaded from is a read. Whatever the judge cannot follow (the pointer passed to a
//! function or copied, a type from a header, a branch of an `#if` it cannot evaluate) it does not
//! guess: the parameter keeps what its declaration says, with the reason.

pub mod lex;

use lex::Token;
use std::collections::HashMap;

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

/// The index after the `)` or `]` matching the opener at `open`.
fn matching(t: &[Token], open: usize) -> usize {
    let mut depth = 0usize;
    for (j, x) in t.iter().enumerate().skip(open) {
        match x.text.as_str() {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
    }
    t.len()
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

const ADDRESS: [&str; 10] = [
    "__global",
    "global",
    "__constant",
    "constant",
    "__local",
    "local",
    "__private",
    "private",
    "__generic",
    "generic",
];
const QUALIFIERS: [&str; 12] = [
    "const",
    "volatile",
    "restrict",
    "__restrict",
    "__read_only",
    "read_only",
    "__write_only",
    "write_only",
    "__read_write",
    "read_write",
    "unsigned",
    "signed",
];
const SCALARS: [&str; 17] = [
    "bool",
    "char",
    "uchar",
    "short",
    "ushort",
    "int",
    "uint",
    "long",
    "ulong",
    "float",
    "double",
    "half",
    "size_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
    "void",
];

fn is_image(w: &str) -> bool {
    w.starts_with("image") && w.ends_with("_t")
}

/// A scalar, a vector of one (`float4`), a sampler or an event: never memory.
fn plain_type(w: &str) -> bool {
    let base = w.trim_end_matches(char::is_numeric);
    SCALARS.contains(&w)
        || (SCALARS.contains(&base) && ["2", "3", "4", "8", "16"].contains(&&w[base.len()..]))
        || matches!(w, "sampler_t" | "event_t" | "struct" | "union" | "enum")
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

const ASSIGN: [&str; 11] = [
    "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=",
];

/// Built-ins that take a pointer: (name prefix, which argument is the pointer, whether they
/// write it). `None`: the pointer may be any argument.
const BUILTINS: [(&str, Option<usize>, bool); 13] = [
    ("vstore", Some(2), true),
    ("vload", Some(1), false),
    ("atomic_load", None, false),
    ("atomic_", None, true),
    ("atom_", None, true),
    ("atomic", None, true),
    ("prefetch", Some(0), false),
    ("async_work_group_copy", Some(0), true),
    ("async_work_group_strided_copy", Some(0), true),
    ("wait_group_events", None, false),
    ("work_group_", None, false),
    ("sizeof", None, false),
    ("__builtin_", None, false),
];

/// What the body does with what `name` points to.
fn judge_body(b: &[Token], name: &str, kernel: &str) -> Access {
    match judge_pointer(b, name, kernel, 0) {
        Ok(Some(w)) => Access::Writes(format!("`{kernel}` stores through `{name}`: {w}")),
        Ok(None) => Access::Reads(format!("`{kernel}` only loads from `{name}`")),
        Err(why) => Access::MayWrite(format!("not `const`; {why}")),
    }
}

/// How many copies of a copy of a pointer are followed.
const COPIES: usize = 4;

/// What `b` does with what `name` points to: `Ok(Some(how))` stores through it, `Ok(None)` only
/// loads, `Err(why)` a use not followed. A local pointer declared from `name` (through casts and
/// offsets, as pyopencl's `x = (__global T *)((__global char *) x__base + x__offset)`) is judged
/// as `name`, and so is `name` moved within its object (`p += n`, `p++`, `p = p + n`).
fn judge_pointer(
    b: &[Token],
    name: &str,
    kernel: &str,
    copies: usize,
) -> Result<Option<String>, String> {
    let declared = |why: String| Err(why);
    let mut write: Option<String> = None;
    // Past `name = name + n;`: the `name` on its right is the same move.
    let mut past = 0;
    for i in (0..b.len()).filter(|&i| b[i].is(name)) {
        if i < past {
            continue;
        }
        let prev = i.checked_sub(1).map(|j| b[j].text.as_str());
        if matches!(prev, Some("." | "->")) {
            continue; // a member of something else
        }
        if let Some(why) = &b[i].unsure {
            return declared(format!("`{kernel}` uses `{name}` {why}"));
        }
        let next = b.get(i + 1).map(|x| x.text.as_str());
        // The pointer itself changed or redeclared: what it points to after is not followed.
        let type_before =
            |j: usize| plain_type(&b[j].text) || ADDRESS.contains(&b[j].text.as_str());
        let deref = prev == Some("*") && unary(b, i - 1);
        if (i >= 1 && type_before(i - 1)) || (prev == Some("*") && i >= 2 && type_before(i - 2)) {
            return declared(format!(
                "`{kernel}` redeclares `{name}`, which clxfer does not follow"
            ));
        }
        // The pointer moved within its object: what it points to is still the argument's.
        let moved_to = statement_rest(b, i + 2);
        let moved = matches!(next, Some("+=" | "-=" | "++" | "--"))
            || (matches!(prev, Some("++" | "--")) && next != Some("["))
            || (next == Some("=") && offset_of(moved_to, name));
        if !deref && moved {
            if next == Some("=") {
                past = i + 2 + moved_to.len();
            }
            continue;
        }
        if !deref && next.is_some_and(|n| ASSIGN.contains(&n)) {
            return declared(format!(
                "`{kernel}` changes `{name}`, which clxfer does not follow"
            ));
        }
        // `name[…]`, `*name`, `*(name + …)`: where the lvalue starts and ends.
        let lvalue = if next == Some("[") {
            Some((i, element_end(b, i + 1)))
        } else if deref {
            Some((i - 1, i + 1))
        } else if prev == Some("(")
            && i >= 2
            && b[i - 2].is("*")
            && unary(b, i - 2)
            && matches!(next, Some("+" | "-" | ")"))
        {
            Some((i - 2, matching(b, i - 1)))
        } else {
            None
        };
        if let Some((start, end)) = lvalue {
            let prefix = start.checked_sub(1).map(|j| b[j].text.as_str());
            if prefix == Some("&") {
                match call_of(b, start - 1).map(|(f, arg)| (builtin(&f, arg), f)) {
                    Some((Some(true), f)) => {
                        write.get_or_insert(format!("`{f}(&{name}[…])`"));
                    }
                    Some((Some(false), _)) => {}
                    Some((None, f)) => {
                        return declared(format!(
                            "`{kernel}` passes `&{name}[…]` to `{f}`, which clxfer does not follow"
                        ));
                    }
                    None => {
                        return declared(format!(
                            "`{kernel}` takes the address `&{name}[…]`, which clxfer does not follow"
                        ));
                    }
                }
                continue;
            }
            let op = b.get(member_end(b, end)).map(|x| x.text.as_str());
            if let Some(o) = op.filter(|o| ASSIGN.contains(o) || *o == "++" || *o == "--") {
                let lv = if start == i {
                    format!("{name}[…]")
                } else {
                    format!("*{name}")
                };
                write.get_or_insert(format!("`{lv} {o}`"));
            } else if let Some(o) = prefix.filter(|p| *p == "++" || *p == "--") {
                write.get_or_insert(format!("`{o}{name}[…]`"));
            }
            continue;
        }
        // A bare use: an argument of a call, or a copy of the pointer.
        let whole_arg =
            matches!(prev, Some("(" | ",")) && matches!(next, Some(")" | ",") | Some("+"));
        match call_of(b, i).filter(|_| whole_arg) {
            Some((f, arg)) => match builtin(&f, arg) {
                Some(true) => {
                    write.get_or_insert(format!("`{f}(…{name}…)`"));
                }
                Some(false) => {}
                None => {
                    return declared(format!(
                        "`{kernel}` passes `{name}` to `{f}`, which clxfer does not follow"
                    ));
                }
            },
            None => match copy_at(b, i, name).filter(|_| copies < COPIES) {
                Some((copy, after)) => {
                    if let Some(w) = judge_pointer(&b[after..], &copy, kernel, copies + 1)? {
                        write.get_or_insert(format!("{w} (`{copy}` is a copy of `{name}`)"));
                    }
                }
                None => {
                    return declared(format!(
                        "`{kernel}` copies or converts the pointer `{name}`, which clxfer does \
                         not follow"
                    ));
                }
            },
        }
    }
    Ok(write)
}

/// The tokens from `at` to the end of their statement (its `;`), or none where a block opens
/// or closes first.
fn statement_rest(b: &[Token], at: usize) -> &[Token] {
    let rest = b.get(at..).unwrap_or_default();
    match rest
        .iter()
        .position(|x| x.is(";") || x.is("{") || x.is("}"))
    {
        Some(end) if rest[end].is(";") => &rest[..end],
        _ => &[],
    }
}

/// Whether `e` is `name` cast and offset, and nothing else: `name` once, not loaded from, no
/// call, subscript, address or member, no second expression.
fn offset_of(e: &[Token], name: &str) -> bool {
    let once = e.iter().filter(|x| x.is(name)).count() == 1;
    let plain = e.iter().enumerate().all(|(j, x)| {
        let call = x.is_word() && e.get(j + 1).is_some_and(|n| n.is("("));
        let op = matches!(x.text.as_str(), "(" | ")" | "*" | "+" | "-");
        x.unsure.is_none() && !call && (op || x.is_word())
    });
    let loaded = e.iter().position(|x| x.is(name)).is_some_and(|j| {
        j >= 1 && e[j - 1].is("*") && (j == 1 || matches!(e[j - 2].text.as_str(), "(" | "+" | "-"))
    });
    once && plain && !loaded
}

/// Where `name` at `i` initialises a local pointer (`T *copy = (T *)(name + off);`): the
/// copy's name and where the tokens after that statement begin.
fn copy_at(b: &[Token], i: usize, name: &str) -> Option<(String, usize)> {
    let start = (0..i)
        .rev()
        .find(|&j| b[j].is(";") || b[j].is("{") || b[j].is("}"))
        .map_or(0, |j| j + 1);
    let stmt = statement_rest(b, start);
    let end = start + stmt.len();
    if end <= i {
        return None;
    }
    let eq = stmt.iter().position(|x| x.is("="))?;
    let (lhs, rhs) = (&stmt[..eq], &stmt[eq + 1..]);
    let copy = lhs.last().filter(|c| c.is_word())?;
    let typed = lhs.len() >= 3
        && lhs[lhs.len() - 2].is("*")
        && lhs[..lhs.len() - 2]
            .iter()
            .all(|x| x.is_word() || x.is("*"));
    (typed && start + eq < i && offset_of(rhs, name)).then(|| (copy.text.clone(), end + 1))
}

fn is_operator_word(w: &str) -> bool {
    matches!(w, "return" | "case" | "sizeof")
}

/// Whether the `*` at `at` is a dereference (nothing it could multiply before it).
fn unary(b: &[Token], at: usize) -> bool {
    match at.checked_sub(1).map(|j| &b[j]) {
        None => true,
        Some(p) if p.is_word() => is_operator_word(&p.text),
        Some(p) => !matches!(p.text.as_str(), ")" | "]"),
    }
}

/// After `name[…]` (the `[` at `open`), and any further `[…]`.
fn element_end(b: &[Token], open: usize) -> usize {
    let mut end = matching(b, open);
    while b.get(end).is_some_and(|x| x.is("[")) {
        end = matching(b, end);
    }
    end
}

/// Past `.x`, `->f`, `[…]` after an lvalue.
fn member_end(b: &[Token], mut at: usize) -> usize {
    loop {
        match b.get(at).map(|x| x.text.as_str()) {
            Some("." | "->") if b.get(at + 1).is_some_and(Token::is_word) => at += 2,
            Some("[") => at = matching(b, at),
            _ => return at,
        }
    }
}

/// The function whose argument list holds the token at `at`, and which argument it is.
fn call_of(b: &[Token], at: usize) -> Option<(String, usize)> {
    let mut depth = 0usize;
    let mut arg = 0;
    for j in (0..at).rev() {
        match b[j].text.as_str() {
            ")" | "]" | "}" => depth += 1,
            "[" | "{" if depth == 0 => return None,
            "(" | "[" | "{" if depth > 0 => depth -= 1,
            "," if depth == 0 => arg += 1,
            ";" if depth == 0 => return None,
            "(" => {
                let f = j.checked_sub(1).map(|k| &b[k]).filter(|f| f.is_word())?;
                return (!is_operator_word(&f.text) || f.is("sizeof"))
                    .then(|| (f.text.clone(), arg));
            }
            _ => {}
        }
    }
    None
}

/// Whether built-in `f` writes its pointer argument `arg`; `None`: not a built-in clxfer knows.
fn builtin(f: &str, arg: usize) -> Option<bool> {
    let (_, at, writes) = BUILTINS.iter().find(|(p, _, _)| f.starts_with(p))?;
    match at {
        Some(a) if *a != arg && f.starts_with("async") => Some(false), // the source
        Some(a) if *a != arg => None,
        _ => Some(*writes),
    }
}

#[cfg(test)]
mod tests;

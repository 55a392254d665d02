//! What a kernel's body does with the memory one pointer parameter points to: stored through,
//! only loaded from, or used in a way clxfer does not follow, with the reason; local pointers
//! made from it by casts and offsets are followed as the parameter (issue #56).

use super::lex::{Token, matching};
use super::words::{ADDRESS, plain_type};

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

/// How many copies of a copy of a pointer are followed.
const COPIES: usize = 4;

/// What `b` does with what `name` points to: `Ok(Some(how))` stores through it, `Ok(None)` only
/// loads, `Err(why)` a use not followed. A local pointer declared from `name` (through casts and
/// offsets, as pyopencl's `x = (__global T *)((__global char *) x__base + x__offset)`) is judged
/// as `name`, and so is `name` moved within its object (`p += n`, `p++`, `p = p + n`).
pub(super) fn judge_pointer(
    b: &[Token],
    name: &str,
    kernel: &str,
    copies: usize,
) -> Result<Option<String>, String> {
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
            return Err(format!("`{kernel}` uses `{name}` {why}"));
        }
        let next = b.get(i + 1).map(|x| x.text.as_str());
        // The pointer itself changed or redeclared: what it points to after is not followed.
        let type_before =
            |j: usize| plain_type(&b[j].text) || ADDRESS.contains(&b[j].text.as_str());
        let deref = prev == Some("*") && unary(b, i - 1);
        if (i >= 1 && type_before(i - 1)) || (prev == Some("*") && i >= 2 && type_before(i - 2)) {
            return Err(format!(
                "`{kernel}` redeclares `{name}`, which clxfer does not follow"
            ));
        }
        // The pointer moved within its object: what it points to is still the argument's.
        let moved_to = (next == Some("=")).then(|| statement_rest(b, i + 2));
        let moved = matches!(next, Some("+=" | "-=" | "++" | "--"))
            || (matches!(prev, Some("++" | "--")) && next != Some("["))
            || moved_to.is_some_and(|e| offset_of(e, name));
        if !deref && moved {
            if let Some(e) = moved_to {
                past = i + 2 + e.len();
            }
            continue;
        }
        if !deref && next.is_some_and(|n| ASSIGN.contains(&n)) {
            return Err(format!(
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
                        return Err(format!(
                            "`{kernel}` passes `&{name}[…]` to `{f}`, which clxfer does not follow"
                        ));
                    }
                    None => {
                        return Err(format!(
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
                    return Err(format!(
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
                    return Err(format!(
                        "`{kernel}` copies or converts the pointer `{name}`, which clxfer does \
                         not follow"
                    ));
                }
            },
        }
    }
    Ok(write)
}

/// Whether a statement ends (or a block opens or closes) at `x`.
fn boundary(x: &Token) -> bool {
    x.is(";") || x.is("{") || x.is("}")
}

/// The tokens from `at` to the end of their statement (its `;`), or none where a block opens
/// or closes first.
fn statement_rest(b: &[Token], at: usize) -> &[Token] {
    let rest = b.get(at..).unwrap_or_default();
    match rest.iter().position(boundary) {
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
    let start = (0..i).rev().find(|&j| boundary(&b[j])).map_or(0, |j| j + 1);
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

//! OpenCL C source as tokens, after the preprocessing clxfer can see: comments and line
//! continuations removed, `#define`d macros (object- and function-like) expanded, `-D` options
//! applied, and `#if`/`#ifdef` branches taken where their condition is known. What it cannot
//! know (a header's contents, a condition on a macro the driver defines) is not guessed: each
//! token carries whether it comes from such a place, with the reason, and the judge above decides
//! what that makes unsure.

use std::collections::HashMap;

/// One token: an identifier or number (`word`), or punctuation, a string or a character.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub text: String,
    /// Why the token may not be what the compiler sees (inside an `#if` clxfer cannot evaluate,
    /// or from a function-like macro it could not expand faithfully).
    pub unsure: Option<String>,
}

impl Token {
    pub fn is(&self, s: &str) -> bool {
        self.text == s
    }
    pub fn is_word(&self) -> bool {
        self.text
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    }
}

/// A `#define`: its parameters (`None`: object-like) and body.
#[derive(Clone, Debug)]
struct Macro {
    params: Option<Vec<String>>,
    body: Vec<String>,
}

/// What preprocessing saw besides the tokens: `#include`s (whose contents are unknown).
#[derive(Debug, Default)]
pub struct Lexed {
    pub tokens: Vec<Token>,
    pub includes: Vec<String>,
}

/// Multi-character punctuators, longest first.
const PUNCT: [&str; 22] = [
    "<<=", ">>=", "...", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=",
    "-=", "*=", "/=", "%=", "&=", "|=", "^=",
];

/// The raw tokens of one line of text (comments already gone).
fn split(line: &str) -> Vec<String> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric()
            || c == '_'
            || (c == '.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            let start = i;
            while i < b.len() && ((b[i] as char).is_alphanumeric() || b[i] == b'_' || b[i] == b'.')
            {
                i += 1;
            }
            out.push(line[start..i].to_string());
        } else if c == '"' || c == '\'' {
            let start = i;
            i += 1;
            while i < b.len() && b[i] as char != c {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            out.push(line[start..i].to_string());
        } else if let Some(p) = PUNCT.iter().find(|p| line[i..].starts_with(*p)) {
            out.push(p.to_string());
            i += p.len();
        } else {
            let n = c.len_utf8();
            out.push(line[i..i + n].to_string());
            i += n;
        }
    }
    out
}

/// The source without comments and line continuations, as lines (a comment spanning lines
/// leaves its lines' breaks, so directives stay on lines of their own).
fn logical_lines(src: &str) -> Vec<String> {
    let src = src.replace("\\\r\n", "").replace("\\\n", "");
    let mut text = String::with_capacity(src.len());
    let mut chars = src.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            text.push(c);
            if c == '\\' {
                text.extend(chars.next());
            } else if c == q || c == '\n' {
                quote = None;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                while chars.peek().is_some_and(|&c| c != '\n') {
                    chars.next();
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                text.push(' ');
                for c in chars.by_ref() {
                    if c == '\n' {
                        text.push('\n');
                    }
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            ('"' | '\'', _) => {
                quote = Some(c);
                text.push(c);
            }
            _ => text.push(c),
        }
    }
    text.lines().map(str::to_string).collect()
}

/// The `-D NAME[=VALUE]` options of a build (`-DNAME` and `-D NAME` alike).
pub fn defines_of(options: &str) -> Vec<(String, String)> {
    let words: Vec<&str> = options.split_whitespace().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let def = match words[i] {
            "-D" => {
                i += 1;
                words.get(i).copied()
            }
            w => w.strip_prefix("-D"),
        };
        if let Some(d) = def.filter(|d| !d.is_empty()) {
            let (name, value) = d.split_once('=').unwrap_or((d, "1"));
            out.push((name.to_string(), value.to_string()));
        }
        i += 1;
    }
    out
}

/// One open `#if`: whether its branch is taken (`None`: unknown), and whether an earlier branch
/// of it was.
struct Cond {
    taken: Option<bool>,
    done: Option<bool>,
    why: String,
}

struct Pre {
    macros: HashMap<String, Macro>,
    conds: Vec<Cond>,
    out: Lexed,
}

/// Names a driver or header may define that clxfer cannot know: extensions, versions, the
/// compiler's own.
fn driver_defined(name: &str) -> bool {
    name.starts_with("cl_") || name.starts_with("__") || name.starts_with("CL_")
}

impl Pre {
    /// Whether tokens here reach the compiler: `Some(false)` skipped, `None` unknown (why).
    fn active(&self) -> Result<(), Option<String>> {
        let mut why = None;
        for c in &self.conds {
            match c.taken {
                Some(false) => return Err(None),
                None => why = Some(c.why.clone()),
                Some(true) => {}
            }
        }
        match why {
            None => Ok(()),
            w => Err(w),
        }
    }

    fn defined(&self, name: &str) -> Option<bool> {
        if self.macros.contains_key(name) {
            Some(true)
        } else if driver_defined(name) || !self.out.includes.is_empty() {
            None
        } else {
            Some(false)
        }
    }

    /// An `#if`/`#elif` condition: what it comes to, where clxfer can tell. Only the shapes
    /// kernels use: a number, `defined X`, a macro, `!`, and `&&`/`||` of those.
    fn condition(&self, words: &[String]) -> Option<bool> {
        let mut terms = Vec::new();
        let mut ops = Vec::new();
        let mut i = 0;
        while i < words.len() {
            let mut negate = false;
            while words.get(i).is_some_and(|w| w == "!") {
                negate = !negate;
                i += 1;
            }
            let value = match words.get(i).map(String::as_str) {
                Some("defined") => {
                    let paren = words.get(i + 1).is_some_and(|w| w == "(");
                    let name = words.get(i + 1 + paren as usize)?;
                    i += 1 + 2 * paren as usize;
                    self.defined(name)
                }
                Some(w) if w.chars().next()?.is_ascii_digit() => Some(
                    w.trim_end_matches(['u', 'U', 'l', 'L'])
                        .parse::<i64>()
                        .ok()?
                        != 0,
                ),
                Some(w) => match self.macros.get(w) {
                    Some(m) if m.params.is_none() => self.condition(&m.body),
                    Some(_) => None,
                    // An undefined name is 0, unless a driver or header may define it.
                    None => self.defined(w).map(|_| false),
                },
                None => return None,
            };
            terms.push(value.map(|v| v != negate));
            i += 1;
            match words.get(i).map(String::as_str) {
                None => break,
                Some(op @ ("&&" | "||")) => ops.push(op == "&&"),
                Some(_) => return None,
            }
            i += 1;
        }
        // `&&` before `||`, as C does.
        let mut ors = vec![terms.first().copied()?];
        for (and, t) in ops.into_iter().zip(terms.into_iter().skip(1)) {
            if and {
                let last = ors.pop()?;
                ors.push(match (last, t) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                });
            } else {
                ors.push(t);
            }
        }
        if ors.contains(&Some(true)) {
            Some(true)
        } else if ors.iter().all(|t| *t == Some(false)) {
            Some(false)
        } else {
            None
        }
    }

    fn directive(&mut self, words: &[String]) {
        let (Some(d), rest) = (words.first(), words.get(1..).unwrap_or(&[])) else {
            return;
        };
        let text = rest.join(" ");
        match d.as_str() {
            "if" | "ifdef" | "ifndef" => {
                let taken = match (d.as_str(), rest.first()) {
                    ("ifdef", Some(n)) => self.defined(n),
                    ("ifndef", Some(n)) => self.defined(n).map(|v| !v),
                    _ => self.condition(rest),
                };
                self.conds.push(Cond {
                    taken,
                    done: taken,
                    why: format!("inside `#{d} {text}`, which clxfer cannot evaluate"),
                });
            }
            "elif" | "else" => {
                let cond = match d.as_str() {
                    "elif" => self.condition(rest),
                    _ => Some(true),
                };
                if let Some(c) = self.conds.last_mut() {
                    let taken = match (c.done, cond) {
                        (Some(true), _) => Some(false),
                        (Some(false), v) => v,
                        (None, _) => None,
                    };
                    c.done = match (c.done, taken) {
                        (Some(true), _) | (_, Some(true)) => Some(true),
                        (Some(false), Some(false)) => Some(false),
                        _ => None,
                    };
                    c.taken = taken;
                    if taken.is_none() {
                        c.why = format!("inside `#{d} {text}`, which clxfer cannot evaluate");
                    }
                }
            }
            "endif" => {
                self.conds.pop();
            }
            _ if self.active() == Err(None) => {}
            "define" => {
                let Some(name) = rest.first() else { return };
                // A function-like macro's `(` follows its name with no space: the words lost
                // that, so the define's line is read again in `define`.
                self.macros.insert(
                    name.clone(),
                    Macro {
                        params: None,
                        body: rest[1..].to_vec(),
                    },
                );
            }
            "undef" => {
                if let Some(n) = rest.first() {
                    self.macros.remove(n);
                }
            }
            "include" => self.out.includes.push(text),
            _ => {}
        }
    }

    /// `#define NAME(a, b) body`, read from the line itself (the `(` right after the name).
    fn define(&mut self, line: &str) {
        let after = line.trim_start().trim_start_matches('#').trim_start();
        let Some(rest) = after.strip_prefix("define") else {
            return;
        };
        let rest = rest.trim_start();
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let (name, tail) = rest.split_at(end);
        if let Some(params) = tail.strip_prefix('(') {
            let Some((params, body)) = params.split_once(')') else {
                return;
            };
            let params = params
                .split(',')
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty());
            self.macros.insert(
                name.to_string(),
                Macro {
                    params: Some(params.collect()),
                    body: split(body),
                },
            );
        }
    }
}

/// Expands macros in `words` (a name is not expanded inside its own expansion).
fn expand(
    macros: &HashMap<String, Macro>,
    words: &[String],
    hidden: &mut Vec<String>,
    out: &mut Vec<Token>,
    unsure: &Option<String>,
) {
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        let Some(m) = macros.get(w).filter(|_| !hidden.contains(w)) else {
            out.push(Token {
                text: w.clone(),
                unsure: unsure.clone(),
            });
            i += 1;
            continue;
        };
        let Some(params) = &m.params else {
            hidden.push(w.clone());
            expand(macros, &m.body, hidden, out, unsure);
            hidden.pop();
            i += 1;
            continue;
        };
        if words.get(i + 1).is_none_or(|n| n != "(") {
            out.push(Token {
                text: w.clone(),
                unsure: unsure.clone(),
            });
            i += 1;
            continue;
        }
        // The arguments, split at commas outside parentheses.
        let mut args: Vec<Vec<String>> = vec![Vec::new()];
        let mut depth = 0;
        let mut j = i + 2;
        while j < words.len() {
            match words[j].as_str() {
                "(" | "[" | "{" => depth += 1,
                ")" if depth == 0 => break,
                ")" | "]" | "}" => depth -= 1,
                "," if depth == 0 => {
                    args.push(Vec::new());
                    j += 1;
                    continue;
                }
                _ => {}
            }
            if let Some(a) = args.last_mut() {
                a.push(words[j].clone());
            }
            j += 1;
        }
        let mut body = Vec::new();
        for b in &m.body {
            match params.iter().position(|p| p == b) {
                Some(k) => body.extend(args.get(k).cloned().unwrap_or_default()),
                None => body.push(b.clone()),
            }
        }
        // Stringizing and pasting make tokens clxfer does not rebuild.
        let pastes = m.body.iter().any(|b| b == "#" || b == "##");
        let why = pastes.then(|| format!("from macro `{w}`, which pastes or stringizes tokens"));
        hidden.push(w.clone());
        expand(macros, &body, hidden, out, &why.or_else(|| unsure.clone()));
        hidden.pop();
        i = j + 1;
    }
}

/// The tokens the compiler sees, as far as clxfer can tell, with the build's `-D` options.
pub fn lex(src: &str, defines: &[(String, String)]) -> Lexed {
    let mut pre = Pre {
        macros: HashMap::new(),
        conds: Vec::new(),
        out: Lexed::default(),
    };
    for (name, value) in defines {
        pre.macros.insert(
            name.clone(),
            Macro {
                params: None,
                body: split(value),
            },
        );
    }
    let mut pending: Vec<String> = Vec::new();
    let mut pending_unsure: Option<String> = None;
    let flush = |pre: &mut Pre, pending: &mut Vec<String>, unsure: &Option<String>| {
        let mut hidden = Vec::new();
        let mut toks = Vec::new();
        expand(&pre.macros, pending, &mut hidden, &mut toks, unsure);
        pre.out.tokens.extend(toks);
        pending.clear();
    };
    for line in logical_lines(src) {
        let words = split(&line);
        if words.first().is_some_and(|w| w == "#") {
            flush(&mut pre, &mut pending, &pending_unsure);
            pre.directive(&words[1..]);
            if words.get(1).is_some_and(|w| w == "define") && pre.active() != Err(None) {
                pre.define(&line);
            }
            continue;
        }
        let unsure = match pre.active() {
            Err(None) => continue,
            Err(why) => why,
            Ok(()) => None,
        };
        if unsure != pending_unsure {
            flush(&mut pre, &mut pending, &pending_unsure);
            pending_unsure = unsure;
        }
        // Lines are gathered so that a macro call may span several.
        pending.extend(words);
    }
    flush(&mut pre, &mut pending, &pending_unsure);
    pre.out
}

/// The index after the `)` or `]` matching the opener at `open`.
pub fn matching(t: &[Token], open: usize) -> usize {
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

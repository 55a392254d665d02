//! The house rule (docs of the design): each room imports only rooms below it. A room is a
//! directory of `src/` or a file at its top; this test reads every `crate::ROOM` in each room's
//! code (comments left out) and fails on a circle, naming it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn rooms_import_only_rooms_below_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut rooms: BTreeMap<String, Vec<std::path::PathBuf>> = BTreeMap::new();
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        let p = e.path();
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        if name == "lib" || name == "bin" {
            continue;
        }
        let mut files = Vec::new();
        if p.is_dir() {
            rust_files(&p, &mut files);
        } else {
            files.push(p);
        }
        rooms.insert(name, files);
    }
    let names: BTreeSet<String> = rooms.keys().cloned().collect();
    let mut imports: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (room, files) in &rooms {
        let mut to = BTreeSet::new();
        for f in files {
            for line in std::fs::read_to_string(f).unwrap().lines() {
                let code = line.split("//").next().unwrap_or("");
                for (at, _) in code.match_indices("crate::") {
                    let rest = &code[at + "crate::".len()..];
                    let other: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if other != *room && names.contains(&other) {
                        to.insert(other);
                    }
                }
            }
        }
        imports.insert(room, to);
    }
    // Depth-first search for a circle.
    fn visit<'a>(
        room: &'a str,
        imports: &'a BTreeMap<&'a str, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if let Some(at) = path.iter().position(|r| *r == room) {
            let mut circle = path[at..].to_vec();
            circle.push(room);
            panic!("an import circle between rooms: {}", circle.join(" → "));
        }
        if done.contains(room) {
            return;
        }
        path.push(room);
        for other in &imports[room] {
            visit(other, imports, path, done);
        }
        path.pop();
        done.insert(room);
    }
    let mut done = BTreeSet::new();
    for room in imports.keys() {
        visit(room, &imports, &mut Vec::new(), &mut done);
    }
    // The lowest room imports nothing of clxfer's.
    assert!(
        imports["vocab"].is_empty(),
        "vocab imports {:?}",
        imports["vocab"]
    );
}

/// A file of `src/` as a module: its path from the crate root (`report::builder`; a `mod.rs` is
/// its directory's module).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// Each `use` statement's paths, braces expanded (`use super::{a, b::{c, d}}` is `super::a`,
/// `super::b::c`, `super::b::d`), and every other `crate::`/`super::`/`self::` path of the code.
fn paths_in(code: &str) -> Vec<String> {
    fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
        let tree = tree.trim();
        if let Some(open) = tree.find('{') {
            let head = format!("{prefix}{}", &tree[..open]);
            let close = tree.rfind('}').filter(|&c| c > open).unwrap_or(tree.len());
            let inner = &tree[open + 1..close];
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(&head, &inner[start..i], out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            expand(&head, &inner[start..], out);
        } else if !tree.is_empty() {
            let path = tree.split(" as ").next().unwrap().trim();
            out.push(format!("{prefix}{path}"));
        }
    }
    let mut out = Vec::new();
    // `use` statements: each line's, from `use` to its `;` (a line of text that says "use " is
    // no statement).
    let mut lines = code.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        let t = t
            .strip_prefix("pub(crate) ")
            .or_else(|| t.strip_prefix("pub "))
            .unwrap_or(t);
        let Some(tree) = t.strip_prefix("use ") else {
            continue;
        };
        let mut stmt = tree.to_string();
        while !stmt.contains(';') {
            match lines.next() {
                Some(l) => stmt.push_str(l),
                None => break,
            }
        }
        expand("", stmt.split(';').next().unwrap(), &mut out);
    }
    for (at, _) in code.match_indices("::") {
        let start = code[..at]
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .map_or(0, |i| i + 1);
        let path: String = code[start..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        if ["crate::", "super::", "self::"]
            .iter()
            .any(|p| path.starts_with(p))
        {
            out.push(path);
        }
    }
    out
}

/// The file a path names from module `here` (`None`: outside `src/` or not a module's item).
fn target(
    here: &[String],
    path: &str,
    files: &BTreeMap<Vec<String>, std::path::PathBuf>,
    reexports: &BTreeMap<Vec<String>, BTreeMap<String, String>>,
) -> Option<Vec<String>> {
    let mut segs = path.split("::").filter(|s| !s.is_empty());
    let mut at: Vec<String> = match segs.next()? {
        "crate" => Vec::new(),
        "self" => here.to_vec(),
        "super" => here[..here.len().checked_sub(1)?].to_vec(),
        _ => return None,
    };
    for s in segs {
        if s == "super" {
            at.pop();
            continue;
        }
        let mut next = at.clone();
        next.push(s.to_string());
        if files.contains_key(&next) {
            at = next;
            continue;
        }
        // An item of `at`: re-exported from a child (`pub use child::Item`) is the child's.
        if let Some(child) = reexports.get(&at).and_then(|r| r.get(s)) {
            at.push(child.clone());
        }
        break;
    }
    files.contains_key(&at).then_some(at)
}

/// The names of a file's public items (`pub struct X`, `pub fn x`, …), what `pub use file::*`
/// re-exports.
fn public_items(code: &str) -> Vec<String> {
    let kinds = [
        "struct ",
        "enum ",
        "fn ",
        "unsafe fn ",
        "type ",
        "trait ",
        "static ",
        "const ",
        "mod ",
    ];
    code.lines()
        .filter_map(|l| l.trim_start().strip_prefix("pub "))
        .filter_map(|l| kinds.iter().find_map(|k| l.strip_prefix(k)))
        .map(|l| {
            l.chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

/// The circles of imports between the files of `src` (issue #44), each named by its files from
/// the least. A room's `mod.rs` declaring its children (`mod x;`) and re-exporting their items
/// (`pub use x::Y;`) is not an import; a file's unit tests apart.
fn circles(src: &Path) -> BTreeSet<String> {
    let src = src.to_path_buf();
    let mut all = Vec::new();
    rust_files(&src, &mut all);
    all.retain(|f| !f.starts_with(src.join("bin")));
    let files: BTreeMap<Vec<String>, std::path::PathBuf> = all
        .iter()
        .map(|f| (module_of(&src, f), f.clone()))
        .collect();
    let code_of = |f: &Path| -> String {
        let text = std::fs::read_to_string(f).unwrap();
        // Unit tests apart: a file's tests may use what sits above it.
        let text = text.split("#[cfg(test)]").next().unwrap_or("").to_string();
        text.lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // What each directory module re-exports, by name: the child it comes from.
    let mut reexports: BTreeMap<Vec<String>, BTreeMap<String, String>> = BTreeMap::new();
    for (m, f) in &files {
        let code = code_of(f);
        for stmt in code.split(';') {
            let s = stmt.trim();
            let Some(tree) = s
                .strip_prefix("pub use ")
                .or_else(|| s.strip_prefix("pub(crate) use "))
            else {
                continue;
            };
            for p in paths_in(&format!("use {tree};")) {
                let segs: Vec<&str> = p.split("::").collect();
                let child = [m.clone(), vec![segs[0].to_string()]].concat();
                if segs.len() < 2 || !files.contains_key(&child) {
                    continue;
                }
                let names = match *segs.last().unwrap() {
                    // A glob re-exports the child's public items.
                    "*" => public_items(&code_of(&files[&child])),
                    name => vec![name.to_string()],
                };
                for name in names {
                    reexports
                        .entry(m.clone())
                        .or_default()
                        .insert(name, segs[0].to_string());
                }
            }
        }
    }
    let mut imports: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (m, f) in &files {
        let code = code_of(f);
        let mut to = BTreeSet::new();
        for stmt_line in code.split(';') {
            let s = stmt_line.trim();
            // A room's own declarations and re-exports of its children.
            if s.starts_with("pub use ") || s.starts_with("pub(crate) use ") {
                let first = s
                    .trim_start_matches("pub(crate) use ")
                    .trim_start_matches("pub use ");
                if !first.starts_with("crate::") && !first.starts_with("super::") {
                    continue;
                }
            }
            for p in paths_in(s) {
                // A bare child path in a directory module (`use builder::X`) is `self::builder`.
                if let Some(t) = target(m, &p, &files, &reexports)
                    && &t != m
                {
                    to.insert(t);
                }
            }
            if !files[m].ends_with("mod.rs") {
                continue;
            }
            let t = s
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub ");
            if let Some(rest) = t.strip_prefix("use ") {
                for p in paths_in(&format!("use {rest};")) {
                    if let Some(t) = target(m, &format!("self::{p}"), &files, &reexports)
                        && &t != m
                    {
                        to.insert(t);
                    }
                }
            }
        }
        imports.insert(m.clone(), to);
    }
    // Every circle, each once, named by its files.
    let name = |m: &Vec<String>| files[m].strip_prefix(&src).unwrap().display().to_string();
    let mut circles: BTreeSet<String> = BTreeSet::new();
    fn visit(
        m: &Vec<String>,
        imports: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        path: &mut Vec<Vec<String>>,
        done: &mut BTreeSet<Vec<String>>,
        found: &mut Vec<Vec<Vec<String>>>,
    ) {
        if let Some(at) = path.iter().position(|x| x == m) {
            found.push(path[at..].to_vec());
            return;
        }
        if done.contains(m) {
            return;
        }
        path.push(m.clone());
        for o in &imports[m] {
            visit(o, imports, path, done, found);
        }
        path.pop();
        done.insert(m.clone());
    }
    let mut done = BTreeSet::new();
    let mut found = Vec::new();
    for m in imports.keys() {
        visit(m, &imports, &mut Vec::new(), &mut done, &mut found);
    }
    for c in found {
        let mut names: Vec<String> = c.iter().map(name).collect();
        // Start at the least name, so a circle reads the same however it was entered.
        let least = (0..names.len()).min_by_key(|&i| names[i].clone()).unwrap();
        names.rotate_left(least);
        names.push(names[0].clone());
        circles.insert(names.join(" → "));
    }
    circles
}

/// Issue #44: inside a room too, files form layers: no file imports one that imports it back,
/// directly or through others.
#[test]
fn files_import_only_files_below_them() {
    let found = circles(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(
        found.is_empty(),
        "import circles between files:\n  {}",
        found
            .iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>()
            .join("\n  ")
    );
}

/// The check finds a circle planted in a room, and none where the room's `mod.rs` only declares
/// and re-exports its files; a `mod.rs` that imports from its files and is imported back is in
/// a circle like any file.
#[test]
fn a_planted_circle_is_found_and_named() {
    let dir = std::env::temp_dir().join(format!("clxfer-house-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let room = dir.join("room");
    std::fs::create_dir_all(&room).unwrap();
    let write = |name: &str, text: &str| std::fs::write(room.join(name), text).unwrap();
    write(
        "mod.rs",
        "mod low;\nmod high;\npub use high::Top;\npub use low::{Base, Other};\n",
    );
    write("low.rs", "pub struct Base;\npub struct Other;\n");
    write("high.rs", "use super::low::Base;\npub struct Top(Base);\n");
    std::fs::write(dir.join("lib.rs"), "mod room;\n").unwrap();
    assert_eq!(circles(&dir), BTreeSet::new(), "layers, no circle");
    // The low file reaches up, once through the room's re-export and once by path.
    write(
        "low.rs",
        "pub struct Base;\npub struct Other(crate::room::Top);\n",
    );
    let found = circles(&dir);
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        ["room/high.rs → room/low.rs → room/high.rs"]
    );
    write(
        "low.rs",
        "pub struct Base;\npub fn f() { super::high::g() }\n",
    );
    assert_eq!(circles(&dir).len(), 1);
    // Through a glob re-export: `Top` comes from high.rs; an inline module's `use super::*`
    // is its own file's items, no import.
    write(
        "mod.rs",
        "mod low;\nmod high;\npub use high::*;\npub use low::*;\n",
    );
    write(
        "low.rs",
        "pub struct Base;\nmod inner {\n    use super::*;\n}\n",
    );
    assert_eq!(
        circles(&dir),
        BTreeSet::new(),
        "a glob and an inline module"
    );
    write(
        "low.rs",
        "pub struct Base;\npub struct Other(super::Top);\n",
    );
    assert_eq!(
        circles(&dir).into_iter().collect::<Vec<_>>(),
        ["room/high.rs → room/low.rs → room/high.rs"]
    );
    // A room's door that keeps state its files use, and imports from them (issue #58): the
    // door is no excuse.
    write(
        "mod.rs",
        "mod low;\nmod high;\nuse low::Base;\npub static STATE: Option<Base> = None;\n",
    );
    write(
        "low.rs",
        "pub struct Base;\npub fn f() { let _ = &super::STATE; }\n",
    );
    write("high.rs", "pub struct Top;\n");
    assert_eq!(
        circles(&dir).into_iter().collect::<Vec<_>>(),
        ["room/low.rs → room/mod.rs → room/low.rs"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Lines of code of a file: not blank, its unit tests apart.
fn code_lines(text: &str) -> usize {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    code.lines().filter(|l| !l.trim().is_empty()).count()
}

/// Files by idea: a file of more than this many lines of code holds several ideas, unless its
/// opening comment says why it is kept whole.
const LONG: usize = 600;

#[test]
fn files_hold_one_idea_each() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    rust_files(&src, &mut all);
    let mut long = Vec::new();
    for f in &all {
        let text = std::fs::read_to_string(f).unwrap();
        let name = f.strip_prefix(&src).unwrap().display().to_string();
        let opening: String = (text.lines())
            .take_while(|l| l.starts_with("//!"))
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase();
        if code_lines(&text) > LONG && !opening.contains("kept whole") {
            long.push(name);
        }
    }
    assert!(
        long.is_empty(),
        "over {LONG} lines of code, with no word in the opening comment of why it is kept whole: \
         {long:?}"
    );
}

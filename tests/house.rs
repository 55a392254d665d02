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

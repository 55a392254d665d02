//! What kind of program `clxfer run` is asked to run, as far as loading clxfer into it goes: a
//! statically linked one (no dynamic linker: neither LD_PRELOAD nor a loader layer reaches it) or
//! a setuid one (the dynamic linker ignores LD_PRELOAD for it).

use object::read::elf::{ElfFile64, ProgramHeader};
use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

#[derive(Debug, PartialEq, Eq)]
pub enum Kind {
    Static,
    Setuid,
    Dynamic,
}

/// The program's file: `program` itself when it names a path, else the first match on PATH.
fn resolve(program: &OsStr) -> Option<PathBuf> {
    let p = PathBuf::from(program);
    if p.components().count() > 1 {
        return Some(p);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(&p))
        .find(|c| c.is_file())
}

/// `None` when the file cannot be read or is no 64-bit ELF (a script: its interpreter is run).
pub fn inspect(program: &OsStr) -> Option<Kind> {
    let path = resolve(program)?;
    let mode = std::fs::metadata(&path).ok()?.permissions().mode();
    if mode & (libc::S_ISUID | libc::S_ISGID) != 0 {
        return Some(Kind::Setuid);
    }
    let data = std::fs::read(&path).ok()?;
    let elf = ElfFile64::<object::Endianness>::parse(&*data).ok()?;
    let endian = elf.endian();
    let interp = elf
        .elf_program_headers()
        .iter()
        .any(|h| h.p_type(endian) == object::elf::PT_INTERP);
    Some(if interp { Kind::Dynamic } else { Kind::Static })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_is_dynamic_and_a_script_is_not_elf() {
        assert_eq!(inspect(OsStr::new("sh")), Some(Kind::Dynamic));
        let script = std::env::temp_dir().join(format!("clxfer-elf-{}.sh", std::process::id()));
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        assert_eq!(inspect(script.as_os_str()), None);
        let _ = std::fs::remove_file(script);
        assert_eq!(inspect(OsStr::new("no-such-program-anywhere")), None);
    }
}

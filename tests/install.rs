//! Issue #55: one command installs clxfer from a clone (`scripts/install PREFIX`), and a Debian
//! package built by cargo-deb holds both files; each traces a program with only PATH set.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// `clxfer run --summary -- transfers` by the name `clxfer` alone, PATH holding `bin` first and
/// nothing of clxfer's in the environment.
fn traces_with_only_path(bin: &Path) {
    let mut cmd = command("clxfer", Load::None);
    cmd.env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env_remove("CLXFER_LOG")
        .env_remove("CLXFER_DIR")
        .args(["run", "--summary", "--"])
        .arg(program("transfers"));
    let r = run_cmd(cmd, Duration::from_secs(180));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stderr.contains("clxfer summary · transfers"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("clxfer: report: above, on stderr"));
}

#[test]
fn scripts_install_puts_a_working_clxfer_in_a_prefix() {
    let prefix = fresh_dir("install-prefix");
    let out = Command::new(root().join("scripts/install"))
        .arg(&prefix)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in ["bin/clxfer", "lib/libclxfer.so"] {
        assert!(prefix.join(f).is_file(), "{f} not installed");
    }
    traces_with_only_path(&prefix.join("bin"));
}

#[test]
fn the_debian_package_holds_both_files_and_works_unpacked() {
    let deb_dir = root().join("target/debian");
    let out = Command::new("cargo")
        .args(["deb", "--no-build", "--quiet", "--output"])
        .arg(&deb_dir)
        .current_dir(root())
        .output()
        .expect("cargo-deb (scripts/setup installs it)");
    assert!(
        out.status.success(),
        "cargo deb: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let deb = std::fs::read_dir(&deb_dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "deb"))
        .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok())
        .expect("a .deb");
    let contents = Command::new("dpkg-deb")
        .arg("-c")
        .arg(&deb)
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&contents.stdout);
    for f in ["./usr/bin/clxfer", "./usr/lib/clxfer/libclxfer.so"] {
        assert!(listing.contains(f), "{f} not in the package:\n{listing}");
    }
    let root_dir = fresh_dir("deb-root");
    let x = Command::new("dpkg-deb")
        .arg("-x")
        .arg(&deb)
        .arg(&root_dir)
        .status()
        .unwrap();
    assert!(x.success());
    traces_with_only_path(&root_dir.join("usr/bin"));
}

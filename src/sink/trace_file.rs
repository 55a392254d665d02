//! Creating the trace file: `clxfer-<program>-<pid>.json` in `CLXFER_DIR`, or the name
//! `CLXFER_OUTPUT` gives, created new (never clobbering an existing file, never following a
//! symlink), mode 0600, closed on exec. If the name is taken, `.1`, `.2`, … are tried.

use crate::job::Job;
use crate::trace::format::Format;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The program name as a file-name part: letters, digits, `.`, `_`, `-`; others become `_`.
pub fn sanitize(program: &str) -> String {
    let clean: String = program
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.is_empty() || clean.starts_with('.') {
        format!("program{clean}")
    } else {
        clean
    }
}

/// How many bytes a file may grow to: RLIMIT_FSIZE, past which a write raises SIGXFSZ (which would
/// kill the program), or no limit.
pub fn room() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut lim) } != 0
        || lim.rlim_cur == libc::RLIM_INFINITY
    {
        return u64::MAX;
    }
    lim.rlim_cur
}

/// The trace file's first name: `output` with its placeholders filled in, or
/// `clxfer-<program>-<pid>.<ext>` in `dir` (in a parallel job `clxfer-<program>-rank<R>-<pid>`),
/// the format's extension (`.json`, `.pftrace`).
pub fn trace_name(
    dir: &Path,
    output: Option<&str>,
    (program, pid): (&str, u32),
    job: &Job,
    format: Format,
) -> PathBuf {
    match output {
        Some(o) => PathBuf::from(fill_as(o, program, pid, job)),
        None => {
            let (program, ext) = (sanitize(program), format.extensions()[0]);
            let rank = job.rank.map(|r| format!("rank{r}-")).unwrap_or_default();
            dir.join(format!("clxfer-{program}-{rank}{pid}.{ext}"))
        }
    }
}

/// A file name given for this process's trace or report with its placeholders filled in:
/// `{program}` (made safe for a file name), `{pid}`, `{rank}` (empty outside a parallel job) and
/// `{host}`.
pub fn fill(name: &str, program: &str, job: &Job) -> String {
    fill_as(name, program, std::process::id(), job)
}

fn fill_as(name: &str, program: &str, pid: u32, job: &Job) -> String {
    let named = name
        .replace("{pid}", &pid.to_string())
        .replace("{program}", &sanitize(program));
    job.fill(&named)
}

/// Creates the file; on failure says so once (`clxfer:` warning) and returns `None`.
pub fn create(config: &crate::config::Config, program: &str) -> Option<(File, PathBuf)> {
    let first = trace_name(
        &config.dir,
        config.output.as_deref(),
        (program, std::process::id()),
        crate::job::this(),
        config.format,
    );
    match create_new(&first) {
        Ok(created) => Some(created),
        Err(why) => {
            let var = if config.output.is_some() {
                "CLXFER_OUTPUT"
            } else {
                "CLXFER_DIR"
            };
            crate::warn!(
                "cannot create the trace file {} ({why}); set {var} to a writable place. The \
                 program runs on untraced",
                first.display()
            );
            None
        }
    }
}

/// Notes in `clxfer run`'s file (`CLXFER_RUN_NOTES`) what this process wrote: one line,
/// `KIND PATH`, in one append (whole lines, however many processes write).
pub fn note(kind: &str, path: &Path) {
    use std::io::Write;
    let Some(notes) = &crate::config::global().run_notes else {
        return;
    };
    let line = format!("{kind} {}\n", path.display());
    let written = OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(notes)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        crate::debug!("cannot note {kind} in {} ({e})", notes.display());
    }
}

/// Creates `path` new: never clobbering, never following a symlink, mode 0600, closed on exec.
pub fn open_new(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Creates `first` new ([`open_new`]), or if its name is taken `<stem>.1.<ext>`, `<stem>.2.<ext>`, …: never
/// clobbering, never following a symlink, mode 0600, closed on exec.
pub fn create_new(first: &Path) -> Result<(File, PathBuf), String> {
    let stem = first.file_stem().unwrap_or_default().to_string_lossy();
    let ext = first
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    for n in 0..100 {
        let path = if n == 0 {
            first.to_path_buf()
        } else {
            first.with_file_name(format!("{stem}.{n}{ext}"))
        };
        match open_new(&path) {
            Ok(f) => {
                let path = std::fs::canonicalize(&path).unwrap_or(path);
                return Ok((f, path));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e.to_string()),
        }
    }
    Err("100 names taken".into())
}

/// Where a report named `path` goes: `-` means stderr; an existing character device or FIFO
/// (`/dev/stderr`, `/dev/tty`, a named pipe) is written as it is, appended to and never created;
/// any other name is a file created new ([`create_new`]).
pub enum Target {
    Stderr,
    Stream(File),
    New,
}

/// Whether `path` is `-` or an existing character device or FIFO (a report is written there as it
/// is).
pub fn is_stream(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    path.as_os_str() == "-"
        || std::fs::metadata(path)
            .is_ok_and(|m| m.file_type().is_char_device() || m.file_type().is_fifo())
}

pub fn report_target(path: &Path) -> Target {
    if path.as_os_str() == "-" {
        return Target::Stderr;
    }
    if !is_stream(path) {
        return Target::New;
    }
    // Not blocking on a FIFO nobody reads (the program is exiting): then stderr.
    match OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => {
            use std::os::fd::AsRawFd;
            // SAFETY: fcntl on a descriptor this function owns.
            unsafe {
                let flags = libc::fcntl(f.as_raw_fd(), libc::F_GETFL);
                libc::fcntl(f.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
            }
            Target::Stream(f)
        }
        Err(_) => Target::Stderr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_goes_to_stderr_a_stream_as_it_is_or_a_new_file() {
        assert!(matches!(report_target(Path::new("-")), Target::Stderr));
        assert!(matches!(
            report_target(Path::new("/dev/null")),
            Target::Stream(_)
        ));
        assert!(matches!(
            report_target(Path::new("/nonexistent/r.json")),
            Target::New
        ));
        let dir = std::env::temp_dir();
        assert!(matches!(report_target(&dir), Target::New));
    }

    #[test]
    fn trace_names_fill_their_placeholders() {
        let d = Path::new("/d");
        let (json, perfetto) = (Format::Json, Format::Perfetto);
        for (output, format, want) in [
            (None, json, "/d/clxfer-my_prog-42.json"),
            (None, perfetto, "/d/clxfer-my_prog-42.pftrace"),
            (Some("t.json"), json, "t.json"),
            (Some("/x/{program}-{pid}.json"), json, "/x/my_prog-42.json"),
            (Some("run-{pid}-{pid}.json"), json, "run-42-42.json"),
            (Some("{PID}.json"), json, "{PID}.json"),
        ] {
            let got = trace_name(d, output, ("my prog", 42), &Job::default(), format);
            assert_eq!(got, PathBuf::from(want));
        }
        let rank = Job {
            rank: Some(3),
            host: "n1".into(),
            ..Job::default()
        };
        let named = |output| trace_name(d, output, ("p", 42), &rank, Format::Json);
        assert_eq!(named(None), PathBuf::from("/d/clxfer-p-rank3-42.json"));
        let output = Some("{program}-{rank}@{host}-{pid}.json");
        assert_eq!(named(output), PathBuf::from("p-3@n1-42.json"));
    }

    #[test]
    fn names_are_safe_and_never_clobber() {
        assert_eq!(sanitize("my prog/../x"), "my_prog_.._x");
        assert_eq!(sanitize(".hidden"), "program.hidden");
        assert_eq!(sanitize(""), "program");
        let dir = std::env::temp_dir().join(format!("clxfer-tf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = crate::config::Config {
            dir: dir.clone(),
            ..crate::config::Config::from_lookup(|_| None)
        };
        let (_, a) = create(&config, "p").unwrap();
        let (_, b) = create(&config, "p").unwrap();
        assert_ne!(a, b);
        assert!(b.to_string_lossy().ends_with(".1.json"));
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(a.metadata().unwrap().permissions().mode() & 0o777, 0o600);
        // A symlink where the file would go is not followed.
        let target = dir.join("target");
        let stem = format!("clxfer-q-{}", std::process::id());
        std::os::unix::fs::symlink(&target, dir.join(format!("{stem}.json"))).unwrap();
        let (_, c) = create(&config, "q").unwrap();
        assert!(c.to_string_lossy().ends_with(".1.json"));
        assert!(!target.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

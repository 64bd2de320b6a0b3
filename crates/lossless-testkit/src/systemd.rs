//! systemd-analyze (Debian package `systemd`) as the oracle of the unit file, and
//! strace (package `strace`) to see what a real run of the daemon asks of the kernel:
//! every system call, every socket family, every path it writes.
//!
//! A test asks for them with [`crate::require`] (`Oracle::SystemdAnalyze`,
//! `Oracle::Strace`), the one availability rule.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

fn analyze(args: &[&str]) -> (bool, String) {
    analyze_env(args, &[])
}

fn analyze_env(args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let out = Command::new("systemd-analyze")
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("systemd-analyze {}: {e}", args.join(" ")));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// `systemd-analyze verify --man=no UNIT`: Ok, or what it said. (Man pages are checked
/// by the install, not here.)
pub fn systemd_verify(unit: &Path) -> Result<(), String> {
    let unit = unit.to_str().expect("a UTF-8 path");
    match analyze(&["verify", "--man=no", unit]) {
        (true, text) if text.trim().is_empty() => Ok(()),
        (_, text) => Err(text),
    }
}

/// As [`systemd_verify`], the unit's drop-ins (`DIR/NAME.service.d/*.conf`) read too:
/// `UNIT` lives in `DIR`, which goes first in the unit search path.
pub fn systemd_verify_with_dropins(unit: &Path) -> Result<(), String> {
    let dir = unit
        .parent()
        .and_then(Path::to_str)
        .expect("a unit in a UTF-8 directory");
    let search = format!("{dir}:");
    let unit = unit.to_str().expect("a UTF-8 path");
    match analyze_env(
        &["verify", "--man=no", unit],
        &[("SYSTEMD_UNIT_PATH", search.as_str())],
    ) {
        (true, text) if text.trim().is_empty() => Ok(()),
        (_, text) => Err(text),
    }
}

/// `systemd-analyze security --offline=yes UNIT`: the overall exposure (0.0 to 10.0,
/// lower is safer), its rating word (`OK`, `MEDIUM`, ...) and the whole table.
pub fn systemd_security(unit: &Path) -> (f64, String, String) {
    let unit = unit.to_str().expect("a UTF-8 path");
    let (_, text) = analyze(&["security", "--offline=yes", "--no-pager", unit]);
    // "→ Overall exposure level for NAME: 2.0 OK 🙂"
    let (score, rating) = text
        .lines()
        .find_map(|l| l.split_once("Overall exposure level for "))
        .and_then(|(_, rest)| rest.split_once(": "))
        .and_then(|(_, rest)| {
            let mut words = rest.split_whitespace();
            let score = words.next()?.parse::<f64>().ok()?;
            Some((score, words.next()?.to_string()))
        })
        .unwrap_or_else(|| panic!("no overall exposure in:\n{text}"));
    (score, rating, text)
}

/// The system calls in a `SystemCallFilter=` set (`@group` or a call's name), as
/// `systemd-analyze syscall-filter` lists them, groups within groups expanded.
pub fn syscall_set(name: &str) -> BTreeSet<String> {
    if !name.starts_with('@') {
        return BTreeSet::from([name.to_string()]);
    }
    let (ok, text) = analyze(&["syscall-filter", "--no-pager", name]);
    assert!(ok, "systemd-analyze syscall-filter {name}:\n{text}");
    let mut set = BTreeSet::new();
    for line in text.lines().skip(1) {
        let item = line.trim();
        if item.is_empty() || item.starts_with('#') {
            continue;
        }
        set.extend(syscall_set(item));
    }
    set
}

/// What the unit's `SystemCallFilter=` lines allow, combined as systemd does for an
/// allow list (the first line not `~`): `@default`, then each line in order adds its
/// calls, or takes them away when it starts with `~`. Panics on a deny-list-only unit
/// (every call allowed but some: not what this checks).
pub fn unit_syscalls_allowed(unit_text: &str) -> BTreeSet<String> {
    let lines = unit_values(unit_text, "SystemCallFilter");
    assert!(
        lines.first().is_some_and(|l| !l.starts_with('~')),
        "the unit has no SystemCallFilter allow list: {lines:?}"
    );
    let mut allowed = syscall_set("@default");
    for value in lines {
        let (list, deny) = match value.strip_prefix('~') {
            Some(rest) => (rest.to_string(), true),
            None => (value, false),
        };
        for item in list.split_whitespace() {
            for call in syscall_set(item) {
                if deny {
                    allowed.remove(&call);
                } else {
                    allowed.insert(call);
                }
            }
        }
    }
    allowed
}

/// Every value of `key=` in a unit's text, in order (comments skipped).
pub fn unit_values(unit_text: &str, key: &str) -> Vec<String> {
    unit_text
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#') && !l.starts_with(';'))
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.trim().to_string())
        .collect()
}

/// What an `strace -f -o FILE` trace shows a process doing.
#[derive(Debug, Default)]
pub struct Trace {
    /// System calls by name (those that returned and those that did not).
    pub syscalls: BTreeSet<String>,
    /// `socket(AF_...)` families.
    pub families: BTreeSet<String>,
    /// Paths opened for writing or created (open/openat with a write flag, mkdir,
    /// rename, unlink, bind of a Unix socket), absolute.
    pub written: BTreeSet<String>,
    /// Paths opened for reading, absolute.
    pub read: BTreeSet<String>,
}

impl Trace {
    /// Parses the trace of `strace -f -qq -o FILE`, from the first successful
    /// `execve` of `program` on (what the wrapper did before is not the program's).
    pub fn parse(text: &str, program: &str) -> Trace {
        let mut trace = Trace::default();
        let exec = format!("execve(\"{program}\"");
        let mut started = false;
        for line in text.lines() {
            // "PID  name(args) = result", or "PID  <... name resumed>..."
            let rest = line
                .trim_start()
                .split_once(char::is_whitespace)
                .map_or(line, |(_, r)| r)
                .trim_start();
            if !started {
                started = rest.starts_with(&exec) && !rest.contains(" = -1 ");
                if !started {
                    continue;
                }
            }
            let name = if let Some(r) = rest.strip_prefix("<... ") {
                r.split(' ').next().unwrap_or("")
            } else {
                rest.split('(').next().unwrap_or("")
            };
            if name.is_empty()
                || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                || name.starts_with("---")
            {
                continue;
            }
            trace.syscalls.insert(name.to_string());
            trace.note_arguments(name, rest);
        }
        assert!(started, "no execve of {program} in the trace");
        trace
    }

    fn note_arguments(&mut self, name: &str, call: &str) {
        let quoted = || {
            call.split_once('"')
                .and_then(|(_, r)| r.split_once('"'))
                .map(|(p, _)| p.to_string())
        };
        match name {
            "socket" => {
                if let Some(f) = call
                    .strip_prefix("socket(")
                    .and_then(|r| r.split([',', ')']).next())
                {
                    self.families.insert(f.trim().to_string());
                }
            }
            "open" | "openat" | "creat" => {
                let Some(p) = quoted() else { return };
                let writes = ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC"]
                    .iter()
                    .any(|f| call.contains(f))
                    || name == "creat";
                if writes {
                    self.written.insert(p);
                } else {
                    self.read.insert(p);
                }
            }
            "mkdir" | "mkdirat" | "unlink" | "unlinkat" | "rename" | "renameat" | "renameat2"
            | "rmdir" | "chmod" | "fchmodat" | "chown" | "fchownat" | "symlink" | "link" => {
                // Every quoted argument is a path written.
                for (i, part) in call.split('"').enumerate() {
                    if i % 2 == 1 {
                        self.written.insert(part.to_string());
                    }
                }
            }
            "bind" => {
                if let Some(p) = call
                    .split_once("sun_path=\"")
                    .and_then(|(_, r)| r.split_once('"'))
                    .map(|(p, _)| p.to_string())
                {
                    self.written.insert(p);
                }
            }
            _ => {}
        }
    }
}

#![allow(clippy::unwrap_used)]
//! `dist/install.sh`: what it installs where, the unit's paths matching them, the
//! example configuration installed once and never overwritten, and the installed unit
//! passing `systemd-analyze verify` with its ExecStartPre check succeeding.

mod common;

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use lossless_node::identity::Advertise;
use lossless_testkit::{systemd_verify, unit_values};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The directory holding the built `lossless` and `losslessd`.
fn bin_dir() -> PathBuf {
    lossless_bin();
    losslessd_bin().parent().unwrap().to_path_buf()
}

fn install(args: &[&str]) -> Output {
    Command::new(repo().join("dist/install.sh"))
        .args(args)
        .output()
        .expect("run dist/install.sh")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Every file under `root`, relative, with its mode.
fn tree(root: &Path) -> BTreeSet<(String, u32)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<(String, u32)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777;
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                out.insert((rel, mode));
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(root, root, &mut out);
    out
}

/// Whether the binaries generate completions and man pages (another change adds the
/// commands; the script uses them when they are there).
fn generates(args: &[&str], bin: &str) -> bool {
    let dir = TempDir::new();
    let mut c = Command::new(bin_dir().join(bin));
    for a in args {
        c.arg(a.replace("DIR", dir.path().to_str().unwrap()));
    }
    c.output().is_ok_and(|o| o.status.success())
}

#[test]
fn install_into_a_staging_destdir() {
    let stage = TempDir::new();
    let bin = bin_dir();
    let destdir = format!("DESTDIR={}", stage.path().display());
    let out = install(&["--bin-dir", bin.to_str().unwrap(), &destdir]);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );

    let mut want: BTreeSet<(String, u32)> = [
        ("usr/local/bin/lossless", 0o755),
        ("usr/local/sbin/losslessd", 0o755),
        ("usr/local/lib/systemd/system/losslessd.service", 0o644),
        ("etc/lossless/losslessd.toml", 0o644),
        (
            "usr/local/share/doc/lossless/examples/losslessd.toml",
            0o644,
        ),
    ]
    .iter()
    .map(|(p, m)| (p.to_string(), *m))
    .collect();
    for f in ["alerts.yml", "recording.yml"] {
        if repo().join("dist/prometheus").join(f).exists() {
            want.insert((format!("usr/local/share/lossless/prometheus/{f}"), 0o644));
        }
    }
    if repo().join("dist/grafana/lossless.json").exists() {
        want.insert((
            "usr/local/share/lossless/grafana/lossless.json".into(),
            0o644,
        ));
    }
    if generates(&["completions", "bash"], "lossless") {
        for f in [
            "bash-completion/completions/lossless",
            "zsh/site-functions/_lossless",
            "fish/vendor_completions.d/lossless.fish",
        ] {
            want.insert((format!("usr/local/share/{f}"), 0o644));
        }
    } else {
        assert!(text(&out.stdout).contains("skipped completions"));
    }
    let mut got = tree(stage.path());
    // Man pages: whatever the binaries generate, each in its section's directory.
    let man: Vec<(String, u32)> = got
        .iter()
        .filter(|(p, _)| p.starts_with("usr/local/share/man/"))
        .cloned()
        .collect();
    for (p, mode) in &man {
        let section = p.rsplit('.').next().unwrap();
        assert!(
            p.starts_with(&format!("usr/local/share/man/man{section}/")),
            "{p}"
        );
        assert_eq!(*mode, 0o644, "{p}");
        got.remove(&(p.clone(), *mode));
    }
    if generates(&["man", "DIR"], "lossless") {
        assert!(
            man.iter().any(|(p, _)| p.ends_with("/lossless.1")),
            "{man:?}"
        );
    }
    if generates(&["--man", "DIR"], "losslessd") {
        assert!(
            man.iter().any(|(p, _)| p.ends_with("/losslessd.8")),
            "{man:?}"
        );
    }
    assert_eq!(got, want, "{}", text(&out.stdout));

    // The binaries are the ones given.
    for (from, to) in [
        ("lossless", "usr/local/bin/lossless"),
        ("losslessd", "usr/local/sbin/losslessd"),
    ] {
        assert!(
            std::fs::read(bin.join(from)).unwrap() == std::fs::read(stage.path().join(to)).unwrap(),
            "{to} is not {from}"
        );
    }

    // The unit runs the installed binary on the installed file, and says nothing of
    // the staging directory.
    let unit = std::fs::read_to_string(
        stage
            .path()
            .join("usr/local/lib/systemd/system/losslessd.service"),
    )
    .unwrap();
    assert_eq!(
        unit_values(&unit, "ExecStart"),
        ["/usr/local/sbin/losslessd --config /etc/lossless/losslessd.toml"]
    );
    assert_eq!(
        unit_values(&unit, "ExecStartPre"),
        ["/usr/local/sbin/losslessd --config /etc/lossless/losslessd.toml --check"]
    );
    assert!(!unit.contains(stage.path().to_str().unwrap()));

    // The configuration is the example, and the installed daemon accepts it.
    let config = stage.path().join("etc/lossless/losslessd.toml");
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        std::fs::read_to_string(repo().join("examples/losslessd.toml")).unwrap()
    );
    let check = Command::new(stage.path().join("usr/local/sbin/losslessd"))
        .arg("--config")
        .arg(&config)
        .arg("--check")
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", text(&check.stderr));
    assert_eq!(
        text(&check.stdout),
        format!("{}: configuration is valid\n", config.display())
    );

    // Again, over an edited configuration: kept as it is.
    std::fs::write(&config, "[defaults]\npfc.priorities = [4]\n").unwrap();
    let out = install(&["--bin-dir", bin.to_str().unwrap(), &destdir]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(&format!("kept {} (exists", config.display())),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "[defaults]\npfc.priorities = [4]\n"
    );
}

/// The keys that say who the host is to its switch (the identity TLVs, the Chassis and
/// Port IDs): a value of their own in the installed file would make every host installed
/// from it say the same (`true` and `false`, the host's value or none, are not fixed).
const IDENTITY_KEYS: &[&str] = &[
    "system_name",
    "system_description",
    "management_address",
    "system_capabilities",
    "port_description",
    "chassis_id",
    "port_id",
];

/// Every identity key given a value of its own, as `SECTION.KEY = VALUE`, in `[defaults]`
/// and every `[ports."..."]` section (dotted keys, sub-tables and inline tables alike:
/// TOML makes them one tree).
fn fixed_identity(text: &str) -> Vec<String> {
    let doc: toml::Table = text.parse().unwrap();
    let mut sections: Vec<(String, &toml::Table)> = Vec::new();
    if let Some(d) = doc.get("defaults").and_then(toml::Value::as_table) {
        sections.push(("defaults".into(), d));
    }
    if let Some(ports) = doc.get("ports").and_then(toml::Value::as_table) {
        for (name, section) in ports {
            sections.push((format!("ports.{name:?}"), section.as_table().unwrap()));
        }
    }
    let mut fixed = Vec::new();
    for (path, section) in sections {
        for key in IDENTITY_KEYS {
            match section.get(*key) {
                None | Some(toml::Value::Boolean(_)) => {}
                Some(v) => fixed.push(format!("{path}.{key} = {v}")),
            }
        }
    }
    fixed
}

/// Fails on the old example: `system_name = "host17"` in `[defaults]` (and a port
/// description naming one switch port) made every host installed from it call itself
/// host17 to its switch. The installed configuration leaves who the host is to the host.
#[test]
fn the_installed_configuration_fixes_no_identity() {
    let stage = TempDir::new();
    let destdir = format!("DESTDIR={}", stage.path().display());
    let out = install(&["--bin-dir", bin_dir().to_str().unwrap(), &destdir]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for file in [
        "etc/lossless/losslessd.toml",
        "usr/local/share/doc/lossless/examples/losslessd.toml",
    ] {
        let installed = std::fs::read_to_string(stage.path().join(file)).unwrap();
        assert_eq!(fixed_identity(&installed), Vec::<String>::new(), "{file}");
        // And as the daemon reads it: every port it selects takes the host's values.
        let cfg = lossless_node::config::DaemonConfig::parse(&installed, Path::new(file))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut names: Vec<&str> = cfg.named_ports().collect();
        names.extend(["enp65s0f0np0", "enp65s0f1np1", "eth0"]);
        for name in names {
            let id = cfg.port(name).identity;
            let fixed = [
                matches!(id.system_name, Advertise::Value(_)),
                matches!(id.system_description, Advertise::Value(_)),
                matches!(id.management_address, Advertise::Value(_)),
            ];
            assert_eq!(fixed, [false; 3], "{file}: {name}: {id:?}");
        }
    }
    // The check finds a fixed identity where there is one.
    assert_eq!(
        fixed_identity("[defaults]\nsystem_name = \"host17\"\n[ports.\"eth0\"]\nmanagement_address = \"192.0.2.1\"\nsystem_description = false\n"),
        ["defaults.system_name = \"host17\"", "ports.\"eth0\".management_address = \"192.0.2.1\""]
    );
}

/// PREFIX, SYSCONFDIR and UNITDIR elsewhere (no DESTDIR: the paths are real), so
/// the unit's commands can be run: systemd-analyze verify finds its executables,
/// and its ExecStartPre checks the installed file.
#[test]
fn the_installed_unit_verifies_and_checks_the_installed_file() {
    let root = TempDir::new();
    let r = root.path().display();
    let out = install(&[
        "--bin-dir",
        bin_dir().to_str().unwrap(),
        &format!("PREFIX={r}/opt/lossless"),
        &format!("SYSCONFDIR={r}/etc"),
        &format!("UNITDIR={r}/units"),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("systemctl daemon-reload"), "{stdout}");
    let unit_path = root.path().join("units/losslessd.service");
    let unit = std::fs::read_to_string(&unit_path).unwrap();
    let exec = unit_values(&unit, "ExecStart");
    assert_eq!(
        exec,
        [format!(
            "{r}/opt/lossless/sbin/losslessd --config {r}/etc/lossless/losslessd.toml"
        )]
    );
    assert!(root.path().join("opt/lossless/bin/lossless").exists());

    let pre = unit_values(&unit, "ExecStartPre");
    let argv: Vec<&str> = pre[0].split_whitespace().collect();
    let check = Command::new(argv[0]).args(&argv[1..]).output().unwrap();
    assert!(check.status.success(), "{}", text(&check.stderr));
    assert_eq!(
        text(&check.stdout),
        format!("{r}/etc/lossless/losslessd.toml: configuration is valid\n")
    );

    if lossless_testkit::require(
        "the_installed_unit_verifies_and_checks_the_installed_file",
        &[lossless_testkit::Oracle::SystemdAnalyze],
    ) {
        if let Err(e) = systemd_verify(&unit_path) {
            panic!("systemd-analyze verify {}:\n{e}", unit_path.display());
        }
    }
}

#[test]
fn install_refuses_bad_arguments() {
    let stage = TempDir::new();
    let destdir = format!("DESTDIR={}", stage.path().display());
    let bin = bin_dir();
    for (args, message) in [
        (
            vec!["--bin-dir", bin.to_str().unwrap(), "PREFIX=usr", &destdir],
            "install.sh: PREFIX must be an absolute path (found 'usr')\n".to_string(),
        ),
        (
            vec!["--prefix=/usr"],
            "install.sh: unknown argument '--prefix=/usr' (see --help)\n".to_string(),
        ),
        (
            vec!["--bin-dir", stage.path().to_str().unwrap(), &destdir],
            format!(
                "install.sh: {}/lossless: no such executable\n",
                stage.path().display()
            ),
        ),
    ] {
        let out = install(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(text(&out.stderr), message, "{args:?}");
    }
    // Nothing was written.
    assert!(tree(stage.path()).is_empty());
    let help = install(&["--help"]);
    assert!(help.status.success());
    assert!(text(&help.stdout).contains("DESTDIR"));
}

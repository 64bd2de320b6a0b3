//! The one skip rule for oracle tests, on hosts made for the test: an empty PATH (every
//! oracle missing), a directory of stand-in programs (every program found), and this
//! test binary run again as a child with PATH emptied, with and without
//! `LOSSLESS_SKIP_ORACLES=1`, so that the switch is read from the environment as every
//! test reads it.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

use lossless_testkit::oracle::{decide, Host, Switches, Verdict, SKIP_ORACLES};
use lossless_testkit::{require, Oracle, TempDir};

fn empty_path(root: bool) -> Host {
    Host {
        dirs: vec![],
        root,
        driver: Ok(()),
    }
}

fn switch(value: Option<&str>) -> Switches {
    Switches {
        skip: value.map(OsString::from),
        retired: vec![],
    }
}

/// A directory holding an executable stand-in for every program an oracle runs.
fn stand_ins() -> (TempDir, Host) {
    let dir = TempDir::new();
    for p in [
        "ip",
        "unshare",
        "tshark",
        "lldpad",
        "lldptool",
        "dcbtool",
        "lldpd",
        "lldpcli",
        "opensm",
        "ibsim",
        "saquery",
        "smpquery",
        "ibnetdiscover",
        "dump_lfts",
        "promtool",
        "systemd-analyze",
        "strace",
        "gcc",
    ] {
        let f = dir.path().join(p);
        std::fs::write(&f, "#!/bin/sh\n").expect("stand-in");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let host = Host {
        dirs: vec![dir.path().to_path_buf()],
        root: true,
        driver: Ok(()),
    };
    (dir, host)
}

#[test]
fn with_an_empty_path_every_oracle_fails_naming_its_packages() {
    let host = empty_path(false);
    for o in Oracle::ALL {
        let Verdict::Fail(msg) = decide("t", &[o], &host, &switch(None)) else {
            panic!("{o:?} found with an empty PATH");
        };
        assert!(msg.starts_with("t: "), "{msg}");
        assert!(msg.contains(o.name()), "{msg}");
        assert!(msg.contains(&o.install()), "{o:?}: {msg}");
        // Debian's packages, else PyPI's (pinned), never neither.
        let expected = if o.packages().is_empty() {
            format!("pip install {}", o.pip().join(" "))
        } else {
            format!("apt-get install {}", o.packages().join(" "))
        };
        assert!(msg.contains(&expected), "{o:?}: {msg}");
        assert!(
            o.pip().iter().all(|p| p.contains("==")),
            "{o:?}: not pinned"
        );
        assert!(msg.contains("set LOSSLESS_SKIP_ORACLES=1"), "{msg}");
        assert!(msg.contains("not found in an empty PATH"), "{msg}");
    }
    // Unset, empty and 0 all mean: do not skip.
    for v in [None, Some(""), Some("0")] {
        let got = decide("t", &[Oracle::Tshark], &host, &switch(v));
        assert!(matches!(got, Verdict::Fail(_)), "{v:?}: {got:?}");
    }
}

#[test]
fn with_an_empty_path_and_the_switch_every_oracle_test_is_skipped() {
    let host = empty_path(false);
    for o in Oracle::ALL {
        let Verdict::Skip(note) = decide("t", &[o], &host, &switch(Some("1"))) else {
            panic!("{o:?} not skipped");
        };
        assert!(
            note.starts_with("t: skipped (LOSSLESS_SKIP_ORACLES=1): "),
            "{note}"
        );
        assert!(note.ends_with(&o.install()), "{note}");
    }
    // Several missing: each named, each package once.
    let Verdict::Skip(note) = decide(
        "t",
        &[Oracle::Netns, Oracle::Lldpad, Oracle::Gcc],
        &host,
        &switch(Some("1")),
    ) else {
        panic!("not skipped");
    };
    assert!(note.contains("not running as root"), "{note}");
    assert!(
        note.contains("lldpad, lldptool, dcbtool not found"),
        "{note}"
    );
    assert!(
        note.ends_with(
            "run the tests as root and apt-get install iproute2 util-linux lldpad gcc \
             libc6-dev linux-libc-dev"
        ),
        "{note}"
    );
}

#[test]
fn the_switch_does_not_skip_a_test_whose_oracles_are_here() {
    let (_dir, host) = stand_ins();
    let here = [
        Oracle::Netns,
        Oracle::Tshark,
        Oracle::Lldpad,
        Oracle::Lldpd,
        Oracle::Promtool,
        Oracle::SystemdAnalyze,
        Oracle::Strace,
        Oracle::Gcc,
    ];
    for v in [None, Some("1")] {
        assert_eq!(decide("t", &here, &host, &switch(v)), Verdict::Run);
    }
    // OpenSM also needs ibsim's umad2sim library, a file outside PATH.
    let opensm = decide("t", &[Oracle::OpenSm], &host, &switch(None));
    if !std::path::Path::new("/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so").exists() {
        assert!(matches!(&opensm, Verdict::Fail(m) if m.contains("libumad2sim.so does not exist")));
    } else {
        assert_eq!(opensm, Verdict::Run);
    }
}

#[test]
fn a_file_that_is_not_executable_is_not_the_program() {
    let (dir, host) = stand_ins();
    let f = dir.path().join("tshark");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    assert!(host.find("tshark").is_none());
    assert!(matches!(
        decide("t", &[Oracle::Tshark], &host, &switch(None)),
        Verdict::Fail(_)
    ));
    // A directory of that name is not either.
    std::fs::remove_file(&f).expect("rm");
    std::fs::create_dir(&f).expect("mkdir");
    assert!(host.find("tshark").is_none());
}

#[test]
fn namespaces_need_root_even_with_ip_installed() {
    let (_dir, mut host) = stand_ins();
    host.root = false;
    let Verdict::Fail(msg) = decide("t", &[Oracle::Netns], &host, &switch(None)) else {
        panic!("ran without root");
    };
    assert!(msg.contains("(not running as root)"), "{msg}");
    assert!(
        msg.contains("To run it, run the tests as root and install"),
        "{msg}"
    );
    // Only Netns needs root.
    assert_eq!(
        decide("t", &[Oracle::Tshark], &host, &switch(None)),
        Verdict::Run
    );
}

#[test]
fn gcc_needs_the_emulated_driver_built() {
    let (_dir, mut host) = stand_ins();
    host.driver = Err("gcc could not be run".into());
    let Verdict::Fail(msg) = decide("t", &[Oracle::Gcc], &host, &switch(None)) else {
        panic!("ran without the driver");
    };
    assert!(
        msg.contains("the emulated DCB driver was not built: gcc could not be run"),
        "{msg}"
    );
}

#[test]
fn a_switch_value_other_than_0_or_1_is_refused_when_it_matters() {
    let host = empty_path(true);
    let Verdict::Fail(msg) = decide("t", &[Oracle::Tshark], &host, &switch(Some("yes"))) else {
        panic!("yes is not a value");
    };
    assert!(
        msg.contains("LOSSLESS_SKIP_ORACLES=yes is not a switch value: set it to 1"),
        "{msg}"
    );
    // With the oracle here the value does not matter.
    let (_dir, host) = stand_ins();
    assert_eq!(
        decide("t", &[Oracle::Tshark], &host, &switch(Some("yes"))),
        Verdict::Run
    );
}

#[test]
fn a_retired_switch_is_named_in_the_failure() {
    let s = Switches {
        skip: None,
        retired: vec!["LOSSLESS_SKIP_TSHARK"],
    };
    let Verdict::Fail(msg) = decide("t", &[Oracle::Tshark], &empty_path(true), &s) else {
        panic!("skipped on a retired switch");
    };
    assert!(
        msg.ends_with(
            "(LOSSLESS_SKIP_TSHARK is no longer read: the one switch is LOSSLESS_SKIP_ORACLES=1)"
        ),
        "{msg}"
    );
}

/// Run by `require_reads_the_switch_from_the_environment` in a child process only.
#[test]
#[ignore = "a child of require_reads_the_switch_from_the_environment"]
fn child_needing_tshark() {
    if !require("child_needing_tshark", &[Oracle::Tshark]) {
        return;
    }
    println!("child ran");
}

fn child(skip: Option<&str>) -> (bool, String) {
    let exe: PathBuf = std::env::current_exe().expect("test binary");
    let mut c = Command::new(exe);
    c.args([
        "child_needing_tshark",
        "--exact",
        "--ignored",
        "--nocapture",
    ])
    .env("PATH", "")
    .env_remove(SKIP_ORACLES);
    if let Some(v) = skip {
        c.env(SKIP_ORACLES, v);
    }
    let out = c.output().expect("run the test binary");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The real environment path: PATH emptied in a child (tshark is in /usr/bin, which
/// only PATH names; the sbin directories looked in besides do not hold it).
#[test]
fn require_reads_the_switch_from_the_environment() {
    let (ok, text) = child(None);
    assert!(!ok, "the child passed without tshark:\n{text}");
    assert!(
        text.contains("child_needing_tshark: tshark is missing (tshark not found in"),
        "{text}"
    );
    assert!(text.contains("apt-get install tshark"), "{text}");
    assert!(!text.contains("child ran"), "{text}");

    let (ok, text) = child(Some("1"));
    assert!(ok, "the child failed with the switch on:\n{text}");
    assert!(
        text.contains("child_needing_tshark: skipped (LOSSLESS_SKIP_ORACLES=1): tshark is missing"),
        "{text}"
    );
    assert!(text.contains("1 passed"), "{text}");
    assert!(!text.contains("child ran"), "{text}");
}

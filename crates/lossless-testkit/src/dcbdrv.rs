//! The emulated DCB driver (the C in `c/`, described in `c/dcbdrv.h`, built by build.rs):
//! the library, the driver it models ([`Model`]), the environment that preloads it into a
//! process ([`ShimEnv`]), what it recorded: the per-interface state file ([`DriverState`])
//! and the log of requests ([`LogEntry`]), iproute2's `dcb` and Debian's `ethtool` run
//! under it ([`dcb_tool`], [`ethtool_tool`]; what they said: [`output_text`]), and the
//! statistics a test gives the NIC ([`set_stat`]). The formats are described in the
//! crate's README.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::netns::Netns;

/// The compiled library, to put in `LD_PRELOAD`. Panics with the reason when it could
/// not be built (no gcc).
pub fn library() -> PathBuf {
    let err = env!("LOSSLESS_DCBDRV_BUILD_ERROR");
    assert!(
        err.is_empty(),
        "the emulated DCB driver was not built: {err}"
    );
    let so = PathBuf::from(env!("LOSSLESS_DCBDRV_SO"));
    assert!(
        so.is_file(),
        "{} is missing: rebuild lossless-testkit (cargo clean -p lossless-testkit)",
        so.display()
    );
    so
}

/// The DCB driver the emulated NIC behaves as (`LOSSLESS_DCBDRV_MODEL`), each modelled
/// from its Linux dcbnl ops (`c/drv_*.c` cite the kernel functions; the crate's README has
/// a table of what each refuses and how).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Model {
    /// The permissive driver the library always emulated: every op, every selector.
    Generic,
    /// NVIDIA/Mellanox ConnectX (mlx5_core).
    Mlx5,
    /// Intel E810 (ice).
    Ice,
    /// Intel XL710 (i40e).
    I40e,
    /// Broadcom NetXtreme-C/E (bnxt_en).
    Bnxt,
    /// HiSilicon HNS3 (hns3, hclge).
    Hns3,
    /// Intel 82599 (ixgbe).
    Ixgbe,
}

impl Model {
    pub const ALL: [Model; 7] = [
        Model::Generic,
        Model::Mlx5,
        Model::Ice,
        Model::I40e,
        Model::Bnxt,
        Model::Hns3,
        Model::Ixgbe,
    ];

    /// The name `LOSSLESS_DCBDRV_MODEL` takes and the state file's `model=` holds.
    pub fn name(self) -> &'static str {
        match self {
            Model::Generic => "generic",
            Model::Mlx5 => "mlx5",
            Model::Ice => "ice",
            Model::I40e => "i40e",
            Model::Bnxt => "bnxt",
            Model::Hns3 => "hns3",
            Model::Ixgbe => "ixgbe",
        }
    }

    pub fn from_name(name: &str) -> Option<Model> {
        Model::ALL.into_iter().find(|m| m.name() == name)
    }

    /// What sets the model apart, in a line.
    pub fn describe(self) -> &'static str {
        match self {
            Model::Generic => {
                "every CEE and IEEE op, APP trust, buffer ops on request; accepts every APP \
                 selector and ETS (prio_tc under 8)"
            }
            Model::Mlx5 => {
                "APP: DSCP only (EINVAL), a DSCP is replaced; ETS bandwidths of ETS TCs sum to \
                 100, strict TCs read back 100 %; a PFC change toggles the link; no CEE PG ops \
                 (SET_ALL answers 1); DCB buffer ops"
            }
            Model::Ice => {
                "APP: DSCP only, the first switches to DSCP QoS; ETS bandwidths of the TCs in \
                 use sum to 100; a change closes and reopens the netdev (link flap), a repeat \
                 does not; positive statuses (1 no change, 2 changed); refuses all with the \
                 firmware LLDP agent"
            }
            Model::I40e => {
                "any APP selector; ETS TSA of used TCs must be ETS or strict, bandwidth not \
                 checked; a change restarts the port; refuses all with the firmware LLDP agent"
            }
            Model::Bnxt => {
                "IEEE only (no CEE op, no GCAP); PFC needs an ETS first and at most 2 lossless \
                 TCs; ETS bandwidth may sum under 100; refuses all with the firmware agent"
            }
            Model::Hns3 => {
                "IEEE only; APP DSCP only, a wrong delete is EINVAL; ETS: no 0 % ETS TC, no ETS \
                 on an unused TC, sum 100; ETS map or PFC changes restart the port"
            }
            Model::Ixgbe => {
                "CEE by default (IEEE sets refused until SDCBX host|ieee); any APP selector; ETS \
                 kept even when refused; SET_ALL 0/1/2"
            }
        }
    }
}

impl std::fmt::Display for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The environment that preloads the emulated driver into a process for some
/// interfaces, and reads back what that process programmed. Processes with the same
/// directory share one emulated NIC per interface (the state file, under a lock).
#[derive(Debug, Clone)]
pub struct ShimEnv {
    dir: PathBuf,
    ifaces: Vec<String>,
    dcb_on: bool,
    buffer: Option<String>,
    log_gets: bool,
    apps: Vec<(u8, u8, u16)>,
    model: Model,
    fw_agent: Vec<String>,
    sysfs: Option<PathBuf>,
}

impl ShimEnv {
    /// Emulates `ifaces` (the others stay with the kernel); state files and the log go
    /// into `dir` (created).
    pub fn new(dir: &Path, ifaces: &[&str]) -> ShimEnv {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        ShimEnv {
            dir: dir.to_path_buf(),
            ifaces: ifaces.iter().map(|s| s.to_string()).collect(),
            dcb_on: false,
            buffer: None,
            log_gets: false,
            apps: Vec::new(),
            model: Model::Generic,
            fw_agent: Vec::new(),
            sysfs: None,
        }
    }

    /// The driver the NIC behaves as from power-on (a NIC whose state file says
    /// otherwise keeps its own model).
    pub fn model(mut self, model: Model) -> ShimEnv {
        self.model = model;
        self
    }

    /// The interfaces whose NIC has its firmware LLDP/DCBX agent on from power-on
    /// (`LOSSLESS_DCBDRV_FW_AGENT`): ice, i40e and bnxt then refuse host DCB
    /// programming, mlx5 starts with firmware-run DCBX; hns3, ixgbe and the generic
    /// driver have no such state.
    pub fn fw_agent(mut self, ifaces: &[&str]) -> ShimEnv {
        self.fw_agent = ifaces.iter().map(|s| s.to_string()).collect();
        self
    }

    /// APP entries (selector, priority, protocol) the driver holds from the start, as
    /// another tool would have set them.
    pub fn apps(mut self, apps: &[(u8, u8, u16)]) -> ShimEnv {
        self.apps = apps.to_vec();
        self
    }

    /// DCB on from the start (a NIC whose DCB is already enabled): the generic and ixgbe
    /// models; mlx5 and ice report DCB on always, i40e when more than one TC is used.
    pub fn dcb_on(mut self, on: bool) -> ShimEnv {
        self.dcb_on = on;
        self
    }

    /// The driver has DCB buffer ops: `Some("1")` for the defaults (one 256 KiB
    /// buffer holding every priority, 1 MiB in all), or
    /// `Some("total=N size=a,b,.. prio2buffer=a,b,..")`; `None`: no buffer ops.
    pub fn buffer(mut self, spec: Option<&str>) -> ShimEnv {
        self.buffer = spec.map(str::to_string);
        self
    }

    /// The emulated host tree at `root` ([`crate::sysfs::HostTree::root`]): the
    /// library answers opens, writes, mkdir, rmdir and unlink under it as the kernel
    /// does and logs them (`LOSSLESS_DCBDRV_SYSFS`, `c/sysfs.c`).
    pub fn sysfs(mut self, root: &Path) -> ShimEnv {
        self.sysfs = Some(root.to_path_buf());
        self
    }

    /// Log get requests too (sets are always logged).
    pub fn log_gets(mut self, on: bool) -> ShimEnv {
        self.log_gets = on;
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The variables, `LD_PRELOAD` first.
    pub fn vars(&self) -> Vec<(String, String)> {
        let mut v = vec![
            ("LD_PRELOAD".to_string(), library().display().to_string()),
            ("LOSSLESS_DCBDRV_IFACES".into(), self.ifaces.join(",")),
            ("LOSSLESS_DCBDRV_DIR".into(), self.dir.display().to_string()),
            (
                "LOSSLESS_DCBDRV_DCB_ON".into(),
                if self.dcb_on { "1" } else { "0" }.into(),
            ),
            (
                "LOSSLESS_DCBDRV_LOG_GETS".into(),
                if self.log_gets { "1" } else { "0" }.into(),
            ),
            ("LOSSLESS_DCBDRV_MODEL".into(), self.model.name().into()),
            ("LOSSLESS_DCBDRV_FW_AGENT".into(), self.fw_agent.join(",")),
        ];
        if let Some(b) = &self.buffer {
            v.push(("LOSSLESS_DCBDRV_BUFFER".into(), b.clone()));
        }
        if let Some(root) = &self.sysfs {
            v.push(("LOSSLESS_DCBDRV_SYSFS".into(), root.display().to_string()));
        }
        if !self.apps.is_empty() {
            let list: Vec<String> = self
                .apps
                .iter()
                .map(|(s, p, proto)| format!("{s},{p},{proto}"))
                .collect();
            v.push(("LOSSLESS_DCBDRV_APPS".into(), list.join(";")));
        }
        v
    }

    /// Adds the variables to `cmd`.
    pub fn apply<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        cmd.envs(self.vars())
    }

    /// A firmware reset of `ifname`'s NIC behind the processes' backs: under the NIC's
    /// lock the state file goes (and a `FW_RESET` line into the log), so every process
    /// that preloads the driver with this directory finds the power-on state at its
    /// next request.
    pub fn reset_nic(&self, ifname: &str) {
        let lock = self.dir.join(format!("{ifname}.lock"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock)
            .unwrap_or_else(|e| panic!("{}: {e}", lock.display()));
        let _held = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
            .unwrap_or_else(|(_, e)| panic!("flock {}: {e}", lock.display()));
        let state = self.dir.join(format!("{ifname}.state"));
        match std::fs::remove_file(&state) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => panic!("{}: {e}", state.display()),
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let line = format!(
            "{}.{:03} {} {ifname} FW_RESET ok\n",
            now.as_secs(),
            now.subsec_millis(),
            std::process::id()
        );
        let log = self.dir.join("dcbdrv.log");
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .and_then(|mut f| f.write_all(line.as_bytes()))
            .unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    }

    /// The state file of `ifname`, once a process programmed something.
    pub fn state(&self, ifname: &str) -> Option<DriverState> {
        DriverState::read(&self.dir.join(format!("{ifname}.state")))
    }

    /// Whether any state file was written.
    pub fn any_state(&self) -> bool {
        std::fs::read_dir(&self.dir)
            .map(|d| {
                d.filter_map(Result::ok)
                    .any(|e| e.file_name().to_string_lossy().ends_with(".state"))
            })
            .unwrap_or(false)
    }

    /// The log as text ("" before the first line).
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(self.dir.join("dcbdrv.log")).unwrap_or_default()
    }

    /// The log, parsed.
    pub fn log(&self) -> Vec<LogEntry> {
        LogEntry::parse_all(&self.log_text())
    }

    /// The PFC frame counters the driver reports in IEEE_GET (`requests` sent,
    /// `indications` received, per priority) from now on. Written whole (a temporary
    /// file renamed), so the driver never reads half of it.
    pub fn set_pfc_counters(&self, ifname: &str, requests: [u64; 8], indications: [u64; 8]) {
        let join = |v: [u64; 8]| v.map(|x| x.to_string()).join(",");
        let text = format!(
            "requests={}\nindications={}\n",
            join(requests),
            join(indications)
        );
        let path = self.dir.join(format!("{ifname}.pfc_counters"));
        let tmp = self.dir.join(format!(".{ifname}.pfc_counters.tmp"));
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }

    /// A statistic of `ifname`'s NIC: what the driver reports for `name` (in
    /// `ethtool -S`, `ETHTOOL_GSTATS`) from now on, see [`set_stat`].
    pub fn set_stat(&self, ifname: &str, name: &str, value: u64) {
        set_stat(&self.dir, ifname, name, value);
    }
}

/// iproute2's `dcb ARGS` in `ns` under the emulated driver `env` (a new process each
/// time; processes with the same directory share the NIC, so `dcb ... show` reads what
/// any of them programmed).
pub fn dcb_tool(ns: &Netns, env: &ShimEnv, args: &[&str]) -> Output {
    let mut c = ns.command("dcb");
    env.apply(&mut c);
    c.args(args)
        .output()
        .unwrap_or_else(|e| panic!("dcb {} (Debian package iproute2): {e}", args.join(" ")))
}

/// Debian's `/usr/sbin/ethtool ARGS` in `ns` under the emulated driver `env` (a new
/// process each time, sharing the NIC with every process of the directory): pause and
/// private flags over generic netlink, `-S` and `-i` over the `SIOCETHTOOL` ioctl.
pub fn ethtool_tool(ns: &Netns, env: &ShimEnv, args: &[&str]) -> Output {
    let mut c = ns.command("ethtool");
    env.apply(&mut c);
    c.args(args)
        .output()
        .unwrap_or_else(|e| panic!("ethtool {} (Debian package ethtool): {e}", args.join(" ")))
}

/// Sets the statistic `name` of `ifname`'s NIC (directory `dir`) to `value`, as the
/// driver keeps it: under the NIC's lock (`DIR/IF.lock`), the state file's
/// `eth.stat.NAME=VALUE` line replaced or added, the file written whole (a temporary
/// file renamed), a `SET_STAT` line in the log. A NIC no process wrote yet gets a
/// state file with that line only: every process then finds its power-on state and
/// the statistic. Which names the driver reports depends on its model (the crate's
/// README); a value for a name it does not report is kept and not shown.
pub fn set_stat(dir: &Path, ifname: &str, name: &str, value: u64) {
    assert!(
        !name.is_empty()
            && name.len() < 32
            && !name.contains(['=', '\n', '\0', ' '])
            && !ifname.is_empty()
            && !ifname.contains(['/', '\n', ' ']),
        "statistic {name:?} of {ifname:?}: a name of 1 to 31 bytes without '=', blank or NUL"
    );
    let lock = dir.join(format!("{ifname}.lock"));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock)
        .unwrap_or_else(|e| panic!("{}: {e}", lock.display()));
    let _held = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
        .unwrap_or_else(|(_, e)| panic!("flock {}: {e}", lock.display()));
    let path = dir.join(format!("{ifname}.state"));
    let key = format!("eth.stat.{name}");
    let line = format!("{key}={value}");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => {
            assert!(
                t.lines().next() == Some(STATE_FORMAT),
                "{}: not a state file of this format",
                path.display()
            );
            let mut lines: Vec<String> = t
                .lines()
                .filter(|l| l.split_once('=').map(|(k, _)| k) != Some(key.as_str()))
                .map(str::to_string)
                .collect();
            lines.push(line.clone());
            lines.join("\n") + "\n"
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            format!("{STATE_FORMAT}\nifname={ifname}\n{line}\n")
        }
        Err(e) => panic!("{}: {e}", path.display()),
    };
    let tmp = dir.join(format!("{ifname}.state.{}.stat.tmp", std::process::id()));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let entry = format!(
        "{}.{:03} {} {ifname} SET_STAT ok {line}\n",
        now.as_secs(),
        now.subsec_millis(),
        std::process::id()
    );
    let log = dir.join("dcbdrv.log");
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .and_then(|mut f| f.write_all(entry.as_bytes()))
        .unwrap_or_else(|e| panic!("{}: {e}", log.display()));
}

/// What a process said, for an assertion's message: its standard output, then its
/// standard error (a [`dcb_tool`] run's answer and its complaint).
pub fn output_text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// What the emulated driver of one interface holds, from its state file
/// (`key=value` lines; a key may repeat, e.g. `ieee_app`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverState {
    lines: Vec<(String, String)>,
}

/// First line of a state file of the format this parser reads.
pub const STATE_FORMAT: &str = "format=lossless-dcbdrv-state 3";

impl DriverState {
    /// Parses a state file's text; Err names what is wrong.
    pub fn parse(text: &str) -> Result<DriverState, String> {
        let mut lines = text.lines();
        match lines.next() {
            Some(STATE_FORMAT) => {}
            other => return Err(format!("not a dcbdrv state file (first line {other:?})")),
        }
        let mut out = Vec::new();
        for (i, l) in lines.enumerate() {
            let (k, v) = l
                .split_once('=')
                .ok_or_else(|| format!("line {}: no '=' in {l:?}", i + 2))?;
            out.push((k.to_string(), v.to_string()));
        }
        Ok(DriverState { lines: out })
    }

    /// The state file at `path`, None while it does not exist. Panics on a file that
    /// does not parse (the writer replaces it whole, so a reader never sees half).
    pub fn read(path: &Path) -> Option<DriverState> {
        let text = std::fs::read_to_string(path).ok()?;
        Some(DriverState::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
    }

    /// The value of a key that occurs once.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.lines
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of a repeated key, in file order.
    pub fn all(&self, key: &str) -> Vec<&str> {
        self.lines
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// A number (decimal or 0x hex); panics when absent or not a number.
    pub fn num(&self, key: &str) -> u64 {
        let v = self
            .get(key)
            .unwrap_or_else(|| panic!("{key} not in the driver state:\n{self}"));
        parse_num(v).unwrap_or_else(|| panic!("{key}={v}: not a number"))
    }

    /// A comma-separated list of numbers ([] for an empty value).
    pub fn list(&self, key: &str) -> Vec<u64> {
        let v = self
            .get(key)
            .unwrap_or_else(|| panic!("{key} not in the driver state:\n{self}"));
        split_nums(v).unwrap_or_else(|| panic!("{key}={v}: not a list of numbers"))
    }

    /// The driver the NIC behaves as.
    pub fn model(&self) -> Model {
        let v = self
            .get("model")
            .unwrap_or_else(|| panic!("no model in the driver state:\n{self}"));
        Model::from_name(v).unwrap_or_else(|| panic!("model={v}: not a model"))
    }

    /// Set requests the NIC answered (any process).
    pub fn sets(&self) -> u64 {
        self.num("sets")
    }

    /// How often the driver closed and reopened the port (a link flap).
    pub fn link_resets(&self) -> u64 {
        self.num("link_resets")
    }

    /// Whether DCB is on.
    pub fn dcb_state(&self) -> bool {
        self.num("dcb_state") != 0
    }

    /// CEE PFC per priority (`cee_pfc_up`).
    pub fn cee_pfc(&self) -> Vec<u64> {
        self.list("cee_pfc_up")
    }

    /// The IEEE PFC enable bitmap (bit n = priority n).
    pub fn ieee_pfc_en(&self) -> u8 {
        self.num("ieee_pfc_en") as u8
    }

    /// The IEEE APP entries as (selector, priority, protocol), in the order added.
    pub fn ieee_apps(&self) -> Vec<(u8, u8, u16)> {
        self.all("ieee_app")
            .iter()
            .map(|v| match split_nums(v).as_deref() {
                Some([s, p, id]) => (*s as u8, *p as u8, *id as u16),
                _ => panic!("ieee_app={v}: not selector,priority,protocol"),
            })
            .collect()
    }

    /// The CEE APP entries as (idtype, id, priority map), in the order added.
    pub fn cee_apps(&self) -> Vec<(u8, u16, u8)> {
        self.all("cee_app")
            .iter()
            .map(|v| match split_nums(v).as_deref() {
                Some([t, id, m]) => (*t as u8, *id as u16, *m as u8),
                _ => panic!("cee_app={v}: not idtype,id,priority_map"),
            })
            .collect()
    }

    /// Whether the firmware LLDP/DCBX agent runs (`fw_agent`; ice's `fw-lldp-agent`
    /// and i40e's `disable-fw-lldp` private flags switch it).
    pub fn fw_agent(&self) -> bool {
        self.num("fw_agent") != 0
    }

    /// The link flow control the driver was told, (autoneg, rx, tx)
    /// (`eth.pause_*`): what ethtool reads while PFC is off.
    pub fn pause(&self) -> (bool, bool, bool) {
        (
            self.num("eth.pause_autoneg") != 0,
            self.num("eth.pause_rx") != 0,
            self.num("eth.pause_tx") != 0,
        )
    }

    /// The private flags (`eth.priv_flags`, bit i = the model's flag i).
    pub fn priv_flags(&self) -> u32 {
        self.num("eth.priv_flags") as u32
    }

    /// The value a test set for the statistic `name` (`eth.stat.NAME`), 0 when none.
    pub fn stat(&self, name: &str) -> u64 {
        self.get(&format!("eth.stat.{name}"))
            .and_then(parse_num)
            .unwrap_or(0)
    }

    /// Every statistic a test set, (name, value), in file order.
    pub fn stats(&self) -> Vec<(String, u64)> {
        self.lines
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix("eth.stat.")?.to_string(), parse_num(v)?)))
            .collect()
    }
}

impl std::fmt::Display for DriverState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (k, v) in &self.lines {
            writeln!(f, "{k}={v}")?;
        }
        Ok(())
    }
}

fn parse_num(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

fn split_nums(s: &str) -> Option<Vec<u64>> {
    if s.is_empty() {
        return Some(Vec::new());
    }
    s.split(',').map(parse_num).collect()
}

/// One line of the driver's log:
/// `SECONDS.MILLIS PID IFNAME COMMAND RESULT [KEY=VALUE ...]`, RESULT `ok`,
/// `status=N` (the u8 status of a set that failed, or SET_ALL's 1/2) or `err=-ERRNO`
/// (an NLMSG_ERROR). IFNAME is `-` for lines about the process (`lldpad-fix`).
#[derive(Debug, Clone, PartialEq)]
pub struct LogEntry {
    pub at_s: f64,
    pub pid: u32,
    pub ifname: String,
    pub cmd: String,
    pub result: String,
    pub fields: BTreeMap<String, String>,
    /// The words after RESULT in order (`KEY=VALUE` or bare).
    pub words: Vec<String>,
}

impl LogEntry {
    pub fn parse(line: &str) -> Option<LogEntry> {
        let mut w = line.split_whitespace();
        let at_s = w.next()?.parse().ok()?;
        let pid = w.next()?.parse().ok()?;
        let ifname = w.next()?.to_string();
        let cmd = w.next()?.to_string();
        let result = w.next().unwrap_or("").to_string();
        let words: Vec<String> = w.map(str::to_string).collect();
        let fields = words
            .iter()
            .filter_map(|x| x.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Some(LogEntry {
            at_s,
            pid,
            ifname,
            cmd,
            result,
            fields,
            words,
        })
    }

    /// A file operation of the emulated host tree (`SYSFS_WRITE`, `SYSFS_OPEN`,
    /// `SYSFS_MKDIR`, `SYSFS_RMDIR`, `SYSFS_UNLINK`): its path under the root.
    pub fn path(&self) -> Option<&str> {
        if self.cmd.starts_with("SYSFS_") {
            self.field("path")
        } else {
            None
        }
    }

    /// What a `SYSFS_WRITE` wrote (the bytes, unescaped).
    pub fn value(&self) -> Option<Vec<u8>> {
        self.field("value").map(unescape)
    }

    /// What the file showed after a `SYSFS_WRITE` that was taken.
    pub fn shown(&self) -> Option<String> {
        self.field("shown")
            .map(|s| String::from_utf8_lossy(&unescape(s)).into_owned())
    }

    /// The errno of a refusal (`err=-22`: 22), None when it went through.
    pub fn errno(&self) -> Option<i32> {
        self.result
            .strip_prefix("err=-")
            .and_then(|n| n.parse().ok())
    }

    /// Every line that parses.
    pub fn parse_all(text: &str) -> Vec<LogEntry> {
        text.lines().filter_map(LogEntry::parse).collect()
    }

    pub fn field(&self, key: &str) -> Option<&str> {
        self.fields.get(key).map(String::as_str)
    }

    pub fn ok(&self) -> bool {
        self.result == "ok"
    }
}

/// The bytes a log line's `value=` or `shown=` stand for (`\xHH` undone).
pub fn unescape(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1] == b'x' {
            if let Ok(v) = u8::from_str_radix(&s[i + 2..i + 4], 16) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

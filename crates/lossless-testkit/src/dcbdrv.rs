//! The emulated DCB driver (the C in `c/`, described in `c/dcbdrv.h`, built by build.rs):
//! the library, the environment that preloads it into a process ([`ShimEnv`]), and what it
//! recorded: the per-interface state file ([`DriverState`]) and the log of requests
//! ([`LogEntry`]). The formats are described in the crate's README.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

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

/// The environment that preloads the emulated driver into a process for some
/// interfaces, and reads back what that process programmed.
#[derive(Debug, Clone)]
pub struct ShimEnv {
    dir: PathBuf,
    ifaces: Vec<String>,
    dcb_on: bool,
    buffer: Option<String>,
    log_gets: bool,
    apps: Vec<(u8, u8, u16)>,
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
        }
    }

    /// APP entries (selector, priority, protocol) the driver holds from the start, as
    /// another tool would have set them.
    pub fn apps(mut self, apps: &[(u8, u8, u16)]) -> ShimEnv {
        self.apps = apps.to_vec();
        self
    }

    /// DCB on from the start (a NIC whose DCB is already enabled).
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
        ];
        if let Some(b) = &self.buffer {
            v.push(("LOSSLESS_DCBDRV_BUFFER".into(), b.clone()));
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

    /// The state file of `ifname`, once the process programmed something.
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
}

/// What the emulated driver of one interface holds, from its state file
/// (`key=value` lines; a key may repeat, e.g. `ieee_app`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverState {
    lines: Vec<(String, String)>,
}

/// First line of a state file of the format this parser reads.
pub const STATE_FORMAT: &str = "format=lossless-dcbdrv-state 1";

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

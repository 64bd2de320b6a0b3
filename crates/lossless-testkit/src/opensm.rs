//! OpenSM on an ibsim fabric as an oracle: ibsim simulates the fabric of a `net` file, OpenSM
//! (under umad2sim) sweeps it with the given `opensm.conf`, policy and partitions, and the
//! infiniband-diags tools ask what it answers and programmed: `saquery` PathRecords,
//! `smpquery` SL2VL, VL arbitration and PortInfo, `ibnetdiscover`, `dump_lfts`, `sminfo`.
//! OpenSM runs on the file's first node ([`OpenSm::start`]) or on a node named
//! ([`OpenSm::start_on`]).
//!
//! Every run has its own ibsim socket name (`IBSIM_SOCKNAME`) and its own directory on
//! tmpfs (`/dev/shm`: umad2sim writes a fake sysfs tree into the working directory of every
//! tool it runs, which on a loaded disk costs a tenth of a second a query), so runs are
//! independent and may go on concurrently; no root is needed. Dropping the [`OpenSm`]
//! stops both processes and removes the directory.
//!
//! Needs the Debian packages opensm, ibsim-utils and infiniband-diags: a test asks for
//! them with [`crate::require`]`(test, &[Oracle::OpenSm])`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// umad2sim, the library that points the diags and OpenSM at ibsim.
pub const UMAD2SIM: &str = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so";

/// What OpenSM runs with. `opensm_conf` may name the policy and partitions with
/// `qos_policy_file` and `partition_config_file` lines: they are pointed at the files
/// written here, whatever path they give.
#[derive(Debug, Clone, Default)]
pub struct SimInput {
    pub net: String,
    pub opensm_conf: String,
    pub policy: Option<String>,
    pub partitions: Option<String>,
}

/// A running ibsim + OpenSM; dropped, both are stopped and the directory removed.
#[derive(Debug)]
pub struct OpenSm {
    dir: PathBuf,
    sock: String,
    ibsim: Option<Child>,
    opensm: Option<Child>,
    /// How long OpenSM took from start to SUBNET UP.
    pub startup: Duration,
}

/// The PathRecord fields the oracle compares (selector bits removed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PathRecord {
    pub sl: u8,
    pub mtu: u8,
    pub rate: u8,
    pub pkt_life: u8,
    pub pkey: u16,
}

/// One port's VL arbitration tables as `smpquery vlarb` reads them back.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VlArbRead {
    pub low_cap: u8,
    pub high_cap: u8,
    /// (VL, weight) in table order.
    pub low: Vec<(u8, u8)>,
    pub high: Vec<(u8, u8)>,
}

fn base_dir() -> PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

/// Point `qos_policy_file` / `partition_config_file` at `dir`, and make OpenSM flush its log
/// (we wait for SUBNET UP in it).
fn rewrite_conf(conf: &str, dir: &Path, input: &SimInput) -> String {
    let mut out = String::new();
    for l in conf.lines() {
        let key = l.split_whitespace().next().unwrap_or("");
        match key {
            "qos_policy_file" if input.policy.is_some() => out.push_str(&format!(
                "qos_policy_file {}",
                dir.join("qos-policy.conf").display()
            )),
            "partition_config_file" if input.partitions.is_some() => out.push_str(&format!(
                "partition_config_file {}",
                dir.join("partitions.conf").display()
            )),
            "force_log_flush" | "log_file" => continue,
            _ => out.push_str(l),
        }
        out.push('\n');
    }
    let has = |k: &str| conf.lines().any(|l| l.split_whitespace().next() == Some(k));
    if input.policy.is_some() && !has("qos_policy_file") {
        out.push_str(&format!(
            "qos_policy_file {}\n",
            dir.join("qos-policy.conf").display()
        ));
    }
    if input.partitions.is_some() && !has("partition_config_file") {
        out.push_str(&format!(
            "partition_config_file {}\n",
            dir.join("partitions.conf").display()
        ));
    }
    out.push_str("force_log_flush TRUE\n");
    out
}

static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

impl OpenSm {
    /// Start ibsim on the fabric and OpenSM on its first node; returns once OpenSM logged
    /// SUBNET UP (or the reason it did not within 30 s).
    pub fn start(input: &SimInput) -> Result<OpenSm, String> {
        OpenSm::start_on(input, None)
    }

    /// [`OpenSm::start`] with OpenSM on node `sm_host` (its id in the net file, or its node
    /// description), `None`: the first node. ibsim attaches a client to the node its
    /// `SIM_HOST` names, at port 0 of a switch (base or enhanced) and port 1 of a CA or
    /// router, so OpenSM runs there: its port is the SM's (`SELF`, the default partition's
    /// full member), as `sminfo` then reports.
    pub fn start_on(input: &SimInput, sm_host: Option<&str>) -> Result<OpenSm, String> {
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let sock = format!("lsim{}x{n}", std::process::id());
        let dir = base_dir().join(format!("lossless-opensm-{sock}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("cache"))
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut me = OpenSm {
            dir: dir.clone(),
            sock,
            ibsim: None,
            opensm: None,
            startup: Duration::ZERO,
        };
        let write = |f: &str, t: &str| {
            std::fs::write(dir.join(f), t).map_err(|e| format!("{}/{f}: {e}", dir.display()))
        };
        write("net", &input.net)?;
        if let Some(p) = &input.policy {
            write("qos-policy.conf", p)?;
        }
        if let Some(p) = &input.partitions {
            write("partitions.conf", p)?;
        }
        write(
            "opensm.conf",
            &rewrite_conf(&input.opensm_conf, &dir, input),
        )?;
        let t0 = Instant::now();
        let log = |f: &str| {
            std::fs::File::create(dir.join(f))
                .map(Stdio::from)
                .map_err(|e| format!("{f}: {e}"))
        };
        me.ibsim = Some(
            Command::new("ibsim")
                .args(["-s", "-n"])
                .arg(dir.join("net"))
                .env("IBSIM_SOCKNAME", &me.sock)
                .current_dir(&dir)
                .stdin(Stdio::null())
                .stdout(log("ibsim.out")?)
                .stderr(log("ibsim.err")?)
                .spawn()
                .map_err(|e| format!("ibsim: {e}"))?,
        );
        me.wait(Duration::from_secs(10), "ibsim to listen", |m| {
            m.ibsim_listening()
        })?;
        let mut opensm = Command::new("opensm");
        match sm_host {
            Some(h) => opensm.env("SIM_HOST", h),
            None => opensm.env_remove("SIM_HOST"),
        };
        me.opensm = Some(
            opensm
                .arg("-F")
                .arg(dir.join("opensm.conf"))
                .arg("-f")
                .arg(dir.join("osm.log"))
                .args(["-e", "-D", "0x03", "-s", "0"])
                .env("IBSIM_SOCKNAME", &me.sock)
                .env("LD_PRELOAD", UMAD2SIM)
                .env("OSM_CACHE_DIR", dir.join("cache"))
                .env("OSM_TMP_DIR", dir.join("cache"))
                .current_dir(&dir)
                .stdin(Stdio::null())
                .stdout(log("opensm.out")?)
                .stderr(log("opensm.err")?)
                .spawn()
                .map_err(|e| format!("opensm: {e}"))?,
        );
        me.wait(Duration::from_secs(30), "OpenSM's SUBNET UP", |m| {
            m.osm_log().contains("SUBNET UP")
        })?;
        me.startup = t0.elapsed();
        Ok(me)
    }

    fn ibsim_listening(&self) -> bool {
        let needle = format!("@{}:ctl", self.sock);
        std::fs::read_to_string("/proc/net/unix").is_ok_and(|t| t.contains(&needle))
    }

    fn wait(
        &mut self,
        limit: Duration,
        what: &str,
        f: impl Fn(&OpenSm) -> bool,
    ) -> Result<(), String> {
        let t0 = Instant::now();
        loop {
            if f(self) {
                return Ok(());
            }
            let mut exited = None;
            for (name, c) in [("ibsim", &mut self.ibsim), ("opensm", &mut self.opensm)] {
                if let Some(status) = c.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                    exited = Some((name, status));
                }
            }
            if let Some((name, status)) = exited {
                return Err(format!(
                    "{name} exited ({status}) while waiting for {what}: {}",
                    self.read(&format!("{name}.err"))
                ));
            }
            if t0.elapsed() > limit {
                return Err(format!(
                    "no {what} after {limit:?}; OpenSM log:\n{}",
                    self.osm_log()
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn read(&self, f: &str) -> String {
        std::fs::read_to_string(self.dir.join(f)).unwrap_or_default()
    }

    /// The directory of this run (net, opensm.conf, osm.log, ...).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// OpenSM's log so far.
    pub fn osm_log(&self) -> String {
        self.read("osm.log")
    }

    /// A diag tool run against this fabric from node `host` (its id in the net file).
    pub fn tool(&self, host: &str, program: &str, args: &[&str]) -> Output {
        Command::new(program)
            .args(args)
            .env("IBSIM_SOCKNAME", &self.sock)
            .env("LD_PRELOAD", UMAD2SIM)
            .env("SIM_HOST", host)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("{program}: {e}"))
    }

    fn stdout(&self, host: &str, program: &str, args: &[&str]) -> String {
        String::from_utf8_lossy(&self.tool(host, program, args).stdout).into_owned()
    }

    /// `ibnetdiscover` as seen from `host`.
    pub fn ibnetdiscover(&self, host: &str) -> String {
        self.stdout(host, "ibnetdiscover", &[])
    }

    /// `sminfo` as seen from `host`: the master SM's LID and port GUID
    /// (`sminfo: sm lid 1 sm guid 0x100005, activity count ... SMINFO_MASTER`).
    pub fn sminfo(&self, host: &str) -> String {
        self.stdout(host, "sminfo", &[]).trim().to_string()
    }

    /// `dump_lfts` as seen from `host`.
    pub fn dump_lfts(&self, host: &str) -> String {
        self.stdout(host, "dump_lfts", &[])
    }

    /// `saquery PR --slid S --dlid D OPTIONS` issued from `host`: the record, or None when
    /// OpenSM answers none.
    pub fn path_record(
        &self,
        host: &str,
        slid: u16,
        dlid: u16,
        opts: &[&str],
    ) -> Option<PathRecord> {
        let (s, d) = (slid.to_string(), dlid.to_string());
        let mut args = vec!["PR", "--slid", &s, "--dlid", &d];
        args.extend_from_slice(opts);
        parse_path_records(&self.stdout(host, "saquery", &args))
            .into_iter()
            .next()
    }

    /// `smpquery sl2vl LID [PORT]`: (input port, output port, VL per SL) rows.
    pub fn sl2vl(&self, host: &str, lid: u16, port: Option<u8>) -> Vec<(u8, u8, [u8; 16])> {
        let l = lid.to_string();
        let p = port.map(|p| p.to_string());
        let mut args = vec!["sl2vl", l.as_str()];
        if let Some(p) = &p {
            args.push(p);
        }
        parse_sl2vl(&self.stdout(host, "smpquery", &args))
    }

    /// `smpquery vlarb LID [PORT]`.
    pub fn vlarb(&self, host: &str, lid: u16, port: Option<u8>) -> Option<VlArbRead> {
        let l = lid.to_string();
        let p = port.map(|p| p.to_string());
        let mut args = vec!["vlarb", l.as_str()];
        if let Some(p) = &p {
            args.push(p);
        }
        parse_vlarb(&self.stdout(host, "smpquery", &args))
    }

    /// `smpquery portinfo LID [PORT]` as `Field -> value` (`VLHighLimit`, `OperVLs`, ...).
    pub fn portinfo(&self, host: &str, lid: u16, port: Option<u8>) -> BTreeMap<String, String> {
        let l = lid.to_string();
        let p = port.map(|p| p.to_string());
        let mut args = vec!["portinfo", l.as_str()];
        if let Some(p) = &p {
            args.push(p);
        }
        parse_dotted(&self.stdout(host, "smpquery", &args))
    }
}

impl Drop for OpenSm {
    fn drop(&mut self) {
        for c in [self.opensm.take(), self.ibsim.take()]
            .into_iter()
            .flatten()
        {
            stop(c);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// SIGTERM, then SIGKILL after half a second; always reaped.
fn stop(mut c: Child) {
    if let Ok(pid) = i32::try_from(c.id()) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_millis(500) {
        if c.try_wait().ok().flatten().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = c.kill();
    let _ = c.wait();
}

/// `Key.......value` or `Key:....value` lines as a map.
pub fn parse_dotted(text: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for l in text.lines() {
        let t = l.trim();
        let Some(i) = t.find(['.', ':']) else {
            continue;
        };
        let (k, rest) = t.split_at(i);
        let v = rest.trim_start_matches(['.', ':']).trim();
        if !k.is_empty() && !k.contains(' ') {
            m.insert(k.to_string(), v.to_string());
        }
    }
    m
}

fn num(v: &str) -> Option<u64> {
    let v = v.trim();
    match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

/// Every `PathRecord dump:` block of saquery's output.
pub fn parse_path_records(text: &str) -> Vec<PathRecord> {
    text.split("PathRecord dump:")
        .skip(1)
        .filter_map(|b| {
            let f = parse_dotted(b);
            let g = |k: &str| f.get(k).and_then(|v| num(v));
            Some(PathRecord {
                sl: (g("sl")? & 0xf) as u8,
                mtu: (g("mtu")? & 0x3f) as u8,
                rate: (g("rate")? & 0x3f) as u8,
                pkt_life: (g("pkt_life")? & 0x3f) as u8,
                pkey: g("pkey")? as u16,
            })
        })
        .collect()
}

/// `ports: in  0, out  3: | 0| 1| ...|15|` rows (CAs print `ports: in  0, out  0:` too).
pub fn parse_sl2vl(text: &str) -> Vec<(u8, u8, [u8; 16])> {
    let mut rows = Vec::new();
    for l in text.lines() {
        let Some(rest) = l.trim().strip_prefix("ports: in") else {
            continue;
        };
        let Some((ports, table)) = rest.split_once(':') else {
            continue;
        };
        let mut it = ports.split(',');
        let inp = it.next().and_then(|s| num(s.trim()));
        let out = it
            .next()
            .and_then(|s| num(s.trim().trim_start_matches("out").trim()));
        let vls: Vec<u8> = table
            .split('|')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .filter_map(|s| num(s).map(|n| n as u8))
            .collect();
        if let (Some(i), Some(o), Ok(t)) = (inp, out, <[u8; 16]>::try_from(vls)) {
            rows.push((i as u8, o as u8, t));
        }
    }
    rows
}

/// `smpquery vlarb` output: the caps from the header, then each table's `VL` and `WEIGHT`
/// rows.
pub fn parse_vlarb(text: &str) -> Option<VlArbRead> {
    let mut r = VlArbRead::default();
    let header = text.lines().find(|l| l.contains("VLArbitration tables"))?;
    let words: Vec<&str> = header.split_whitespace().collect();
    let after = |k: &str| {
        words
            .iter()
            .position(|w| *w == k)
            .and_then(|i| words.get(i + 1))
            .and_then(|v| num(v))
            .map(|n| n as u8)
    };
    r.low_cap = after("LowCap")?;
    r.high_cap = after("HighCap")?;
    let mut high = false;
    let mut vls: Vec<u8> = vec![];
    for l in text.lines() {
        let t = l.trim();
        if t.contains("Low priority") {
            high = false;
        } else if t.contains("High priority") {
            high = true;
        }
        let cells = |s: &str| -> Vec<u8> {
            s.split('|')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .filter_map(|c| num(c).map(|n| n as u8))
                .collect()
        };
        if let Some(rest) = t.strip_prefix("VL") {
            if let Some(v) = rest.trim_start().strip_prefix(':') {
                vls = cells(v);
            }
        } else if let Some(rest) = t.strip_prefix("WEIGHT") {
            if let Some(w) = rest.trim_start().strip_prefix(':') {
                let pairs: Vec<(u8, u8)> = vls.iter().copied().zip(cells(w)).collect();
                if high {
                    r.high.extend(pairs);
                } else {
                    r.low.extend(pairs);
                }
            }
        }
    }
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_diag_output() {
        let sl = "# SL2VL table: Lid 1\n#                 SL: | 0| 1|\nports: in  0, out  3: | 0| 1| 2| 3| 4| 5| 6| 7| 7| 7| 7| 7| 7| 7|15|15|\n";
        assert_eq!(
            parse_sl2vl(sl),
            vec![(0, 3, [0, 1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7, 7, 7, 15, 15])]
        );
        let va = "# VLArbitration tables: Lid 1 port 3 LowCap 8 HighCap 8\n# Low priority VL Arbitration Table:\nVL    : |0x0 |0x1 |\nWEIGHT: |0x0 |0x40|\n# High priority VL Arbitration Table:\nVL    : |0x0 |0x0 |\nWEIGHT: |0x4 |0x0 |\n";
        let v = parse_vlarb(va).expect("parses");
        assert_eq!((v.low_cap, v.high_cap), (8, 8));
        assert_eq!(v.low, vec![(0, 0), (1, 0x40)]);
        assert_eq!(v.high, vec![(0, 4), (0, 0)]);
        let pr = "PathRecord dump:\n\t\tdlid....................2\n\t\tpkey....................0xFFFF\n\t\tsl......................0x1\n\t\tmtu.....................0x83\n\t\trate....................0x83\n\t\tpkt_life................0x92\n";
        assert_eq!(
            parse_path_records(pr),
            vec![PathRecord {
                sl: 1,
                mtu: 3,
                rate: 3,
                pkt_life: 0x12,
                pkey: 0xffff
            }]
        );
    }
}

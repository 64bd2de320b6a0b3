//! tshark, the decoding oracle: the fields of every frame of a capture file, a capture
//! written to a pipe, and live captures on an interface of a namespace.
//!
//! A test that uses them starts with [`crate::require`]`(test, &[Oracle::Tshark])`, which
//! fails it naming the package to install when tshark is missing (or skips it with
//! `LOSSLESS_SKIP_ORACLES=1`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::netns::Netns;

const MISSING: &str = "tshark could not be run (Debian package tshark); a test that needs it \
                       starts with lossless_testkit::require(TEST, &[Oracle::Tshark])";

/// tshark's fields of a PFC frame's MAC Control PDU (IEEE 802.1Q-2018 clause 36): the
/// priority-enable vector, then the pause time of priorities 0 to 7. A test asks them
/// beside its own fields: `[FIELDS, &PFC_FIELDS[..]].concat()`.
pub const PFC_FIELDS: [&str; 9] = [
    PFC_ENABLE,
    "macc.cbfc.pause_time.c0",
    "macc.cbfc.pause_time.c1",
    "macc.cbfc.pause_time.c2",
    "macc.cbfc.pause_time.c3",
    "macc.cbfc.pause_time.c4",
    "macc.cbfc.pause_time.c5",
    "macc.cbfc.pause_time.c6",
    "macc.cbfc.pause_time.c7",
];

/// The priority-enable vector's field, first of [`PFC_FIELDS`].
pub const PFC_ENABLE: &str = "macc.cbfc.enbv";

/// The pause-time field of `priority` (0 to 7), from [`PFC_FIELDS`].
pub fn pfc_pause_time(priority: usize) -> &'static str {
    PFC_FIELDS[1 + priority]
}

/// tshark's fields for every frame of a capture: one row per frame, one column per
/// requested field, in the order asked. A field that occurs several times in a frame
/// holds every occurrence joined by `,`; an absent one is "".
#[derive(Debug, Clone)]
pub struct Fields {
    pub names: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Fields {
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    fn col(&self, name: &str) -> usize {
        self.names
            .iter()
            .position(|f| f == name)
            .unwrap_or_else(|| panic!("field {name} was not asked of tshark: {:?}", self.names))
    }

    /// Field `name` of frame `row` (0-based).
    pub fn get(&self, row: usize, name: &str) -> &str {
        let c = self.col(name);
        self.rows[row][c].as_str()
    }

    /// The PFC content of frame `row` as tshark read it (the innermost MAC Control
    /// PDU's): priority-enable vector and the eight pause times. The fields asked
    /// include [`PFC_FIELDS`].
    pub fn pfc(&self, row: usize) -> (String, [String; 8]) {
        let last = |name: &str| {
            let v = self.get(row, name);
            v.rsplit(',').next().unwrap_or(v).to_string()
        };
        (
            last(PFC_ENABLE),
            std::array::from_fn(|p| last(pfc_pause_time(p))),
        )
    }

    /// Field `name` of every frame.
    pub fn column(&self, name: &str) -> Vec<&str> {
        let c = self.col(name);
        self.rows.iter().map(|r| r[c].as_str()).collect()
    }
}

/// Runs `tshark -r PCAP OPTIONS -T fields -E ... -e F1 -e F2 ...` (OPTIONS e.g. `-Y`
/// filters or `-o` preferences such as `ip.check_checksum:TRUE`) and returns the rows.
/// Panics when tshark is missing (naming the package) or fails.
pub fn tshark_fields(pcap: &Path, options: &[&str], fields: &[&str]) -> Fields {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(pcap).args(options).args([
        "-T",
        "fields",
        "-E",
        "header=n",
        "-E",
        "separator=/t",
        "-E",
        "aggregator=,",
        "-E",
        "occurrence=a",
    ]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = match cmd.output() {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!("{MISSING}"),
        Err(e) => panic!("tshark: {e}"),
    };
    assert!(
        out.status.success(),
        "tshark -r {} failed: {}",
        pcap.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<Vec<String>> = text
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect();
    for r in &rows {
        assert_eq!(
            r.len(),
            fields.len(),
            "tshark gave {} columns for {} fields:\n{text}",
            r.len(),
            fields.len()
        );
    }
    Fields {
        names: fields.iter().map(|f| f.to_string()).collect(),
        rows,
    }
}

/// Writes the frames of `pcap` that match the display `filter` (e.g. `frame.number ==
/// 3`) to `out` as pcap (`tshark -r PCAP -Y FILTER -F pcap -w OUT`).
pub fn tshark_select(pcap: &Path, filter: &str, out: &Path) {
    let o = Command::new("tshark")
        .arg("-r")
        .arg(pcap)
        .args(["-Y", filter, "-F", "pcap", "-w"])
        .arg(out)
        .output()
        .unwrap_or_else(|e| panic!("tshark: {e} ({MISSING})"));
    assert!(
        o.status.success(),
        "tshark -r {} -Y {filter:?} -w {} failed: {}",
        pcap.display(),
        out.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// tshark writing the capture `pcap` to a pipe (`tshark -r PCAP -w -`, pcapng), the way
/// a live `tshark -w -` feeds a reader: take [`Pipe::stdout`] for the reader's stdin,
/// then [`Pipe::finish`].
#[derive(Debug)]
pub struct Pipe {
    child: Child,
}

impl Pipe {
    /// Starts `tshark -r PCAP -w -`. Panics when tshark is missing (naming the package).
    pub fn start(pcap: &Path) -> Pipe {
        let child = Command::new("tshark")
            .arg("-r")
            .arg(pcap)
            .args(["-w", "-"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("tshark -r {}: {e} ({MISSING})", pcap.display()));
        Pipe { child }
    }

    /// The pipe tshark writes the capture to (once; a second call panics).
    pub fn stdout(&mut self) -> ChildStdout {
        self.child
            .stdout
            .take()
            .expect("tshark's stdout taken twice")
    }

    /// Waits for tshark and panics, with what it said, unless it succeeded.
    pub fn finish(self) {
        let out = self.child.wait_with_output().expect("wait for tshark");
        assert!(
            out.status.success(),
            "tshark -w - failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Writes the frames of `parts` to `out` as pcap, each file after the one before
/// (`mergecap -a`, of tshark's package; without `-a` it would sort them by time).
pub fn concatenate(parts: &[PathBuf], out: &Path) {
    let o = Command::new("mergecap")
        .args(["-a", "-F", "pcap", "-w"])
        .arg(out)
        .args(parts)
        .output()
        .unwrap_or_else(|e| {
            panic!("mergecap: {e} (Debian package wireshark-common, installed with tshark)")
        });
    assert!(
        o.status.success(),
        "mergecap -w {} failed: {}",
        out.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// How long a capture runs on once asked to stop. libpcap hands dumpcap the
/// frames of its receive ring a block at a time, when the block fills or its
/// timeout passes; frames in a block not yet handed over when the capture ends are
/// lost. Measured here: a frame sent 150 ms before the stop was lost, 2 runs of 2;
/// 250 ms before, kept, 2 of 2.
pub const DRAIN: Duration = Duration::from_millis(500);

/// A live capture (`tshark -i DEV -f FILTER -w FILE -F pcap`) in a namespace;
/// [`Capture::stop`] (or drop) ends it.
#[derive(Debug)]
pub struct Capture {
    child: Option<Child>,
    pub path: PathBuf,
}

impl Capture {
    /// Starts capturing on `dev` in `ns` frames that match the capture `filter` (BPF
    /// syntax, e.g. `ether proto 0x88cc`) into `path` (pcap), and returns once the
    /// capture's packet socket is on `dev` with the filter in place (see
    /// [`capturing`]): from then on no frame is missed.
    pub fn start(ns: &Netns, dev: &str, filter: &str, path: &Path) -> Capture {
        let mut child = ns
            .command("tshark")
            .args(["-q", "-i", dev, "-f", filter, "-F", "pcap", "-w"])
            .arg(path)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("tshark -i {dev}: {e} ({MISSING})"));
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut said = Vec::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("Capturing on") {
                    let _ = tx.send(Ok(()));
                }
                said.push(line);
            }
            let _ = tx.send(Err(said.join("\n")));
        });
        match rx.recv_timeout(Duration::from_secs(15)) {
            Ok(Ok(())) => {}
            Ok(Err(said)) => panic!("tshark -i {dev} ended before capturing: {said}"),
            Err(_) => panic!("tshark -i {dev} did not start capturing within 15 s"),
        }
        // tshark says "Capturing on" before dumpcap, its capture process, has even
        // opened the socket (tens of milliseconds here, more on a busy machine):
        // frames sent then were missed.
        let deadline = std::time::Instant::now() + Duration::from_secs(15);
        while !capturing(ns, dev, child.id(), !filter.is_empty()) {
            assert!(
                std::time::Instant::now() < deadline,
                "tshark -i {dev}: its capture socket was not on {dev} within 15 s"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        Capture {
            child: Some(child),
            path: path.to_path_buf(),
        }
    }

    /// Ends the capture (SIGINT, so tshark writes out what it has) and waits for it,
    /// [`DRAIN`] after the call: every frame the interface had by then is in the file.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            std::thread::sleep(DRAIN);
            let pid = nix::unistd::Pid::from_raw(c.id() as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
            let _ = c.wait();
        }
    }
}

/// Whether a packet socket of `tshark`'s dumpcap (its child) is on `dev` in `ns`,
/// with a classic BPF filter of more than one instruction when `filtered`: libpcap
/// binds the socket, attaches a filter that rejects everything, drains what came
/// before it, then attaches the capture filter; from then on it misses nothing
/// (`ss --packet --bpf --processes`).
pub fn capturing(ns: &Netns, dev: &str, tshark: u32, filtered: bool) -> bool {
    let out = ns.exec(&["ss", "--packet", "--bpf", "--processes"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    lines.iter().enumerate().any(|(i, line)| {
        let ours = line.contains(&format!("*:{dev} "))
            && line.contains("\"dumpcap\"")
            && dumpcap_pids(line).any(|pid| parent_of(pid) == Some(tshark));
        let filter_len = lines
            .get(i + 1)
            .and_then(|l| l.trim().strip_prefix("bpf filter ("))
            .and_then(|l| l.split(')').next())
            .and_then(|n| n.parse::<usize>().ok());
        ours && (!filtered || filter_len.is_some_and(|n| n > 1))
    })
}

/// The pids `ss --processes` names on a line (`pid=N`).
fn dumpcap_pids(line: &str) -> impl Iterator<Item = u32> + '_ {
    line.split("pid=").skip(1).filter_map(|rest| {
        rest.split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    })
}

/// The parent of process `pid` (`/proc/PID/stat`, field 4).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold spaces: count from its end.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.stop();
    }
}

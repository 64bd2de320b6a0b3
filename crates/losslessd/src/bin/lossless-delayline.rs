//! `lossless-delayline`: a userspace delay line between two interfaces, for testing
//! adaptive headroom where the kernel has no netem.
//!
//! Every frame that arrives on one interface leaves on the other exactly `--delay`
//! after the kernel received it (its software receive timestamp, not the moment this
//! program noticed it), so scheduling latency does not add to the delay.
//!
//! Microsecond delays cannot wait for a wake-up (on a VM a sleeping thread takes tens
//! of microseconds to run again), so one thread, under `SCHED_FIFO` where allowed,
//! busy-polls both interfaces while frames are in flight or arrived within the last
//! 5 ms, and sleeps in `ppoll` when the line is idle. The kernel's transmit
//! timestamps of its own sends close the loop: the send path's latency is learnt and
//! each frame is handed over that much early, so it reaches the wire when it is due.
//!
//! Like a cable, the line loses nothing at link-up: a veth whose carrier is on is not
//! yet able to send until the kernel's linkwatch worker has activated its queue (the
//! `noop` qdisc drops every frame until then, silently, and linkwatch can run many
//! milliseconds late when the rtnl lock is busy). So frames due on an interface with
//! the carrier on that the kernel does not run yet (operstate not `up`) wait for it,
//! a second at most; on an interface without carrier they are dropped, as on a cable
//! whose far end is dead.
//!
//! ```text
//! ns A: va ==veth== dla  [lossless-delayline --a dla --b dlb --delay 100us]  dlb ==veth== vb :ns B
//! ```

use std::collections::VecDeque;
use std::io;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use lossless_headroom::units::parse_duration;
use lossless_sys::link::if_nametoindex;
use lossless_sys::timestamp::{
    realtime_ps, set_realtime_priority, set_timer_slack_ns, wait_readable, MeasureSocket,
};

/// Forward frames between two interfaces, each held for a set time.
#[derive(Debug, Parser)]
#[command(
    name = "lossless-delayline",
    version,
    after_help = "Example (in a namespace between two veth pairs):\n  \
                  lossless-delayline --a dla --b dlb --delay 250us\n\
                  The delay is per direction; a measured round trip is twice it plus the \
                  veth and stack crossings (about a microsecond)."
)]
struct Args {
    /// One side's interface.
    #[arg(long)]
    a: String,
    /// The other side's interface.
    #[arg(long)]
    b: String,
    /// Time each frame is held, a to b (e.g. 10us, 1ms).
    #[arg(long, value_parser = delay)]
    delay: Duration,
    /// Time each frame is held b to a (default: --delay).
    #[arg(long, value_parser = delay)]
    delay_back: Option<Duration>,
    /// Write the holds the kernel saw (each frame's transmit timestamp minus its receive
    /// timestamp, in ns, the last 256 per direction) to FILE whenever the line goes idle:
    /// a line `a->b NS NS ...` and a line `b->a NS NS ...`, replaced atomically. Under
    /// load a frame may leave late; this says by how much.
    #[arg(long, value_name = "FILE")]
    report: Option<std::path::PathBuf>,
}

fn delay(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s).map_err(|e| e.to_string())?;
    if d.0 > 10_000_000_000_000 {
        return Err(format!("{s}: more than 10 s"));
    }
    Ok(Duration::from_nanos(d.0 / 1000))
}

/// Busy-poll this long after the last frame before sleeping.
const ACTIVE: u64 = 5_000_000_000; // ps
/// The most a send path latency sample may count for (a preempted call is not the path).
const MAX_LEAD: u64 = 20_000_000; // ps

/// How old the outgoing interface's state may be: when it could send, and when it
/// could not (then it is read again before a frame is held or dropped on its word).
const CHECK_READY: u64 = 100_000_000_000; // ps
const CHECK_NOT_READY: u64 = 20_000_000; // ps
/// The longest a frame waits for its interface to be able to send.
const MAX_WAIT: u64 = 1_000_000_000_000; // ps

/// Whether an interface can send now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Out {
    /// Carrier on, running (operstate `up` or `unknown`): its queue is active; or
    /// the state could not be read.
    Ready,
    /// Carrier on, not running yet: linkwatch has not activated its queue.
    Waiting,
    /// No carrier: what is due is dropped.
    Down,
}

/// The state of `name` from sysfs (neither file takes the rtnl lock). Unreadable
/// (an interface that is down has no carrier to read, or sysfs is not this network
/// namespace's): the kernel decides, as without the check.
fn out_state(name: &str) -> Out {
    let read = |f: &str| std::fs::read_to_string(format!("/sys/class/net/{name}/{f}"));
    match read("carrier").map(|c| c.trim() == "1") {
        Ok(true) => match read("operstate") {
            Ok(s) if !matches!(s.trim(), "up" | "unknown") => Out::Waiting,
            _ => Out::Ready,
        },
        Ok(false) => Out::Down,
        Err(_) => Out::Ready,
    }
}

/// One direction: what arrived on `from`, waiting to leave on `to`.
struct Direction<'a> {
    from: &'a MeasureSocket,
    to: &'a MeasureSocket,
    to_name: &'a str,
    /// `to`'s state, and when it was read.
    out: Out,
    out_read: u64,
    delay_ps: u64,
    /// (due, received, frame)
    queue: VecDeque<(u64, u64, Vec<u8>)>,
    /// Transmit minus receive timestamp of the last frames sent, ps.
    holds: VecDeque<u64>,
    /// Holds recorded so far.
    timed: u64,
    /// The send path's latency, learnt from the kernel's transmit timestamps.
    lead: u64,
    /// Frames the far side refused.
    dropped: u64,
}

impl Direction<'_> {
    /// Takes every queued frame; true when any arrived.
    fn receive(&mut self, buf: &mut [u8]) -> io::Result<bool> {
        let mut any = false;
        loop {
            match self.from.recv(buf) {
                Ok((n, rx)) => {
                    let at = rx.unwrap_or_else(realtime_ps);
                    self.queue
                        .push_back((at.wrapping_add(self.delay_ps), at, buf[..n].to_vec()));
                    any = true;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(any),
                Err(e) if e.kind() == io::ErrorKind::InvalidData => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads `to`'s state if what is known is older than `max_age` ps.
    fn check_out(&mut self, max_age: u64) {
        let now = realtime_ps();
        if now.wrapping_sub(self.out_read) >= max_age {
            self.out = out_state(self.to_name);
            self.out_read = now;
        }
    }

    /// Sends what is due, each handed to the kernel `lead` early: the send path's
    /// latency (the kernel's transmit timestamp minus the moment of the call), averaged
    /// over recent sends.
    fn send_due(&mut self, echo: &mut [u8]) {
        loop {
            let now = realtime_ps();
            let Some((due, _, _)) = self.queue.front() else {
                return;
            };
            if now.wrapping_sub(due.wrapping_sub(self.lead)) >= 1 << 63 {
                return; // not yet
            }
            let waited = now.wrapping_sub(*due);
            if self.out != Out::Ready {
                // The far end may have come up since: ask again before holding or
                // dropping.
                self.check_out(CHECK_NOT_READY);
            }
            if self.out == Out::Waiting && waited < MAX_WAIT {
                return; // the interface cannot send yet: the frame waits for it
            }
            let Some((_, received, frame)) = self.queue.pop_front() else {
                return;
            };
            if self.out != Out::Ready {
                self.dropped += 1;
                continue;
            }
            // A frame the far side refuses (link down) is dropped, as a cable would.
            match self.to.send(&frame) {
                Ok(()) => {
                    if let Ok((_, tx)) = self.to.recv_tx_timestamp(echo) {
                        let latency = tx.wrapping_sub(now).min(MAX_LEAD);
                        self.lead = (self.lead * 7 + latency) / 8;
                        if self.holds.len() == HOLDS_KEPT {
                            self.holds.pop_front();
                        }
                        self.holds.push_back(tx.wrapping_sub(received));
                        self.timed += 1;
                    }
                }
                Err(e) => {
                    self.dropped += 1;
                    if self.dropped.is_power_of_two() {
                        eprintln!("lossless-delayline: {} frames dropped: {e}", self.dropped);
                    }
                }
            }
        }
    }
}

/// How many holds per direction `--report` keeps.
const HOLDS_KEPT: usize = 256;

/// Writes the holds of both directions to `path` (through a temporary file and a rename).
fn write_report(path: &std::path::Path, dirs: &[Direction; 2]) -> io::Result<()> {
    let mut text = String::new();
    for (name, d) in ["a->b", "b->a"].iter().zip(dirs) {
        text.push_str(name);
        for h in &d.holds {
            text.push_str(&format!(" {}", h / 1000));
        }
        text.push('\n');
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

fn run(
    (a, a_name): (&MeasureSocket, &str),
    (b, b_name): (&MeasureSocket, &str),
    ab: Duration,
    ba: Duration,
    report: Option<&std::path::Path>,
) -> io::Result<()> {
    let _ = set_timer_slack_ns(1);
    if let Err(e) = set_realtime_priority(10) {
        eprintln!(
            "lossless-delayline: no real-time priority ({e}): departures may be late under load"
        );
    }
    let ps = |d: Duration| d.as_nanos() as u64 * 1000;
    let mut dirs = [
        Direction {
            from: a,
            to: b,
            to_name: b_name,
            out: out_state(b_name),
            out_read: realtime_ps(),
            delay_ps: ps(ab),
            queue: VecDeque::new(),
            holds: VecDeque::new(),
            timed: 0,
            lead: 0,
            dropped: 0,
        },
        Direction {
            from: b,
            to: a,
            to_name: a_name,
            out: out_state(a_name),
            out_read: realtime_ps(),
            delay_ps: ps(ba),
            queue: VecDeque::new(),
            holds: VecDeque::new(),
            timed: 0,
            lead: 0,
            dropped: 0,
        },
    ];
    let mut buf = vec![0u8; 16384];
    let mut echo = vec![0u8; 16384];
    let mut last_activity = realtime_ps();
    let mut reported = 0;
    loop {
        for d in dirs.iter_mut() {
            d.check_out(CHECK_READY);
            if d.receive(&mut buf)? {
                last_activity = realtime_ps();
            }
            d.send_due(&mut echo);
        }
        let idle = dirs.iter().all(|d| d.queue.is_empty())
            && realtime_ps().wrapping_sub(last_activity) > ACTIVE;
        if idle {
            let sent: u64 = dirs.iter().map(|d| d.timed).sum();
            if let Some(path) = report.filter(|_| sent != reported) {
                write_report(path, &dirs)?;
                reported = sent;
            }
            wait_readable(&[a, b], Duration::from_millis(100))?;
            last_activity = realtime_ps();
        }
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let open = |name: &str| -> io::Result<MeasureSocket> {
        MeasureSocket::open_all(if_nametoindex(name)?, name)
            .map_err(|e| io::Error::new(e.kind(), format!("{name}: {e}")))
    };
    let (a, b) = match (open(&args.a), open(&args.b)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("lossless-delayline: {e}");
            return ExitCode::from(1);
        }
    };
    let back = args.delay_back.unwrap_or(args.delay);
    match run(
        (&a, &args.a),
        (&b, &args.b),
        args.delay,
        back,
        args.report.as_deref(),
    ) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lossless-delayline: {e}");
            ExitCode::from(1)
        }
    }
}

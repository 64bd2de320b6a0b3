//! The `restart` section: losslessd stopped (SIGTERM, or kill -9) and started
//! again, timed from the new process's start to both ends agreed again.

use std::time::{Duration, Instant};

use crate::common::*;
use crate::measure::*;
use crate::pair::*;
use crate::*;
use lossless_node::protocol::Request;

/// Restart of the not-willing side: from the new process's start to both
/// ends agreed again, after SIGTERM and after kill -9.
pub fn restart(runs: usize) {
    let dir = TempDir::new();
    let na = Netns::new();
    let nb = Netns::new();
    Veth::new(&na, "va", MAC_A, &nb, "vb", MAC_B);
    // CEE DCBX on both: the check below follows its SeqNo/AckNo.
    let conf = dir.path().join("a.toml");
    std::fs::write(&conf, format!("{NOT_WILLING}{CEE}")).unwrap();
    let mut a = Daemon::start(
        &na,
        &dir.path().join("a"),
        &["--config", conf.to_str().unwrap()],
    );
    let conf_b = dir.path().join("b.toml");
    std::fs::write(&conf_b, format!("[ports.\"vb\"]\n{CEE}")).unwrap();
    let b = Daemon::start(
        &nb,
        &dir.path().join("b"),
        &["--config", conf_b.to_str().unwrap()],
    );
    na.ip(&["link", "set", "va", "up"]);
    nb.ip(&["link", "set", "vb", "up"]);
    poll(Duration::from_secs(10), || agreed(&b, "vb", &[3, 4])).expect("first agreement");
    for kill9 in [false, true] {
        let mut wall = Vec::new();
        for _ in 0..runs {
            // Let the peer's transmit credit refill (802.1AB txCreditMax 5,
            // one per second, and the txFastInit frames after each restart
            // spend some): restarts in quick succession measure the peer's
            // rate limiter (a ~1 s wait), not a restart.
            std::thread::sleep(Duration::from_secs(10));
            let boots = a.call(&Request::Status)["daemon"]["boots"]
                .as_u64()
                .unwrap();
            if kill9 {
                a.kill9();
            } else {
                a.stop();
            }
            let t0 = Instant::now();
            a.spawn();
            let ok = poll(Duration::from_secs(10), || {
                let c = [
                    a.call(&Request::Status)["daemon"]["boots"].as_u64() == Some(boots + 1),
                    agreed(&a, "va", &[3, 4]),
                    agreed(&b, "vb", &[3, 4]),
                    b.dcbx("vb")["control"]["ack"] == a.dcbx("va")["control"]["seq"],
                ];
                if std::env::var_os("BENCH_DEBUG").is_some() {
                    eprintln!("{:?} {c:?}", t0.elapsed());
                }
                c.iter().all(|x| *x)
            });
            match ok {
                Some(_) => wall.push(t0.elapsed().as_secs_f64() * 1e3),
                None => println!("restart: run did not re-converge in 10 s"),
            }
            if std::env::var_os("BENCH_DEBUG").is_some()
                && t0.elapsed() > Duration::from_millis(100)
            {
                let tail = |log: String| {
                    let lines: Vec<&str> = log.lines().collect();
                    lines[lines.len().saturating_sub(40)..].join("\n")
                };
                eprintln!("slow run; A:\n{}\nB:\n{}", tail(a.log()), tail(b.log()));
            }
        }
        let how = if kill9 { "kill -9" } else { "SIGTERM" };
        stats(
            &format!("restart after {how}: start to re-agreed on both ends"),
            wall,
        );
    }
}

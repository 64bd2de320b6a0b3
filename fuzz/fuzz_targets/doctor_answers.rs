//! `lossless doctor`'s reading of the daemon's answers: any bytes as a JSON object
//! {"status", "dcbx", "headroom", "pfc", "neighbors"} (each a control-socket `result`),
//! read for the first port `status` names; what reads is judged (every check of
//! `lossless_node::doctor`) with the host's facts unread. And every string in it as a
//! driver statistic's name for the per-priority discard counters. No panic; every
//! check comes back, in order, with a fix unless ok.
#![no_main]
use libfuzzer_sys::fuzz_target;
use lossless_node::doctor::{
    check_port, discard_priority, Daemon, DaemonPort, PortFacts, Status, CHECKS,
};
use lossless_node::roce::{HostRoce, Reading};
use serde_json::Value;

fn strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(v) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let mut names = Vec::new();
    strings(&v, &mut names);
    for n in &names {
        if let Some(p) = discard_priority(n) {
            assert!(p < 8, "{n}");
        }
    }
    let port = v["status"]["ports"][0]["port"].as_str().unwrap_or("p0");
    let daemon = match DaemonPort::from_answers(
        port,
        String::new(),
        &v["status"],
        &v["dcbx"],
        v.get("headroom"),
        v.get("pfc"),
        v.get("neighbors"),
    ) {
        Ok(d) => Daemon::Port(Box::new(d)),
        Err(why) => Daemon::Without {
            why: why.to_string(),
            fix: String::new(),
        },
    };
    let facts = PortFacts {
        port: port.to_string(),
        sysfs: "/sys".into(),
        host: HostRoce::default(),
        nic: Reading::Failed("not read".into()),
        mtu: Reading::Failed("not read".into()),
        stats: Reading::Value(names.iter().map(|n| (n.to_string(), 1)).collect()),
        daemon,
        given: None,
    };
    let checks = check_port(&facts);
    assert_eq!(checks.len(), CHECKS.len());
    for (c, name) in checks.iter().zip(CHECKS) {
        assert_eq!(c.check, name);
        assert_eq!(c.fix.is_none(), c.status == Status::Ok, "{c:?}");
    }
});

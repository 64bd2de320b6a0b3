#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! The control socket's framing as a client meets it (lossless_node::framing, run by
//! losslessd): every bad line is answered and the connection goes on, requests sent
//! together are answered in order, an overlong line is answered and the connection goes
//! on, and a last line without its newline still runs.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use common::*;
use serde_json::Value;

fn daemon() -> (lossless_testkit::Pair, TempDir, Daemon) {
    let pair = lossless_testkit::Pair::down();
    let dir = TempDir::new();
    let d = Daemon::start(&pair.a, &dir.path().join("a"), &["--interface", "va"]);
    (pair, dir, d)
}

fn connect(d: &Daemon) -> (UnixStream, BufReader<UnixStream>) {
    let s = UnixStream::connect(&d.socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let r = BufReader::new(s.try_clone().unwrap());
    (s, r)
}

fn reply(r: &mut BufReader<UnixStream>) -> Value {
    let mut line = String::new();
    let n = r.read_line(&mut line).unwrap();
    assert!(n > 0, "the daemon closed the connection without a reply");
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
}

fn error_message(v: &Value) -> &str {
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["error"]["kind"], "bad_request", "{v}");
    v["error"]["message"].as_str().unwrap()
}

/// Fails on the code before the framing moved into lossless-node: the daemon read
/// lines as UTF-8 and closed the connection on any other byte, without a reply.
#[test]
fn a_line_that_is_not_utf8_is_answered_and_the_connection_goes_on() {
    if !require(
        "a_line_that_is_not_utf8_is_answered_and_the_connection_goes_on",
        &[Oracle::Netns],
    ) {
        return;
    }
    let (_pair, _dir, d) = daemon();
    let (mut s, mut r) = connect(&d);
    s.write_all(b"{\"command\":\"status\xff\"}\n").unwrap();
    let v = reply(&mut r);
    assert_eq!(
        error_message(&v),
        "request line is not UTF-8 (invalid byte 0xff at offset 18)"
    );
    s.write_all(b"{\"command\":\"status\"}\n").unwrap();
    let v = reply(&mut r);
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["result"]["ports"][0]["port"], "va", "{v}");
}

#[test]
fn requests_sent_together_are_answered_in_order_bad_ones_included() {
    if !require(
        "requests_sent_together_are_answered_in_order_bad_ones_included",
        &[Oracle::Netns],
    ) {
        return;
    }
    let (_pair, _dir, d) = daemon();
    let (mut s, mut r) = connect(&d);
    s.write_all(
        b"{\"command\":\"status\"}\n{\"command\":\"nope\"}\n\n{\"command\":\"counters\"}\r\n",
    )
    .unwrap();
    assert_eq!(reply(&mut r)["ok"], true);
    assert!(error_message(&reply(&mut r))
        .starts_with("request is not a valid command: unknown variant `nope`"));
    assert!(error_message(&reply(&mut r)).starts_with("request is not a valid command: EOF"));
    let v = reply(&mut r);
    assert_eq!(v["ok"], true, "{v}");
    // The last line may come without its newline when the client closes its side.
    s.write_all(b"{\"command\":\"status\"}").unwrap();
    s.shutdown(Shutdown::Write).unwrap();
    assert_eq!(reply(&mut r)["ok"], true);
    let mut rest = String::new();
    r.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "", "nothing after the last reply");
}

/// Fails on the code before: the daemon answered an overlong line, then closed the
/// connection.
#[test]
fn an_overlong_line_is_answered_and_the_connection_goes_on() {
    if !require(
        "an_overlong_line_is_answered_and_the_connection_goes_on",
        &[Oracle::Netns],
    ) {
        return;
    }
    let (_pair, _dir, d) = daemon();
    let (mut s, mut r) = connect(&d);
    // More than the limit, answered at once; more of the same line after the answer,
    // dropped as it comes; then the next request, answered.
    s.write_all(&vec![b' '; 64 * 1024 + 1000]).unwrap();
    assert_eq!(
        error_message(&reply(&mut r)),
        "request line longer than 64 KiB (65536 bytes, newline included): skipped to its end"
    );
    s.write_all(&vec![b' '; 3 * 64 * 1024]).unwrap();
    s.write_all(b"\n{\"command\":\"status\"}\n").unwrap();
    let v = reply(&mut r);
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["result"]["ports"][0]["port"], "va", "{v}");
}

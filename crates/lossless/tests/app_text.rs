#![allow(clippy::unwrap_used)]
//! What a person reads is written one way everywhere: an APP entry as `udp 4791
//! (RoCEv2) -> 3` (decimal, the protocol's or the DSCP's name, an Ethertype in hex)
//! in decode, the lab's timeline and table, and the configuration `profile` writes
//! (`dcbx show` is checked against a running daemon in losslessd's cli_ieee test);
//! a PGID of 15 the same in the lab's timeline and its table.

mod common;

use common::{decode, lldp_frame, reference_cee, run, stdout, write_pcap};

fn lab(scenario: &str) -> String {
    let out = run(&["lab", "--scenario", scenario]);
    assert_eq!(out.status.code(), Some(0));
    stdout(&out)
}

/// The lab's two views of one APP table, the timeline's frame and the final
/// table's operational row, print it alike.
#[test]
fn lab_timeline_and_table_print_app_entries_one_way() {
    let ieee = lab("ieee");
    let want = "dscp 26 (AF31) -> 3, udp 4791 (RoCEv2) -> 3";
    assert!(ieee.contains(&format!("| APP {want}")), "{ieee}");
    assert!(ieee.contains(&format!("oper     {want}")), "{ieee}");

    let cee = lab("willing");
    let want = "ethertype 0x8906 (FCoE) -> 3, port 4791 (RoCEv2) -> 4";
    assert!(cee.contains(&format!("app[en] {want}")), "{cee}");
    let table_row = cee
        .lines()
        .find(|l| l.starts_with("  app "))
        .unwrap_or_else(|| panic!("no app row:\n{cee}"));
    assert!(table_row.contains(want), "{table_row}");
}

/// PGID 15 (strict priority) is `s` in both the timeline and the table.
#[test]
fn lab_timeline_and_table_print_pgid_15_one_way() {
    let cee = lab("willing");
    let timeline = cee
        .lines()
        .find_map(|l| l.split("pg[en] ").nth(1))
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("no pg in the timeline:\n{cee}"));
    let table = cee
        .lines()
        .find_map(|l| l.split("pgid ").nth(1))
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("no pgid in the table:\n{cee}"));
    assert_eq!(timeline, "000111s2");
    assert_eq!(table, timeline);
}

#[test]
fn decode_prints_app_entries_one_way() {
    let path = write_pcap("app-text.pcap", &[lldp_frame(Some(reference_cee()))]);
    let text = stdout(&decode(&path, false));
    assert!(
        text.contains("entry         ethertype 0x8906 (FCoE) -> 3\n"),
        "{text}"
    );
    assert!(
        text.contains("entry         port 3260 (iSCSI) -> 4\n"),
        "{text}"
    );
}

#[test]
fn profile_comments_print_app_entries_one_way() {
    let text = stdout(&run(&["profile", "roce"]));
    for want in [
        "# dscp 26 (AF31) -> 3: RoCEv2 data",
        "# dscp 48 (CS6) -> 6: CNP",
        "# udp 4791 (RoCEv2) -> 3: RoCEv2 by UDP port",
    ] {
        assert!(text.contains(want), "{want}:\n{text}");
    }
}

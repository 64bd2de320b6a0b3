#![allow(clippy::unwrap_used)]
//! The web configuration's reader against exporter-toolkit's own, `promtool check
//! web-config`: web configurations generated from every value of every key (good,
//! bad, and those lossless refuses on purpose), alone and in seeded random
//! combinations, must be taken by both or refused by both, except where lossless is
//! stricter by design (docs/operations.md: what rustls does not do), where it must
//! refuse and promtool take.
//!
//! Debian 12's promtool (2.42) predates `rate_limit` and `client_allowed_sans`: those
//! keys are checked by losslessd's own tests only.

use std::path::Path;

use lossless_testkit::certs::{Ca, San};
use lossless_testkit::{require, Oracle, TempDir};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// One key's possible values: the lines it adds (none: the key absent), and whether
/// lossless refuses it on purpose where Go takes it.
struct Value {
    lines: &'static str,
    stricter: bool,
}

const fn v(lines: &'static str) -> Value {
    Value {
        lines,
        stricter: false,
    }
}

const fn strict(lines: &'static str) -> Value {
    Value {
        lines,
        stricter: true,
    }
}

/// The keys of `tls_server_config`, each with its values; the first is the one a
/// case uses when it varies another key.
fn tls_keys() -> Vec<(&'static str, Vec<Value>)> {
    vec![
        (
            "cert",
            vec![
                v("  cert_file: server.crt\n"),
                v("  cert_file: missing.crt\n"),
                v("  cert_file: garbage.crt\n"),
                v("  cert_file: server.key\n"),
                v(""),
            ],
        ),
        (
            "key",
            vec![
                v("  key_file: server.key\n"),
                v("  key_file: other.key\n"),
                v("  key_file: server.crt\n"),
                v("  key_file: missing.key\n"),
                v(""),
            ],
        ),
        (
            "client_auth_type",
            vec![
                v(""),
                v("  client_auth_type: NoClientCert\n"),
                v("  client_auth_type: RequireAndVerifyClientCert\n"),
                v("  client_auth_type: VerifyClientCertIfGiven\n"),
                strict("  client_auth_type: RequireAnyClientCert\n"),
                strict("  client_auth_type: RequestClientCert\n"),
                v("  client_auth_type: Sometimes\n"),
            ],
        ),
        (
            "client_ca_file",
            vec![
                v(""),
                v("  client_ca_file: ca.crt\n"),
                v("  client_ca_file: missing-ca.crt\n"),
                v("  client_ca_file: garbage.crt\n"),
            ],
        ),
        (
            "min_version",
            vec![
                v(""),
                v("  min_version: TLS12\n"),
                v("  min_version: TLS13\n"),
                strict("  min_version: TLS11\n"),
                strict("  min_version: TLS10\n"),
                v("  min_version: TLS14\n"),
            ],
        ),
        (
            "max_version",
            vec![
                v(""),
                v("  max_version: TLS13\n"),
                v("  max_version: TLS12\n"),
                v("  max_version: SSL3\n"),
            ],
        ),
        (
            "cipher_suites",
            vec![
                v(""),
                v("  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256]\n"),
                v("  cipher_suites:\n    - TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384\n    - TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256\n"),
                v("  cipher_suites: [TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305]\n"),
                strict("  cipher_suites: [TLS_RSA_WITH_AES_128_GCM_SHA256]\n"),
                strict("  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA]\n"),
                v("  cipher_suites: [TLS_NOT_A_SUITE]\n"),
            ],
        ),
        (
            "curve_preferences",
            vec![
                v(""),
                v("  curve_preferences: [X25519, CurveP256]\n"),
                strict("  curve_preferences: [CurveP521]\n"),
                v("  curve_preferences: [Curve25519]\n"),
            ],
        ),
        (
            "prefer_server_cipher_suites",
            vec![
                v(""),
                v("  prefer_server_cipher_suites: false\n"),
                v("  prefer_server_cipher_suites: maybe\n"),
            ],
        ),
    ]
}

/// The keys outside `tls_server_config`.
fn other_keys(hash: &str) -> Vec<(&'static str, Vec<Value>)> {
    let users: &'static str =
        Box::leak(format!("basic_auth_users:\n  prometheus: {hash}\n").into_boxed_str());
    vec![
        (
            "basic_auth_users",
            vec![
                v(""),
                v(users),
                v("basic_auth_users:\n  prometheus: secret\n"),
                v("basic_auth_users:\n  prometheus: $2y$10$tooshort\n"),
                v("basic_auth_users:\n  prometheus: [a, b]\n"),
            ],
        ),
        (
            "http_server_config",
            vec![
                v(""),
                v("http_server_config:\n  http2: false\n"),
                v("http_server_config:\n  headers:\n    X-Frame-Options: deny\n    X-Content-Type-Options: nosniff\n"),
                v("http_server_config:\n  headers:\n    X-Frame-Options: allow-from\n"),
                v("http_server_config:\n  headers:\n    X-Content-Type-Options: sniff\n"),
                v("http_server_config:\n  headers:\n    Set-Cookie: a=b\n"),
                v("http_server_config:\n  http2: 3\n"),
            ],
        ),
        (
            "extra",
            vec![
                v(""),
                v("tls_server_confg:\n  cert_file: server.crt\n"),
                v("basic_auth_users:\n  a: b\nbasic_auth_users:\n  c: d\n"),
            ],
        ),
    ]
}

/// A web configuration from one value index per key (TLS keys first), and whether
/// lossless refuses it on purpose.
fn compose(
    tls: &[(&str, Vec<Value>)],
    other: &[(&str, Vec<Value>)],
    pick: &[usize],
) -> (String, bool) {
    let mut stricter = false;
    let mut tls_text = String::new();
    for ((_, values), &i) in tls.iter().zip(pick) {
        tls_text.push_str(values[i].lines);
        stricter |= values[i].stricter && !values[i].lines.is_empty();
    }
    // A verifying client_auth_type without client CAs: Go falls back to the system's
    // CAs, lossless refuses.
    let verifying = tls_text.contains("client_auth_type: RequireAndVerifyClientCert")
        || tls_text.contains("client_auth_type: VerifyClientCertIfGiven");
    stricter |= verifying && !tls_text.contains("client_ca_file:");
    let mut text = String::new();
    if !tls_text.is_empty() {
        text.push_str("tls_server_config:\n");
        text.push_str(&tls_text);
    }
    for ((_, values), &i) in other.iter().zip(&pick[tls.len()..]) {
        text.push_str(values[i].lines);
        stricter |= values[i].stricter;
    }
    (text, stricter)
}

fn promtool_takes(file: &Path) -> (bool, String) {
    let out = std::process::Command::new("promtool")
        .args(["check", "web-config"])
        .arg(file)
        .output()
        .unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn losslessd_and_promtool_agree_on_generated_web_configurations() {
    if !require(
        "losslessd_and_promtool_agree_on_generated_web_configurations",
        &[Oracle::Promtool],
    ) {
        return;
    }
    let dir = TempDir::new();
    let ca = Ca::new(dir.path(), "ca", "oracle CA");
    ca.issue(dir.path(), "server", &[San::Dns("localhost")], true);
    ca.issue(dir.path(), "other", &[San::Dns("localhost")], true);
    std::fs::write(
        dir.path().join("garbage.crt"),
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let hash = bcrypt::hash("pw", 4).unwrap();
    let tls = tls_keys();
    let other = other_keys(&hash);
    let keys = tls.len() + other.len();
    let sizes: Vec<usize> = tls
        .iter()
        .chain(other.iter())
        .map(|(_, v)| v.len())
        .collect();

    // Each value of each key, the others at their first; then seeded combinations.
    let mut picks: Vec<Vec<usize>> = Vec::new();
    for k in 0..keys {
        for i in 0..sizes[k] {
            let mut p = vec![0; keys];
            p[k] = i;
            picks.push(p);
        }
    }
    let mut rng = SmallRng::seed_from_u64(0x1055_1e55);
    for _ in 0..120 {
        picks.push(sizes.iter().map(|&n| rng.gen_range(0..n)).collect());
    }

    let file = dir.path().join("web.yml");
    let mut disagreements = Vec::new();
    let (mut both_take, mut both_refuse, mut stricter_cases) = (0, 0, 0);
    for p in &picks {
        let (text, stricter) = compose(&tls, &other, p);
        std::fs::write(&file, &text).unwrap();
        let ours = losslessd::web_config::load(&file);
        let (theirs, said) = promtool_takes(&file);
        match (ours.is_ok(), theirs, stricter) {
            (true, true, false) => both_take += 1,
            (false, false, _) => both_refuse += 1,
            (false, true, true) => stricter_cases += 1,
            _ => disagreements.push(format!(
                "--- lossless {} (stricter by design: {stricter}), promtool {}:\n{text}lossless: {}\npromtool: {said}",
                if ours.is_ok() { "takes" } else { "refuses" },
                if theirs { "takes" } else { "refuses" },
                ours.as_ref().err().map(ToString::to_string).unwrap_or_default(),
            )),
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} of {} web configurations read differently:\n{}",
        disagreements.len(),
        picks.len(),
        disagreements.join("\n")
    );
    // The generator reaches all three outcomes, not one.
    assert!(
        both_take >= 10 && both_refuse >= 10 && stricter_cases >= 5,
        "taken {both_take}, refused {both_refuse}, stricter {stricter_cases}"
    );
}

/// examples/web-config.yml, beside a certificate and key of the names it
/// gives, is taken by promtool and by losslessd alike; with its client-certificate
/// lines uncommented (and the fleet CA they name) too, apart from client_allowed_sans,
/// which Debian 12's promtool predates.
#[test]
fn the_example_web_configuration_is_taken_by_promtool_and_losslessd() {
    if !require(
        "the_example_web_configuration_is_taken_by_promtool_and_losslessd",
        &[Oracle::Promtool],
    ) {
        return;
    }
    let example = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/web-config.yml"),
    )
    .unwrap();
    let dir = TempDir::new();
    let ca = Ca::new(dir.path(), "fleet-ca", "fleet CA");
    ca.issue(
        dir.path(),
        "host",
        &[San::Dns("host-a.fleet.example")],
        true,
    );
    let file = dir.path().join("web.yml");
    let client_certs = example
        .replace("  # client_auth_type:", "  client_auth_type:")
        .replace("  # client_ca_file:", "  client_ca_file:");
    for text in [example.as_str(), client_certs.as_str()] {
        std::fs::write(&file, text).unwrap();
        let (theirs, said) = promtool_takes(&file);
        assert!(theirs, "promtool: {said}\n{text}");
        let ours = losslessd::web_config::load(&file).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert!(ours.tls.is_some() && ours.auth.is_some());
    }
    assert_ne!(
        example, client_certs,
        "the example's client-certificate lines moved"
    );
}

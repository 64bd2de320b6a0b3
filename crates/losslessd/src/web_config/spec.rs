//! The web configuration's keys and what each may hold, checked without reading any
//! other file (exporter-toolkit's `docs/web-configuration.md` is the format; its
//! `web/tls_config.go` the rules this follows: a cert without its key, client CAs
//! without a policy that uses them, a policy that needs CAs without them, are each
//! refused).

use std::time::Duration;

use super::yaml::{self, Key, Node, Value};

const TOP_KEYS: &[&str] = &[
    "tls_server_config",
    "http_server_config",
    "basic_auth_users",
    "rate_limit",
];
const TLS_KEYS: &[&str] = &[
    "cert",
    "key",
    "client_ca",
    "cert_file",
    "key_file",
    "client_auth_type",
    "client_ca_file",
    "client_allowed_sans",
    "min_version",
    "max_version",
    "cipher_suites",
    "prefer_server_cipher_suites",
    "curve_preferences",
];
const HTTP_KEYS: &[&str] = &["http2", "headers"];
const RATE_KEYS: &[&str] = &["interval", "burst"];

/// A mistake in the text, at its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    pub line: usize,
    pub what: String,
}

/// The web configuration as written.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WebSpec {
    pub tls: Option<TlsSpec>,
    /// `http_server_config.http2` (the endpoint speaks HTTP/1.1 whatever it says: a
    /// client negotiates the version, and Prometheus falls back to HTTP/1.1).
    pub http2: bool,
    /// Response headers (`http_server_config.headers`), in the file's order.
    pub headers: Vec<(String, String)>,
    pub users: Vec<UserSpec>,
    pub rate_limit: Option<RateLimit>,
}

/// PEM given in the file or a file named by it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pem {
    Inline { text: String, line: usize },
    File { path: String, line: usize },
}

impl Pem {
    pub fn line(&self) -> usize {
        match self {
            Pem::Inline { line, .. } | Pem::File { line, .. } => *line,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct TlsSpec {
    pub cert: Pem,
    pub key: Pem,
    pub client_ca: Option<Pem>,
    pub client_auth: ClientAuth,
    pub client_allowed_sans: Vec<String>,
    pub min_version: TlsVersion,
    pub max_version: TlsVersion,
    /// TLS 1.2 suites by Go's names, each known to rustls; empty: rustls's defaults.
    pub cipher_suites: Vec<String>,
    pub prefer_server_cipher_suites: bool,
    /// Key exchange groups by Go's names; empty: rustls's defaults.
    pub curve_preferences: Vec<Curve>,
    pub line: usize,
}

/// Go's `tls.ClientAuthType` values that verify what the client sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    NoClientCert,
    VerifyClientCertIfGiven,
    RequireAndVerifyClientCert,
}

impl ClientAuth {
    pub fn word(self) -> &'static str {
        match self {
            ClientAuth::NoClientCert => "NoClientCert",
            ClientAuth::VerifyClientCertIfGiven => "VerifyClientCertIfGiven",
            ClientAuth::RequireAndVerifyClientCert => "RequireAndVerifyClientCert",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsVersion {
    Tls12,
    Tls13,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Curve {
    X25519,
    P256,
    P384,
}

/// One `basic_auth_users` entry: the name and its bcrypt hash, which parses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserSpec {
    pub name: String,
    pub hash: String,
    pub line: usize,
}

/// `rate_limit`: one request per `interval`, bursts of `burst`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub interval: Duration,
    pub burst: u32,
}

/// The TLS 1.2 suites rustls implements, by the names Go and exporter-toolkit give them
/// (rustls's own names are the IANA ones, which Go's `tls.CipherSuites()` follow; Go's
/// short ChaCha20 aliases are not in that list, and exporter-toolkit refuses them too).
/// TLS 1.3's suites are listed by Go but are not configurable there either: taken,
/// with no effect.
pub const TLS12_SUITES: &[&str] = &[
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
];
const TLS13_SUITES: &[&str] = &[
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
];

fn err(line: usize, what: impl Into<String>) -> SpecError {
    SpecError {
        line,
        what: what.into(),
    }
}

/// Reads a web configuration's text.
pub fn parse(text: &str) -> Result<WebSpec, SpecError> {
    let root = yaml::parse(text).map_err(|e| err(e.line, e.what))?;
    let mut spec = WebSpec {
        http2: true,
        ..WebSpec::default()
    };
    if root.is_null() {
        return Ok(spec);
    }
    for (key, value) in entries(&root, "the file")? {
        if value.is_null() {
            continue;
        }
        match key.name.as_str() {
            "tls_server_config" => spec.tls = tls(key, value)?,
            "http_server_config" => http(value, &mut spec)?,
            "basic_auth_users" => spec.users = users(value)?,
            "rate_limit" => spec.rate_limit = rate_limit(key, value)?,
            _ => return Err(unknown(key, "at the top", TOP_KEYS)),
        }
    }
    Ok(spec)
}

fn unknown(key: &Key, place: &str, known: &[&str]) -> SpecError {
    err(
        key.line,
        format!(
            "unknown key {:?} {place} (known: {})",
            key.name,
            known.join(", ")
        ),
    )
}

fn entries<'a>(n: &'a Node, what: &str) -> Result<&'a [(Key, Node)], SpecError> {
    match &n.value {
        Value::Map(m) => Ok(m),
        _ => Err(err(n.line, format!("{what} must be a map of keys"))),
    }
}

fn string(key: &Key, n: &Node) -> Result<String, SpecError> {
    match &n.value {
        Value::Scalar { text, .. } => Ok(text.clone()),
        _ => Err(err(n.line, format!("{} must be a string", key.name))),
    }
}

fn boolean(key: &Key, n: &Node) -> Result<bool, SpecError> {
    match &n.value {
        Value::Scalar {
            text,
            quoted: false,
        } if text == "true" => Ok(true),
        Value::Scalar {
            text,
            quoted: false,
        } if text == "false" => Ok(false),
        _ => Err(err(n.line, format!("{} must be true or false", key.name))),
    }
}

fn strings(key: &Key, n: &Node) -> Result<Vec<(String, usize)>, SpecError> {
    match &n.value {
        Value::Seq(items) => items
            .iter()
            .map(|i| string(key, i).map(|s| (s, i.line)))
            .collect(),
        _ => Err(err(
            n.line,
            format!("{} must be a list of strings", key.name),
        )),
    }
}

fn tls(at: &Key, n: &Node) -> Result<Option<TlsSpec>, SpecError> {
    let mut cert = None;
    let mut key = None;
    let mut client_ca = None;
    let mut cert_file = None;
    let mut key_file = None;
    let mut client_ca_file = None;
    let mut client_auth = (ClientAuth::NoClientCert, at.line);
    let mut sans = Vec::new();
    let mut min = (TlsVersion::Tls12, at.line);
    let mut max = (TlsVersion::Tls13, at.line);
    let mut suites = Vec::new();
    let mut prefer = true;
    let mut curves = Vec::new();
    let mut any = false;
    for (k, v) in entries(n, "tls_server_config")? {
        if v.is_null() {
            continue;
        }
        any = true;
        let line = k.line;
        match k.name.as_str() {
            "cert" => {
                cert = Some(Pem::Inline {
                    text: string(k, v)?,
                    line,
                })
            }
            "key" => {
                key = Some(Pem::Inline {
                    text: string(k, v)?,
                    line,
                })
            }
            "client_ca" => {
                client_ca = Some(Pem::Inline {
                    text: string(k, v)?,
                    line,
                })
            }
            "cert_file" => {
                cert_file = Some(Pem::File {
                    path: file(k, v)?,
                    line,
                })
            }
            "key_file" => {
                key_file = Some(Pem::File {
                    path: file(k, v)?,
                    line,
                })
            }
            "client_ca_file" => {
                client_ca_file = Some(Pem::File {
                    path: file(k, v)?,
                    line,
                })
            }
            "client_auth_type" => client_auth = (client_auth_type(k, v)?, line),
            "client_allowed_sans" => {
                sans = strings(k, v)?.into_iter().map(|(s, _)| s).collect();
            }
            "min_version" => min = (version(k, v)?, line),
            "max_version" => max = (version(k, v)?, line),
            "cipher_suites" => {
                for (s, line) in strings(k, v)? {
                    if TLS12_SUITES.contains(&s.as_str()) {
                        suites.push(s);
                    } else if !TLS13_SUITES.contains(&s.as_str()) {
                        return Err(err(
                            line,
                            format!(
                                "cipher suite {s:?} is not one lossless (rustls) implements; \
                                 TLS 1.2 suites: {}",
                                TLS12_SUITES.join(", ")
                            ),
                        ));
                    }
                }
            }
            "prefer_server_cipher_suites" => prefer = boolean(k, v)?,
            "curve_preferences" => {
                for (s, line) in strings(k, v)? {
                    curves.push(match s.as_str() {
                        "X25519" => Curve::X25519,
                        "CurveP256" => Curve::P256,
                        "CurveP384" => Curve::P384,
                        _ => {
                            return Err(err(
                                line,
                                format!(
                                    "curve {s:?} is not one lossless (rustls) implements: \
                                     X25519, CurveP256, CurveP384"
                                ),
                            ))
                        }
                    });
                }
            }
            _ => return Err(unknown(k, "in tls_server_config", TLS_KEYS)),
        }
    }
    if !any {
        return Ok(None);
    }
    let one = |inline: Option<Pem>, file: Option<Pem>, a: &str, b: &str| match (inline, file) {
        (Some(i), Some(_)) => Err(err(i.line(), format!("{a} and {b} are both set: give one"))),
        (i, f) => Ok(i.or(f)),
    };
    let cert = one(cert, cert_file, "cert", "cert_file")?;
    let key = one(key, key_file, "key", "key_file")?;
    let client_ca = one(client_ca, client_ca_file, "client_ca", "client_ca_file")?;
    let (Some(cert), Some(key)) = (cert, key) else {
        return Err(err(
            at.line,
            "tls_server_config needs the server's certificate and key (cert_file and \
             key_file, or cert and key)",
        ));
    };
    match (client_auth.0, &client_ca) {
        (ClientAuth::NoClientCert, Some(ca)) => {
            return Err(err(
                ca.line(),
                "client CAs are set but client_auth_type is NoClientCert: no client \
                 certificate would be asked for (set client_auth_type: \
                 RequireAndVerifyClientCert)",
            ))
        }
        (ClientAuth::RequireAndVerifyClientCert | ClientAuth::VerifyClientCertIfGiven, None) => {
            // Go would verify against the system's CAs: a certificate any public CA
            // issued to anyone would pass.
            return Err(err(
                client_auth.1,
                format!(
                    "client_auth_type {} verifies client certificates against \
                     client_ca_file (or client_ca), which is not set (the system's CAs, \
                     which exporters fall back to, would take a certificate any public \
                     CA issued to anyone)",
                    client_auth.0.word()
                ),
            ));
        }
        _ => {}
    }
    if !sans.is_empty() && client_auth.0 != ClientAuth::RequireAndVerifyClientCert {
        return Err(err(
            at.line,
            "client_allowed_sans needs client_auth_type RequireAndVerifyClientCert: \
             otherwise a client without a certificate has no SAN to match",
        ));
    }
    if min.0 > max.0 {
        return Err(err(
            min.1,
            "min_version is above max_version: no TLS version is left",
        ));
    }
    Ok(Some(TlsSpec {
        cert,
        key,
        client_ca,
        client_auth: client_auth.0,
        client_allowed_sans: sans,
        min_version: min.0,
        max_version: max.0,
        cipher_suites: suites,
        prefer_server_cipher_suites: prefer,
        curve_preferences: curves,
        line: at.line,
    }))
}

fn file(k: &Key, v: &Node) -> Result<String, SpecError> {
    let s = string(k, v)?;
    if s.contains('\0') {
        return Err(err(k.line, format!("{} cannot contain NUL", k.name)));
    }
    Ok(s)
}

fn client_auth_type(k: &Key, v: &Node) -> Result<ClientAuth, SpecError> {
    let s = string(k, v)?;
    Ok(match s.as_str() {
        "NoClientCert" => ClientAuth::NoClientCert,
        "VerifyClientCertIfGiven" => ClientAuth::VerifyClientCertIfGiven,
        "RequireAndVerifyClientCert" => ClientAuth::RequireAndVerifyClientCert,
        "RequestClientCert" | "RequireAnyClientCert" => {
            return Err(err(
                k.line,
                format!(
                    "client_auth_type {s} takes a client certificate without verifying it, \
                     which authenticates no one; lossless refuses it: use \
                     RequireAndVerifyClientCert with client_ca_file"
                ),
            ))
        }
        _ => {
            return Err(err(
                k.line,
                format!(
                    "client_auth_type {s:?} is not one of NoClientCert, \
                     VerifyClientCertIfGiven, RequireAndVerifyClientCert"
                ),
            ))
        }
    })
}

fn version(k: &Key, v: &Node) -> Result<TlsVersion, SpecError> {
    let s = string(k, v)?;
    match s.as_str() {
        "TLS12" => Ok(TlsVersion::Tls12),
        "TLS13" => Ok(TlsVersion::Tls13),
        "TLS10" | "TLS11" => Err(err(
            k.line,
            format!(
                "{} {s}: lossless (rustls) speaks TLS 1.2 and 1.3 only; use TLS12",
                k.name
            ),
        )),
        _ => Err(err(
            k.line,
            format!("{} {s:?} is not one of TLS12, TLS13", k.name),
        )),
    }
}

/// exporter-toolkit's `web/handler.go` `validateHeaderConfig`: these headers, these
/// values.
const HEADERS: &[&str] = &[
    "Strict-Transport-Security",
    "X-Content-Type-Options",
    "X-Frame-Options",
    "X-XSS-Protection",
    "Content-Security-Policy",
];

fn http(n: &Node, spec: &mut WebSpec) -> Result<(), SpecError> {
    for (k, v) in entries(n, "http_server_config")? {
        if v.is_null() {
            continue;
        }
        match k.name.as_str() {
            "http2" => spec.http2 = boolean(k, v)?,
            "headers" => {
                for (h, value) in entries(v, "headers")? {
                    if value.is_null() {
                        continue;
                    }
                    let Some(name) = HEADERS.iter().find(|n| n.eq_ignore_ascii_case(&h.name))
                    else {
                        return Err(err(
                            h.line,
                            format!(
                                "header {:?} cannot be set here (these can: {})",
                                h.name,
                                HEADERS.join(", ")
                            ),
                        ));
                    };
                    let value = string(h, value)?;
                    if value.chars().any(|c| c.is_control()) {
                        return Err(err(
                            h.line,
                            format!("{name}'s value holds a control character"),
                        ));
                    }
                    let ok = match *name {
                        "X-Content-Type-Options" => value.eq_ignore_ascii_case("nosniff"),
                        "X-Frame-Options" => {
                            value.eq_ignore_ascii_case("deny")
                                || value.eq_ignore_ascii_case("sameorigin")
                        }
                        _ => true,
                    };
                    if !ok {
                        return Err(err(
                            h.line,
                            format!("{name} {value:?} is not a value it takes"),
                        ));
                    }
                    if !value.is_empty() {
                        spec.headers.push((name.to_string(), value));
                    }
                }
            }
            _ => return Err(unknown(k, "in http_server_config", HTTP_KEYS)),
        }
    }
    Ok(())
}

fn users(n: &Node) -> Result<Vec<UserSpec>, SpecError> {
    let mut out = Vec::new();
    for (k, v) in entries(n, "basic_auth_users")? {
        if k.name.contains(':') {
            return Err(err(
                k.line,
                format!(
                    "user {:?}: a user name cannot contain ':' (basic authentication splits \
                     name and password at the first one)",
                    k.name
                ),
            ));
        }
        if k.name.is_empty() {
            return Err(err(k.line, "a user name cannot be empty"));
        }
        let hash = string(k, v)?;
        match hash.parse::<bcrypt::HashParts>() {
            Ok(p) if (4..=31).contains(&p.get_cost()) => {}
            Ok(p) => {
                return Err(err(
                    v.line,
                    format!(
                        "user {:?}: bcrypt cost {} is out of range 4..=31",
                        k.name,
                        p.get_cost()
                    ),
                ))
            }
            Err(e) => {
                return Err(err(
                    v.line,
                    format!(
                        "user {:?}: not a bcrypt hash ({e}); make one with \
                         `htpasswd -nBC 10 \"\" | tr -d ':\\n'`",
                        k.name
                    ),
                ))
            }
        }
        out.push(UserSpec {
            name: k.name.clone(),
            hash,
            line: k.line,
        });
    }
    Ok(out)
}

fn rate_limit(at: &Key, n: &Node) -> Result<Option<RateLimit>, SpecError> {
    let mut interval = None;
    let mut burst = None;
    for (k, v) in entries(n, "rate_limit")? {
        if v.is_null() {
            continue;
        }
        match k.name.as_str() {
            "interval" => {
                let s = string(k, v)?;
                interval = Some(go_duration(&s).map_err(|why| {
                    err(v.line, format!("interval {s:?} is not a duration ({why})"))
                })?);
            }
            "burst" => {
                let s = string(k, v)?;
                burst =
                    Some(s.parse::<u32>().map_err(|_| {
                        err(v.line, format!("burst {s:?} is not a count of requests"))
                    })?);
            }
            _ => return Err(unknown(k, "in rate_limit", RATE_KEYS)),
        }
    }
    match (interval, burst) {
        (None, _) | (Some(Duration::ZERO), _) => Ok(None),
        (Some(_), None | Some(0)) => Err(err(
            at.line,
            "rate_limit needs a burst of at least 1 with a non-zero interval (no request \
             would ever pass)",
        )),
        (Some(interval), Some(burst)) => Ok(Some(RateLimit { interval, burst })),
    }
}

/// A duration as Go's `time.ParseDuration` and Prometheus's model.Duration write it:
/// numbers (decimals taken) each followed by a unit, `1m30s`, `500ms`, `0`.
pub fn go_duration(s: &str) -> Result<Duration, String> {
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err("empty".to_string());
    }
    let mut rest = s;
    let mut total = 0f64;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or("a number without a unit")?;
        let (num, tail) = rest.split_at(n);
        let value: f64 = num
            .parse()
            .map_err(|_| format!("{num:?} is not a number"))?;
        let u = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(u);
        let scale = match unit {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            "d" => 86400.0,
            _ => return Err(format!("unknown unit {unit:?} (ns, us, ms, s, m, h, d)")),
        };
        total += value * scale;
        rest = tail;
    }
    if !total.is_finite() || total > 1e9 {
        return Err("too long".to_string());
    }
    Ok(Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "$2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze";

    #[test]
    fn exporter_toolkits_sample_reads() {
        let text = format!(
            "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n\
             basic_auth_users:\n  alice: {HASH}\n\
             rate_limit:\n  interval: \"1s\"\n  burst: 20\n"
        );
        let spec = parse(&text).expect("the sample reads");
        let tls = spec.tls.expect("tls");
        assert_eq!(
            tls.cert,
            Pem::File {
                path: "server.crt".into(),
                line: 2
            }
        );
        assert_eq!(tls.client_auth, ClientAuth::NoClientCert);
        assert_eq!(spec.users[0].name, "alice");
        assert_eq!(
            spec.rate_limit,
            Some(RateLimit {
                interval: Duration::from_secs(1),
                burst: 20
            })
        );
        assert!(spec.http2);
    }

    #[test]
    fn each_mistake_is_named_at_its_line() {
        for (text, line, words) in [
            ("tls_server_config:\n  cert_file: a\n", 1, "needs the server's certificate and key"),
            ("tls_server_config:\n  cert_fil: a\n", 2, "unknown key \"cert_fil\""),
            ("basic_auth_users:\n  alice: secret\n", 2, "not a bcrypt hash"),
            ("basic_auth_users:\n  \"a:b\": x\n", 2, "cannot contain ':'"),
            ("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAnyClientCert\n", 4, "without verifying"),
            ("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAndVerifyClientCert\n", 4, "client_ca_file"),
            ("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: c\n", 4, "NoClientCert"),
            ("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS10\n", 4, "TLS 1.2 and 1.3 only"),
            ("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS13\n  max_version: TLS12\n", 4, "no TLS version"),
            ("tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites:\n    - TLS_RSA_WITH_AES_128_CBC_SHA\n", 5, "rustls"),
            ("tls_server_config:\n  cert_file: a\n  key_file: b\n  curve_preferences: [CurveP521]\n", 4, "curve"),
            ("http_server_config:\n  headers:\n    X-Frame-Options: allow\n", 3, "not a value"),
            ("http_server_config:\n  headers:\n    Set-Cookie: a\n", 3, "cannot be set"),
            ("http_server_config:\n  http2: yes\n", 2, "true or false"),
            ("rate_limit:\n  interval: 1x\n  burst: 2\n", 2, "unknown unit"),
            ("rate_limit:\n  interval: 1s\n", 1, "burst"),
            ("basic_auth_user:\n  a: b\n", 1, "unknown key"),
            ("- a\n", 1, "map"),
        ] {
            let e = parse(text).expect_err(text);
            assert_eq!(e.line, line, "{text:?}: {e:?}");
            assert!(e.what.contains(words), "{text:?}: {e:?}");
        }
    }

    #[test]
    fn go_durations_read_as_go_reads_them() {
        assert_eq!(go_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(go_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(go_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(go_duration("0"), Ok(Duration::ZERO));
        for bad in ["", "s", "1", "1s2", "-1s", "1e3s"] {
            assert!(go_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn empty_and_null_sections_set_nothing() {
        let spec = parse("tls_server_config:\nbasic_auth_users: {}\n").expect("reads");
        assert_eq!(spec.tls, None);
        assert!(spec.users.is_empty());
        assert_eq!(parse("").expect("empty"), parse("{}").expect("{}"));
    }
}

//! The metrics endpoint's web configuration: TLS, client certificates, basic
//! authentication, response headers and a rate limit, in the file format the
//! Prometheus exporters share (exporter-toolkit's `--web.config.file`, YAML), so the
//! file a fleet already deploys for node_exporter serves losslessd too.
//!
//! [`parse`] reads the text (no I/O; its fuzz target is `web_config`); [`load`] reads
//! the file and the certificates and keys it names (relative paths from the file's
//! directory, as exporter-toolkit resolves them) and builds what the endpoint serves
//! with. Every mistake is named at `file:line` with the reason; nothing is served from
//! a file that does not load.
//!
//! Where rustls cannot do what a Go exporter can (TLS 1.0/1.1, CBC and RSA key
//! exchange suites, P-521, and `client_auth_type`s that take a certificate without
//! verifying it) the key is refused with that reason rather than quietly weakened or
//! ignored.

pub mod auth;
pub mod spec;
pub mod tls;
pub mod yaml;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

pub use spec::{parse, Pem, RateLimit, WebSpec};

/// The longest web configuration read (a file is a few hundred bytes; inline PEM a few
/// kilobytes).
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// A web configuration that does not load: the file (and line, when the mistake has
/// one) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {what}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct WebConfigError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub what: String,
}

/// What the endpoint serves with, built from one reading of the file.
pub struct WebConfig {
    pub path: PathBuf,
    pub spec: WebSpec,
    /// The TLS server configuration, when `tls_server_config` is set.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// The users of `basic_auth_users`, when any.
    pub auth: Option<auth::Users>,
    /// When the server certificate stops being valid (seconds since the epoch).
    pub cert_not_after: Option<i64>,
    /// The files read, and how each looked: a change to any is a new reading.
    pub fingerprint: Fingerprint,
}

impl WebConfig {
    /// Whether it protects the endpoint: TLS or basic authentication (a non-loopback
    /// address is served only then).
    pub fn protects(&self) -> bool {
        self.tls.is_some() || self.auth.is_some()
    }

    /// One line for the log: what protects the endpoint.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(t) = &self.spec.tls {
            parts.push(format!(
                "TLS (client certificates: {})",
                t.client_auth.word()
            ));
        }
        if let Some(a) = &self.auth {
            let n = a.len();
            parts.push(format!(
                "basic authentication ({n} user{})",
                if n == 1 { "" } else { "s" }
            ));
        }
        if let Some(r) = &self.spec.rate_limit {
            parts.push(format!(
                "rate limit (one request per {:?}, burst {})",
                r.interval, r.burst
            ));
        }
        if parts.is_empty() {
            "no TLS and no authentication".to_string()
        } else {
            parts.join(", ")
        }
    }
}

/// The files a web configuration was built from, each with its modification time,
/// length and inode.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fingerprint(Vec<(PathBuf, Option<Look>)>);

/// How a file looked: modification time, length, inode.
type Look = (SystemTime, u64, u64);

impl Fingerprint {
    fn of(paths: Vec<PathBuf>) -> Fingerprint {
        let seen = paths
            .into_iter()
            .map(|p| {
                let meta = look(&p);
                (p, meta)
            })
            .collect();
        Fingerprint(seen)
    }

    /// The same files as they look now.
    pub fn now(&self) -> Fingerprint {
        Fingerprint::of(self.0.iter().map(|(p, _)| p.clone()).collect())
    }

    /// Whether any of the files looks different now (changed, replaced, removed).
    pub fn changed(&self) -> bool {
        self.0.iter().any(|(p, was)| look(p) != *was)
    }
}

fn look(p: &Path) -> Option<Look> {
    use std::os::unix::fs::MetadataExt;
    let m = fs::metadata(p).ok()?;
    Some((m.modified().ok()?, m.len(), m.ino()))
}

/// Reads and checks the web configuration at `path`, the certificates and keys it
/// names, and builds the endpoint's TLS and users from them.
pub fn load(path: &Path) -> Result<WebConfig, WebConfigError> {
    let fail = |line: Option<usize>, what: String| WebConfigError {
        file: path.to_path_buf(),
        line,
        what,
    };
    let text = read_limited(path).map_err(|what| fail(None, what))?;
    let spec = parse(&text).map_err(|e| fail(Some(e.line), e.what))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut files = vec![path.to_path_buf()];
    let (tls, cert_not_after) = match &spec.tls {
        Some(t) => {
            let built = tls::build(t, dir, &mut files).map_err(|e| match e.file {
                Some(file) => WebConfigError {
                    file,
                    line: None,
                    what: format!("{} (named at {}:{})", e.what, path.display(), e.line),
                },
                None => fail(Some(e.line), e.what),
            })?;
            (Some(built.config), built.not_after)
        }
        None => (None, None),
    };
    let auth = (!spec.users.is_empty()).then(|| auth::Users::new(&spec.users));
    Ok(WebConfig {
        path: path.to_path_buf(),
        spec,
        tls,
        auth,
        cert_not_after,
        fingerprint: Fingerprint::of(files),
    })
}

/// A file's text, at most [`MAX_FILE_BYTES`], as UTF-8.
pub(crate) fn read_limited(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let f = fs::File::open(path).map_err(|e| format!("cannot read it: {e}"))?;
    let mut bytes = Vec::new();
    f.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("longer than {MAX_FILE_BYTES} bytes"));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (byte {} is not)",
            e.utf8_error().valid_up_to()
        )
    })
}

//! The TLS side of a web configuration: the server's certificate and key, the client
//! CAs and policy, versions, suites and groups, built into a rustls server
//! configuration (ring's primitives).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::WebPkiClientVerifier;
use rustls::{DigitallySignedStruct, DistinguishedName, RootCertStore, SignatureScheme};

use super::spec::{ClientAuth, Curve, Pem, TlsSpec, TlsVersion};

/// A TLS setting that does not build: the line that names it and, when the fault is
/// in a file it names, that file.
#[derive(Debug)]
pub struct TlsError {
    pub line: usize,
    pub file: Option<PathBuf>,
    pub what: String,
}

pub struct Built {
    pub config: Arc<rustls::ServerConfig>,
    /// The server certificate's notAfter, seconds since the epoch.
    pub not_after: Option<i64>,
}

/// The PEM text a setting gives, read from its file (relative to `dir`) or inline.
fn pem_text(
    p: &Pem,
    dir: &Path,
    files: &mut Vec<PathBuf>,
) -> Result<(String, Option<PathBuf>), TlsError> {
    match p {
        Pem::Inline { text, .. } => Ok((text.clone(), None)),
        Pem::File { path, line } => {
            let full = dir.join(path);
            files.push(full.clone());
            let text = super::read_limited(&full).map_err(|what| TlsError {
                line: *line,
                file: Some(full.clone()),
                what,
            })?;
            Ok((text, Some(full)))
        }
    }
}

fn fault(p: &Pem, file: &Option<PathBuf>, what: String) -> TlsError {
    TlsError {
        line: p.line(),
        file: file.clone(),
        what,
    }
}

fn certificates(
    p: &Pem,
    dir: &Path,
    files: &mut Vec<PathBuf>,
    what: &str,
) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let (text, file) = pem_text(p, dir, files)?;
    let certs = CertificateDer::pem_slice_iter(text.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| fault(p, &file, format!("{what}: not PEM ({e})")))?;
    if certs.is_empty() {
        return Err(fault(p, &file, format!("{what}: no PEM CERTIFICATE block")));
    }
    for (i, c) in certs.iter().enumerate() {
        if let Err(e) = x509_parser::parse_x509_certificate(c) {
            return Err(fault(
                p,
                &file,
                format!("{what}: certificate {} does not parse ({e})", i + 1),
            ));
        }
    }
    Ok(certs)
}

/// ring's primitives with the suites and groups the file asks for.
pub fn provider(spec: &TlsSpec) -> CryptoProvider {
    let mut p = ring::default_provider();
    if !spec.cipher_suites.is_empty() {
        // The listed TLS 1.2 suites, in the file's order (the server's preference when
        // prefer_server_cipher_suites); TLS 1.3's are not configurable, as in Go.
        let all = p.cipher_suites.clone();
        let mut chosen: Vec<_> = spec
            .cipher_suites
            .iter()
            .filter_map(|name| {
                all.iter()
                    .find(|s| format!("{:?}", s.suite()) == *name)
                    .copied()
            })
            .collect();
        chosen.extend(
            all.iter()
                .filter(|s| s.version() == &rustls::version::TLS13)
                .copied(),
        );
        p.cipher_suites = chosen;
    }
    if !spec.curve_preferences.is_empty() {
        p.kx_groups = spec
            .curve_preferences
            .iter()
            .map(|c| match c {
                Curve::X25519 => ring::kx_group::X25519,
                Curve::P256 => ring::kx_group::SECP256R1,
                Curve::P384 => ring::kx_group::SECP384R1,
            })
            .collect();
    }
    p
}

/// Builds the server configuration; the certificate and key files it reads are added
/// to `files`.
pub fn build(spec: &TlsSpec, dir: &Path, files: &mut Vec<PathBuf>) -> Result<Built, TlsError> {
    let chain = certificates(&spec.cert, dir, files, "the server certificate")?;
    let (key_text, key_file) = pem_text(&spec.key, dir, files)?;
    let key = PrivateKeyDer::from_pem_slice(key_text.as_bytes()).map_err(|e| {
        fault(
            &spec.key,
            &key_file,
            format!(
                "the server key: no unencrypted PEM private key (PKCS#8, PKCS#1 or SEC1) ({e})"
            ),
        )
    })?;
    let provider = Arc::new(provider(spec));
    let signing = provider
        .key_provider
        .load_private_key(key.clone_key())
        .map_err(|e| {
            fault(
                &spec.key,
                &key_file,
                format!("the server key does not load ({e})"),
            )
        })?;
    let certified = rustls::sign::CertifiedKey::new(chain.clone(), signing);
    if let Err(e) = certified.keys_match() {
        if !matches!(
            e,
            rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)
        ) {
            return Err(fault(
                &spec.key,
                &key_file,
                format!("the server key is not the server certificate's ({e})"),
            ));
        }
    }
    let not_after = chain
        .first()
        .and_then(|c| x509_parser::parse_x509_certificate(c).ok())
        .map(|(_, c)| c.validity().not_after.timestamp());

    let versions: Vec<&'static rustls::SupportedProtocolVersion> = [
        (TlsVersion::Tls12, &rustls::version::TLS12),
        (TlsVersion::Tls13, &rustls::version::TLS13),
    ]
    .into_iter()
    .filter(|(v, _)| (spec.min_version..=spec.max_version).contains(v))
    .map(|(_, p)| p)
    .collect();
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| TlsError {
            line: spec.line,
            file: None,
            what: format!("the versions, suites and curves chosen leave nothing to speak ({e})"),
        })?;
    let verifier: Option<Arc<dyn ClientCertVerifier>> = match (&spec.client_ca, spec.client_auth) {
        (
            Some(ca),
            ClientAuth::VerifyClientCertIfGiven | ClientAuth::RequireAndVerifyClientCert,
        ) => {
            let certs = certificates(ca, dir, files, "the client CA")?;
            let mut roots = RootCertStore::empty();
            for c in certs {
                roots.add(c).map_err(|e| {
                    fault(
                        ca,
                        &None,
                        format!("the client CA is not a CA certificate rustls takes ({e})"),
                    )
                })?;
            }
            let mut b =
                WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone());
            if spec.client_auth == ClientAuth::VerifyClientCertIfGiven {
                b = b.allow_unauthenticated();
            }
            let v = b
                .build()
                .map_err(|e| fault(ca, &None, format!("the client CA: {e}")))?;
            Some(if spec.client_allowed_sans.is_empty() {
                v
            } else {
                Arc::new(AllowedSans {
                    inner: v,
                    allowed: spec.client_allowed_sans.clone(),
                })
            })
        }
        _ => None,
    };
    let builder = match verifier {
        Some(v) => builder.with_client_cert_verifier(v),
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_single_cert(chain, key).map_err(|e| {
        fault(
            &spec.key,
            &key_file,
            format!("the server certificate and key: {e}"),
        )
    })?;
    config.ignore_client_order = spec.prefer_server_cipher_suites;
    Ok(Built {
        config: Arc::new(config),
        not_after,
    })
}

/// The client certificate must carry one of these SANs (DNS, IP, e-mail or URI), as
/// exporter-toolkit's `client_allowed_sans`; checked after the chain verifies, so the
/// handshake fails with a certificate alert.
struct AllowedSans {
    inner: Arc<dyn ClientCertVerifier>,
    allowed: Vec<String>,
}

impl fmt::Debug for AllowedSans {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AllowedSans")
            .field("allowed", &self.allowed)
            .finish()
    }
}

/// The SANs of a certificate, as Go prints them (an IP as its text form).
pub fn sans(der: &[u8]) -> Vec<String> {
    use x509_parser::extensions::GeneralName;
    let Ok((_, cert)) = x509_parser::parse_x509_certificate(der) else {
        return Vec::new();
    };
    let Ok(Some(ext)) = cert.subject_alternative_name() else {
        return Vec::new();
    };
    ext.value
        .general_names
        .iter()
        .filter_map(|n| match n {
            GeneralName::DNSName(s) | GeneralName::RFC822Name(s) | GeneralName::URI(s) => {
                Some(s.to_string())
            }
            GeneralName::IPAddress(b) => match b.len() {
                4 => <[u8; 4]>::try_from(*b)
                    .ok()
                    .map(|a| std::net::IpAddr::from(a).to_string()),
                16 => <[u8; 16]>::try_from(*b)
                    .ok()
                    .map(|a| std::net::IpAddr::from(a).to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

impl ClientCertVerifier for AllowedSans {
    fn offer_client_auth(&self) -> bool {
        self.inner.offer_client_auth()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.inner.client_auth_mandatory()
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        let ok = self
            .inner
            .verify_client_cert(end_entity, intermediates, now)?;
        if sans(end_entity).iter().any(|s| self.allowed.contains(s)) {
            Ok(ok)
        } else {
            Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::ApplicationVerificationFailure,
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

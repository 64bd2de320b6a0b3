//! Certificates a test makes: a CA of its own, a server certificate for the addresses
//! and names a client will use, client certificates with the SANs a test needs, each
//! written as PEM into a directory (rcgen, ECDSA P-256).

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType,
};

/// A certificate authority; it signs the certificates below.
pub struct Ca {
    cert: rcgen::Certificate,
    key: KeyPair,
    /// Where its certificate is (PEM).
    pub cert_path: PathBuf,
}

/// A certificate and its key, as PEM files.
#[derive(Debug, Clone)]
pub struct Issued {
    pub cert_path: PathBuf,
    pub key_path: PathBuf,
    pub cert_pem: String,
    pub key_pem: String,
}

/// A SAN: an IP address, a DNS name, an e-mail address or a URI.
#[derive(Debug, Clone)]
pub enum San {
    Ip(IpAddr),
    Dns(&'static str),
    Email(&'static str),
    Uri(&'static str),
}

fn san(s: &San) -> SanType {
    match s {
        San::Ip(ip) => SanType::IpAddress(*ip),
        San::Dns(d) => SanType::DnsName((*d).try_into().expect("a DNS name")),
        San::Email(e) => SanType::Rfc822Name((*e).try_into().expect("an e-mail address")),
        San::Uri(u) => SanType::URI((*u).try_into().expect("a URI")),
    }
}

fn named(cn: &str) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, cn);
    dn
}

impl Ca {
    /// A new CA named `cn`, its certificate written to `dir/<file>.crt`.
    pub fn new(dir: &Path, file: &str, cn: &str) -> Ca {
        let mut params = CertificateParams::default();
        params.distinguished_name = named(cn);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("a CA key");
        let cert = params.self_signed(&key).expect("the CA certificate");
        let cert_path = dir.join(format!("{file}.crt"));
        std::fs::write(&cert_path, cert.pem()).expect("write the CA certificate");
        Ca {
            cert,
            key,
            cert_path,
        }
    }

    /// A certificate for `sans`, signed by this CA, for a server (`server`) or a
    /// client; written to `dir/<file>.crt` and `dir/<file>.key`.
    pub fn issue(&self, dir: &Path, file: &str, sans: &[San], server: bool) -> Issued {
        let mut params = CertificateParams::default();
        params.distinguished_name = named(file);
        params.subject_alt_names = sans.iter().map(san).collect();
        params.extended_key_usages = vec![if server {
            ExtendedKeyUsagePurpose::ServerAuth
        } else {
            ExtendedKeyUsagePurpose::ClientAuth
        }];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        let key = KeyPair::generate().expect("a key");
        let cert = params
            .signed_by(&key, &self.cert, &self.key)
            .expect("a signed certificate");
        let issued = Issued {
            cert_path: dir.join(format!("{file}.crt")),
            key_path: dir.join(format!("{file}.key")),
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        };
        std::fs::write(&issued.cert_path, &issued.cert_pem).expect("write the certificate");
        std::fs::write(&issued.key_path, &issued.key_pem).expect("write the key");
        issued
    }
}

//! Basic authentication against `basic_auth_users`' bcrypt hashes.
//!
//! As exporter-toolkit does: a name that is not a user is checked against a fixed hash
//! all the same (the answer takes as long, so it does not tell which names exist), and
//! a name and password that passed are remembered (by their SHA-256 with the hash, not
//! in clear), so a scraper does not pay bcrypt's cost on every scrape. Failures are
//! not remembered; bcrypt runs on the blocking pool, [`MAX_VERIFYING`] at a time, so
//! guessing cannot take the runtime's thread.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine as _;

use super::spec::UserSpec;

/// bcrypt checks running at once; more wait.
pub const MAX_VERIFYING: usize = 2;
/// Successes remembered; the set is emptied when it is full.
pub const REMEMBERED: usize = 256;

/// Checked when the name is not a user's (cost 10, as a user's hash usually is).
const DUMMY: &str = "$2b$10$BKUq/ObQps0n/RMNndqpnOyaRs2//VjTK./FCKe4wA6cxpR/7fFVS";

#[derive(Clone)]
pub struct Users(Arc<Inner>);

struct Inner {
    hashes: HashMap<String, String>,
    passed: Mutex<HashSet<[u8; 32]>>,
    verifying: tokio::sync::Semaphore,
}

/// What a request's `Authorization` header came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Allowed,
    /// No header, not Basic, not base64, or no ':'.
    Missing,
    /// A name and password that do not match.
    Denied,
}

impl Users {
    pub fn new(users: &[UserSpec]) -> Users {
        Users(Arc::new(Inner {
            hashes: users
                .iter()
                .map(|u| (u.name.clone(), u.hash.clone()))
                .collect(),
            passed: Mutex::new(HashSet::new()),
            verifying: tokio::sync::Semaphore::new(MAX_VERIFYING),
        }))
    }

    pub fn len(&self) -> usize {
        self.0.hashes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.hashes.is_empty()
    }

    /// Checks an `Authorization` header's value.
    pub async fn check(&self, authorization: Option<&str>) -> Verdict {
        let Some((name, password)) = authorization.and_then(credentials) else {
            return Verdict::Missing;
        };
        let hash = self.0.hashes.get(&name).cloned();
        let key = remembered_key(&name, &password, hash.as_deref().unwrap_or(DUMMY));
        if hash.is_some() && self.lock().contains(&key) {
            return Verdict::Allowed;
        }
        let Ok(_permit) = self.0.verifying.acquire().await else {
            return Verdict::Denied;
        };
        let target = hash.clone().unwrap_or_else(|| DUMMY.to_string());
        let ok = tokio::task::spawn_blocking(move || bcrypt::verify(password, &target))
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or(false);
        if ok && hash.is_some() {
            let mut passed = self.lock();
            if passed.len() >= REMEMBERED {
                passed.clear();
            }
            passed.insert(key);
            Verdict::Allowed
        } else {
            Verdict::Denied
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<[u8; 32]>> {
        self.0.passed.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn remembered_key(name: &str, password: &str, hash: &str) -> [u8; 32] {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    for part in [name, password, hash] {
        ctx.update(&(part.len() as u64).to_be_bytes());
        ctx.update(part.as_bytes());
    }
    let mut out = [0u8; 32];
    out.copy_from_slice(ctx.finish().as_ref());
    out
}

/// The name and password of a `Basic` credential (RFC 7617): base64 of `name:password`,
/// split at the first ':'.
pub fn credentials(value: &str) -> Option<(String, String)> {
    let (scheme, token) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(token.trim())
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let (name, password) = text.split_once(':')?;
    Some((name.to_string(), password.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(name: &str, password: &str) -> String {
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{name}:{password}"))
        )
    }

    #[test]
    fn the_dummy_hash_is_a_hash_and_matches_no_password_a_test_tries() {
        assert!(DUMMY.parse::<bcrypt::HashParts>().is_ok());
        assert_eq!(bcrypt::verify("", DUMMY).ok(), Some(false));
    }

    #[test]
    fn credentials_split_at_the_first_colon() {
        assert_eq!(
            credentials(&header("alice", "a:b")),
            Some(("alice".into(), "a:b".into()))
        );
        assert_eq!(credentials("Bearer abc"), None);
        assert_eq!(credentials("Basic !!!"), None);
        assert_eq!(credentials("Basic YWxpY2U="), None, "no colon");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn only_the_right_password_passes_and_a_pass_is_remembered() {
        let hash = bcrypt::hash("s3cret", 4).expect("hash");
        let users = Users::new(&[UserSpec {
            name: "alice".into(),
            hash,
            line: 1,
        }]);
        assert_eq!(users.check(None).await, Verdict::Missing);
        assert_eq!(
            users.check(Some(&header("alice", "wrong"))).await,
            Verdict::Denied
        );
        assert_eq!(
            users.check(Some(&header("bob", "s3cret"))).await,
            Verdict::Denied
        );
        assert_eq!(
            users.check(Some(&header("alice", "s3cret"))).await,
            Verdict::Allowed
        );
        assert_eq!(users.lock().len(), 1);
        assert_eq!(
            users.check(Some(&header("alice", "s3cret"))).await,
            Verdict::Allowed
        );
        assert_eq!(users.lock().len(), 1);
    }
}

//! Reading and writing one attribute file as the kernel's show and store functions
//! expect: the whole value in one `write(2)`, never creating a file.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use lossless_node::hardware::{HardwareError, HardwareErrorKind};
use lossless_node::roce::Reading;
use lossless_sys::dcbnl::errno_name;

/// An I/O error on `path` as the node core counts it: its kind, the errno's name.
pub fn io_error(what: &str, path: &Path, e: &io::Error) -> HardwareError {
    let code = e.raw_os_error();
    let kind = match code {
        Some(libc::ENOENT | libc::EOPNOTSUPP) => HardwareErrorKind::NotSupported,
        Some(libc::EPERM | libc::EACCES | libc::EROFS) => HardwareErrorKind::Permission,
        Some(libc::ENODEV | libc::ENXIO | libc::EIO) => HardwareErrorKind::NoDevice,
        Some(libc::EINVAL | libc::ERANGE) => HardwareErrorKind::Refused,
        Some(libc::EBUSY | libc::EAGAIN) => HardwareErrorKind::Busy,
        _ => HardwareErrorKind::Other,
    };
    HardwareError {
        kind,
        message: format!("{what} {}: {e}", path.display()),
        code: code.map(errno_name),
    }
}

/// A setting the host does not have.
pub fn not_exposed(message: String) -> HardwareError {
    HardwareError {
        kind: HardwareErrorKind::NotSupported,
        message,
        code: None,
    }
}

/// An attribute file that exists and could not be read.
#[derive(Debug, thiserror::Error)]
#[error("reading {}: {source}", path.display())]
pub struct ReadError {
    pub path: PathBuf,
    pub source: io::Error,
}

/// The file's text without its trailing newline; None: there is no such file.
pub fn read_text(path: &Path) -> Option<Result<String, ReadError>> {
    match std::fs::read_to_string(path) {
        Ok(t) => Some(Ok(t.trim_end_matches('\n').to_string())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(source) => Some(Err(ReadError {
            path: path.to_path_buf(),
            source,
        })),
    }
}

/// A number 0..=255 in a file; None: there is no such file.
pub fn read_u8_at(path: &Path, what: &str) -> Option<Reading<u8>> {
    Some(match read_text(path)? {
        Ok(t) => match crate::parse::u8_value(&t) {
            Ok(v) => Reading::Value(v),
            Err(e) => Reading::Failed(format!("{} ({what}): {e}", path.display())),
        },
        Err(e) => Reading::Failed(e.to_string()),
    })
}

/// Writes `value` and a newline to an existing attribute, in one write.
pub fn write(path: &Path, value: &str) -> Result<(), HardwareError> {
    let mut f = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => not_exposed(format!(
                "{} does not exist: the driver does not expose it",
                path.display()
            )),
            _ => io_error("opening", path, &e),
        })?;
    let text = format!("{value}\n");
    match f.write(text.as_bytes()) {
        Ok(n) if n == text.len() => Ok(()),
        Ok(n) => Err(HardwareError {
            kind: HardwareErrorKind::Other,
            message: format!(
                "writing {value:?} to {}: the kernel took {n} of {} bytes",
                path.display(),
                text.len()
            ),
            code: None,
        }),
        Err(e) => Err(io_error(&format!("writing {value:?} to"), path, &e)),
    }
}

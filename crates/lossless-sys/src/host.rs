//! Who the host is: `uname(2)`, for the LLDP System Name and System Description.

use std::io;

/// What `uname(2)` says (each field as text, lossily).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uname {
    /// The kernel's name (`Linux`).
    pub sysname: String,
    /// The host name (the UTS namespace's).
    pub nodename: String,
    /// The kernel release (`6.1.0-18-amd64`).
    pub release: String,
    /// The kernel's build (`#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)`).
    pub version: String,
    /// The hardware (`x86_64`).
    pub machine: String,
}

/// `uname(2)`.
pub fn uname() -> io::Result<Uname> {
    // SAFETY: utsname is plain data (arrays of c_char); zero is a valid value.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: uname writes into the struct we pass, which lives for the call.
    crate::sys::cvt(unsafe { libc::uname(&mut u) })?;
    let text = |field: &[libc::c_char]| {
        // The kernel NUL-terminates each field; a field without NUL is taken whole.
        let bytes: Vec<u8> = field
            .iter()
            .map(|&c| c as u8)
            .take_while(|&b| b != 0)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Ok(Uname {
        sysname: text(&u.sysname),
        nodename: text(&u.nodename),
        release: text(&u.release),
        version: text(&u.version),
        machine: text(&u.machine),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    #[test]
    fn uname_says_linux_and_the_hostname() {
        let u = super::uname().unwrap();
        assert_eq!(u.sysname, "Linux");
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        assert_eq!(u.nodename, hostname.trim_end());
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
        assert_eq!(u.release, release.trim_end());
        assert!(!u.machine.is_empty());
    }
}

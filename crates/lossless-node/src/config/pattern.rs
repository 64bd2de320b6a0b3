//! Which interfaces a `[ports."..."]` section is for: one exact name, or a
//! glob where `*` matches any run of characters and `?` exactly one.

/// The longest interface name Linux accepts (IFNAMSIZ - 1).
pub const IFNAME_MAX: usize = 15;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pattern {
    Exact(String),
    Glob(Vec<char>),
}

/// Why a name cannot be an interface's, or a pattern cannot match one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InterfaceNameError {
    #[error("an interface name cannot be empty")]
    Empty,
    #[error("{0:?} cannot appear in an interface name (no '/', ':', NUL or white space)")]
    Character(char),
    #[error("{0:?} cannot be an interface name")]
    Dots(String),
    #[error("an interface name has at most {IFNAME_MAX} bytes, this one has {0}")]
    TooLong(usize),
    /// A pattern with a wildcard other than `*` and `?`.
    #[error("{0:?} is not supported in an interface pattern: only * and ? are wildcards")]
    Wildcard(char),
    /// A pattern every match of which would be too long.
    #[error("matches no interface: every match would be longer than {IFNAME_MAX} bytes")]
    MatchesNone,
}

impl Pattern {
    /// Reads a section name. Names must be possible Linux interface names
    /// ([`check_interface_name`]), globs must be able to match one.
    pub fn parse(name: &str) -> Result<Pattern, InterfaceNameError> {
        check_characters(name)?;
        if let Some(c) = name
            .chars()
            .find(|&c| matches!(c, '[' | ']' | '{' | '}' | '\\'))
        {
            return Err(InterfaceNameError::Wildcard(c));
        }
        if !name.contains(['*', '?']) {
            check_interface_name(name)?;
            return Ok(Pattern::Exact(name.to_string()));
        }
        // The fewest bytes a match can have: every literal plus one per '?'.
        let shortest: usize = name
            .chars()
            .map(|c| match c {
                '*' => 0,
                '?' => 1,
                c => c.len_utf8(),
            })
            .sum();
        if shortest > IFNAME_MAX {
            return Err(InterfaceNameError::MatchesNone);
        }
        Ok(Pattern::Glob(name.chars().collect()))
    }

    pub fn is_glob(&self) -> bool {
        matches!(self, Pattern::Glob(_))
    }

    pub fn matches(&self, ifname: &str) -> bool {
        match self {
            Pattern::Exact(name) => name == ifname,
            Pattern::Glob(p) => glob_match(p, &ifname.chars().collect::<Vec<_>>()),
        }
    }
}

/// Whether the kernel can have an interface called `name` (what its `dev_valid_name`
/// accepts): 1 to [`IFNAME_MAX`] bytes, not `.` or `..`, no '/', ':', NUL or white
/// space. The one rule for the file's sections, `losslessd --interface` and the relay's
/// interfaces.
pub fn check_interface_name(name: &str) -> Result<(), InterfaceNameError> {
    check_characters(name)?;
    if name == "." || name == ".." {
        return Err(InterfaceNameError::Dots(name.to_string()));
    }
    if name.len() > IFNAME_MAX {
        return Err(InterfaceNameError::TooLong(name.len()));
    }
    Ok(())
}

/// Not empty, and no character the kernel refuses anywhere in a name.
fn check_characters(name: &str) -> Result<(), InterfaceNameError> {
    if name.is_empty() {
        return Err(InterfaceNameError::Empty);
    }
    match name
        .chars()
        .find(|&c| c == '/' || c == ':' || c == '\0' || c.is_whitespace())
    {
        Some(c) => Err(InterfaceNameError::Character(c)),
        None => Ok(()),
    }
}

/// Wildcard matching with one backtrack point: on a mismatch, the last `*`
/// swallows one more character. Linear in practice, O(len(p) * len(s)) at worst.
fn glob_match(p: &[char], s: &[char]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, si));
                pi += 1;
            }
            Some(&c) if c == '?' || c == s[si] => {
                pi += 1;
                si += 1;
            }
            _ => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::Pattern;

    fn m(p: &str, s: &str) -> bool {
        Pattern::parse(p).expect("valid pattern").matches(s)
    }

    #[test]
    fn exact_names() {
        assert!(m("eth0", "eth0"));
        assert!(!m("eth0", "eth01"));
        assert!(!m("eth0", "eth"));
        assert!(!Pattern::parse("eth0").expect("valid").is_glob());
    }

    #[test]
    fn star_and_question_mark() {
        assert!(m("swp*", "swp"));
        assert!(m("swp*", "swp12"));
        assert!(!m("swp*", "sw"));
        assert!(!m("swp*", "eth0"));
        assert!(m("*", ""));
        assert!(m("*", "anything"));
        assert!(m("eth?", "eth1"));
        assert!(!m("eth?", "eth"));
        assert!(!m("eth?", "eth12"));
        assert!(m("*s*p*", "swp1"));
        assert!(m("en*s?f*", "enp3s0f1"));
        assert!(!m("en*s?f*", "enp3s0"));
        assert!(m("a*a*a*b", "aaaaaaab"));
        assert!(!m("a*a*a*b", "aaaaaaa"));
        assert!(m("**", "x"));
        assert!(m("*1", "swp11"));
        assert!(m("é?", "éa"));
    }

    #[test]
    fn refused_names() {
        for bad in [
            "", "eth/0", "eth 0", "eth:0", ".", "..", "swp[1-4]", "sw{p}", "a\\*",
        ] {
            assert!(Pattern::parse(bad).is_err(), "{bad:?} accepted");
        }
        assert!(Pattern::parse("abcdefghijklmno").is_ok());
        assert!(Pattern::parse("abcdefghijklmnop").is_err());
        assert!(Pattern::parse("abcdefghijklmno*").is_ok());
        assert!(Pattern::parse("abcdefghijklmno?").is_err());
    }
}

//! The control socket's framing, sans-IO: the bytes a client sent in, one item per line
//! out (a request to run, or the error to answer). losslessd reads each connection into
//! a [`LineFramer`] and answers what comes out; the fuzz target `control_framing` feeds
//! it any bytes in any cuts.
//!
//! A line is at most [`MAX_LINE`] bytes with its newline; it must be UTF-8 and hold one
//! JSON request ([`Request`], `\r\n` accepted). A line that is not a request is answered
//! with a `bad_request` error and the connection goes on. So is a line longer than
//! [`MAX_LINE`]: it is answered as soon as the limit is passed, and what follows up to
//! its newline is dropped as it comes, never held. The last line may lack its newline
//! when the client closes its side.

use crate::protocol::{ErrorKind, Request, Response};

/// The longest request line accepted, newline included: 64 KiB.
pub const MAX_LINE: usize = 64 * 1024;

/// What one line of the connection asks.
#[derive(Debug, Clone, PartialEq)]
pub enum Framed {
    /// A request to run.
    Request(Request),
    /// A line that is not a request, or too long: the error to answer; the connection
    /// goes on.
    Refused(Response),
}

/// The connection's bytes so far, cut into lines. Holds at most one unfinished line
/// (bounded by [`MAX_LINE`]) plus what the caller pushed since the last
/// [`LineFramer::next_line`].
#[derive(Debug, Default, Clone)]
pub struct LineFramer {
    buf: Vec<u8>,
    /// How far `buf` is known to hold no newline.
    scanned: usize,
    /// The current line was too long and answered: drop bytes up to its newline.
    skipping: bool,
}

impl LineFramer {
    pub fn new() -> LineFramer {
        LineFramer::default()
    }

    /// Bytes read from the connection.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes held: the start of a line not yet whole, and what follows it.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The next whole line, framed; None until more bytes come.
    pub fn next_line(&mut self) -> Option<Framed> {
        if self.skipping && !self.skip_to_newline() {
            return None;
        }
        let window = self.buf.len().min(MAX_LINE);
        match self.buf[self.scanned..window]
            .iter()
            .position(|&b| b == b'\n')
        {
            Some(at) => {
                let end = self.scanned + at + 1;
                let line: Vec<u8> = self.buf.drain(..end).collect();
                self.scanned = 0;
                Some(frame(&line))
            }
            None if self.buf.len() >= MAX_LINE => {
                // Answered now; the rest of the line goes as it comes.
                self.buf.drain(..MAX_LINE);
                self.scanned = 0;
                self.skipping = true;
                Some(Framed::Refused(Response::err(
                    ErrorKind::BadRequest,
                    format!(
                        "request line longer than {} KiB ({MAX_LINE} bytes, newline included): \
                         skipped to its end",
                        MAX_LINE / 1024
                    ),
                )))
            }
            None => {
                self.scanned = window;
                None
            }
        }
    }

    /// While skipping an overlong line: drops what is held up to and with its newline;
    /// true when the newline was there (the next line starts).
    fn skip_to_newline(&mut self) -> bool {
        match self.buf.iter().position(|&b| b == b'\n') {
            Some(at) => {
                self.buf.drain(..=at);
                self.skipping = false;
                true
            }
            None => {
                self.buf.clear();
                false
            }
        }
    }

    /// The client closed its side: the last line if it had no newline (None when
    /// nothing is left). Call [`LineFramer::next_line`] until None first.
    pub fn finish(&mut self) -> Option<Framed> {
        if self.skipping || self.buf.is_empty() {
            return None;
        }
        let line = std::mem::take(&mut self.buf);
        self.scanned = 0;
        Some(frame(&line))
    }
}

/// One line (with or without its newline) as a request, or the error it earns.
fn frame(line: &[u8]) -> Framed {
    let text = match std::str::from_utf8(line) {
        Ok(t) => t,
        Err(e) => {
            return Framed::Refused(Response::err(
                ErrorKind::BadRequest,
                format!(
                    "request line is not UTF-8 (invalid byte 0x{:02x} at offset {})",
                    line[e.valid_up_to()],
                    e.valid_up_to()
                ),
            ))
        }
    };
    match serde_json::from_str::<Request>(text.trim_end()) {
        Ok(req) => Framed::Request(req),
        Err(e) => Framed::Refused(Response::err(
            ErrorKind::BadRequest,
            format!("request is not a valid command: {e} (see docs/daemon.md)"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(f: &mut LineFramer) -> Vec<Framed> {
        std::iter::from_fn(|| f.next_line()).collect()
    }

    fn message(item: &Framed) -> String {
        match item {
            Framed::Refused(r) => r
                .error
                .as_ref()
                .map(|e| e.message.clone())
                .unwrap_or_default(),
            Framed::Request(r) => panic!("a request: {r:?}"),
        }
    }

    #[test]
    fn requests_come_out_whole_however_the_bytes_are_cut() {
        let input = b"{\"command\":\"status\"}\n{\"command\":\"reload\"}\r\n";
        let mut whole = LineFramer::new();
        whole.push(input);
        let want = all(&mut whole);
        assert_eq!(
            want,
            [
                Framed::Request(Request::Status),
                Framed::Request(Request::Reload)
            ]
        );
        let mut bytewise = LineFramer::new();
        let mut got = Vec::new();
        for b in input {
            bytewise.push(&[*b]);
            got.extend(all(&mut bytewise));
        }
        assert_eq!(got, want);
        assert_eq!(bytewise.buffered(), 0);
        assert_eq!(bytewise.finish(), None);
    }

    #[test]
    fn a_bad_line_is_answered_and_the_next_one_runs() {
        let mut f = LineFramer::new();
        f.push(b"{\"command\":\"nope\"}\n\xff\xfe\n\n{\"command\":\"status\"}\n");
        let got = all(&mut f);
        assert_eq!(got.len(), 4, "{got:?}");
        assert!(
            message(&got[0]).starts_with("request is not a valid command: unknown variant `nope`"),
            "{got:?}"
        );
        assert_eq!(
            message(&got[1]),
            "request line is not UTF-8 (invalid byte 0xff at offset 0)"
        );
        assert!(message(&got[2]).starts_with("request is not a valid command: EOF"));
        assert_eq!(got[3], Framed::Request(Request::Status));
    }

    #[test]
    fn a_line_of_max_line_bytes_is_framed_one_more_is_too_long() {
        // MAX_LINE bytes with the newline: framed (and refused as JSON).
        let mut f = LineFramer::new();
        let mut line = vec![b' '; MAX_LINE - 1];
        line.push(b'\n');
        f.push(&line);
        f.push(b"{\"command\":\"status\"}\n");
        let got = all(&mut f);
        assert!(matches!(got[0], Framed::Refused(_)), "{:?}", got[0]);
        assert_eq!(got[1], Framed::Request(Request::Status));
        // MAX_LINE bytes without one: too long, answered at once; the rest of the line
        // is dropped as it comes (nothing held), and the next line runs.
        let mut f = LineFramer::new();
        f.push(&vec![b' '; MAX_LINE]);
        let got = all(&mut f);
        assert_eq!(got.len(), 1);
        assert_eq!(
            message(&got[0]),
            "request line longer than 64 KiB (65536 bytes, newline included): skipped to its end"
        );
        assert_eq!(f.buffered(), 0);
        f.push(&vec![b'x'; 3 * MAX_LINE]);
        assert_eq!(f.next_line(), None);
        assert_eq!(f.buffered(), 0);
        assert_eq!(
            f.finish(),
            None,
            "the rest of an overlong line is not a line"
        );
        f.push(b"yy\n{\"command\":\"status\"}\n");
        assert_eq!(all(&mut f), [Framed::Request(Request::Status)]);
        assert_eq!(f.buffered(), 0);
    }

    #[test]
    fn the_last_line_may_lack_its_newline() {
        let mut f = LineFramer::new();
        f.push(b"{\"command\":\"status\"}");
        assert_eq!(f.next_line(), None);
        assert_eq!(f.finish(), Some(Framed::Request(Request::Status)));
        assert_eq!(f.finish(), None);
    }
}

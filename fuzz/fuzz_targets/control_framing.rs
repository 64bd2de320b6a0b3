//! The control socket's framing (`lossless_node::framing`): any bytes, cut into reads at
//! any points, in; no panic; the same items come out however the bytes are cut; the
//! framer never holds more than a line's limit plus the last read; every request that
//! comes out serialises to a line that frames back to the same request.
#![no_main]
use libfuzzer_sys::fuzz_target;
use lossless_node::framing::{Framed, LineFramer, MAX_LINE};

/// Every item, feeding `data` in reads of the sizes `cuts` gives (cycled).
fn frame_all(data: &[u8], cuts: &[u8]) -> Vec<Framed> {
    let mut f = LineFramer::new();
    let mut out = Vec::new();
    let mut at = 0;
    let mut i = 0;
    while at < data.len() {
        let n = cuts.get(i % cuts.len().max(1)).map_or(data.len(), |&c| {
            // Reads of 1..=256 bytes, or a large one now and then.
            if c == 0 {
                MAX_LINE + 1
            } else {
                usize::from(c)
            }
        });
        let end = (at + n).min(data.len());
        f.push(&data[at..end]);
        at = end;
        i += 1;
        while let Some(item) = f.next_line() {
            out.push(item);
        }
        assert!(f.buffered() < MAX_LINE + n.max(1), "held {}", f.buffered());
    }
    out.extend(f.finish());
    out
}

fuzz_target!(|input: &[u8]| {
    // The first bytes choose the cuts, the rest is what the client sent.
    let (cuts, data) = input.split_at(input.len().min(8));
    let cut = frame_all(data, cuts);
    let whole = frame_all(data, &[]);
    assert_eq!(cut, whole);
    for item in &whole {
        if let Framed::Request(req) = item {
            let mut line = serde_json::to_string(req).expect("a request serialises");
            line.push('\n');
            let mut f = LineFramer::new();
            f.push(line.as_bytes());
            assert_eq!(f.next_line(), Some(Framed::Request(req.clone())));
            assert_eq!(f.next_line(), None);
        }
    }
});

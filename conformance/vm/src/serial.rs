//! The guest's report port (its second serial port): event lines and framed files, as
//! `vm-images/init/gatehouse-init` writes them. Anything else on the port is garbage and
//! makes the guest `errored`: a report is taken only when its frame is exact.
//!
//! ```text
//! GATEHOUSE booted 6.1.0-50-cloud-amd64
//! GATEHOUSE file root.json 12345
//! <12345 bytes>
//! GATEHOUSE end root.json
//! ```

use std::collections::BTreeMap;

/// What the port held so far.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Port {
    /// Every event line, without the `GATEHOUSE ` prefix, in order.
    pub events: Vec<String>,
    /// Every complete file by name.
    pub files: BTreeMap<String, Vec<u8>>,
    /// The first thing that is neither (the guest wrote garbage).
    pub garbage: Option<String>,
}

const PREFIX: &[u8] = b"GATEHOUSE ";

impl Port {
    /// Whether an event starting with `word` arrived.
    pub fn has(&self, word: &str) -> bool {
        self.events
            .iter()
            .any(|e| e == word || e.starts_with(&format!("{word} ")))
    }

    /// The events starting with `word `, without it.
    pub fn events_of<'a>(&'a self, word: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.events
            .iter()
            .filter_map(move |e| e.strip_prefix(word).and_then(|r| r.strip_prefix(' ')))
    }
}

/// Parses everything received so far. An incomplete last line or frame is left for later
/// (the guest may still be writing it); `done` says the guest has stopped, so anything
/// incomplete is garbage too.
pub fn parse(bytes: &[u8], done: bool) -> Port {
    let mut port = Port::default();
    let mut at = 0;
    while at < bytes.len() {
        let Some(nl) = bytes[at..].iter().position(|&b| b == b'\n') else {
            if done {
                port.garbage = Some(format!("an unterminated line: {}", show(&bytes[at..])));
            }
            break;
        };
        let line = trim_cr(&bytes[at..at + nl]);
        let next = at + nl + 1;
        if line.is_empty() {
            at = next;
            continue;
        }
        let Some(event) = line.strip_prefix(PREFIX) else {
            port.garbage = Some(format!("not a report line: {}", show(line)));
            break;
        };
        let event = String::from_utf8_lossy(event).into_owned();
        if let Some(rest) = event.strip_prefix("file ") {
            let mut words = rest.split(' ');
            let (Some(name), Some(Ok(len)), None) = (
                words.next(),
                words.next().map(str::parse::<usize>),
                words.next(),
            ) else {
                port.garbage = Some(format!("a bad file header: {event}"));
                break;
            };
            let trailer = format!("\nGATEHOUSE end {name}\n");
            let end = next + len;
            if bytes.len() < end + trailer.len() {
                if done {
                    port.garbage = Some(format!(
                        "{name}: the frame is cut off ({} of {len} bytes)",
                        bytes.len().saturating_sub(next).min(len)
                    ));
                }
                break;
            }
            if &bytes[end..end + trailer.len()] != trailer.as_bytes() {
                port.garbage = Some(format!(
                    "{name}: {len} bytes announced, but no end frame after them"
                ));
                break;
            }
            port.files
                .insert(name.to_string(), bytes[next..end].to_vec());
            at = end + trailer.len();
            continue;
        }
        port.events.push(event);
        at = next;
    }
    port
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn show(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(80)]).into_owned();
    format!("{text:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(name: &str, body: &str) -> String {
        format!(
            "GATEHOUSE file {name} {}\n{body}\nGATEHOUSE end {name}\n",
            body.len()
        )
    }

    #[test]
    fn events_and_exact_frames_are_read() {
        let text = format!(
            "GATEHOUSE booted 6.1.0\nGATEHOUSE probe user=root userns=yes\n{}GATEHOUSE done\n",
            framed("root.json", "{\"a\":\n1}")
        );
        let port = parse(text.as_bytes(), true);
        assert_eq!(port.garbage, None);
        assert!(port.has("booted") && port.has("done"));
        assert_eq!(port.files["root.json"], b"{\"a\":\n1}");
        assert_eq!(
            port.events_of("probe").collect::<Vec<_>>(),
            ["user=root userns=yes"]
        );
    }

    #[test]
    fn a_frame_still_arriving_is_not_garbage_until_the_guest_stops() {
        let text = "GATEHOUSE booted x\nGATEHOUSE file root.json 100\n{\"partial";
        assert_eq!(parse(text.as_bytes(), false).garbage, None);
        let stopped = parse(text.as_bytes(), true);
        assert!(stopped.garbage.unwrap().contains("cut off"));
        assert!(stopped.files.is_empty());
    }

    #[test]
    fn anything_else_on_the_port_is_garbage() {
        for text in [
            "GATEHOUSE booted x\nKernel panic - not syncing\n",
            "GATEHOUSE file root.json 3\nabcdef\nGATEHOUSE end root.json\n",
            "GATEHOUSE file root.json many\n",
            "\u{0}\u{0}\u{0}",
        ] {
            let port = parse(text.as_bytes(), true);
            assert!(port.garbage.is_some(), "{text:?} passed as a report");
            assert!(port.files.is_empty(), "{text:?} yielded a file");
        }
    }
}

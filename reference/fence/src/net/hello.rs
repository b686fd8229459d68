//! The first bytes of a `CONNECT` tunnel, judged before any of them goes upstream: a TLS
//! ClientHello names the server it wants (`server_name`, SNI), and a CDN routes on that
//! name, so a tunnel opened to an admitted host but carrying another name would reach a
//! host the allow-list never admitted (domain fronting). This module reads the
//! ClientHello's records and finds the name; [`super::proxy`] compares it with the host
//! the `CONNECT` named and refuses the tunnel when they differ (FENCE-NET-11).
//!
//! Bytes that do not start like a TLS record pass as a plain tunnel (HTTP through
//! `CONNECT`, whose request went to the host the allow-list admitted). Bytes that start
//! like a TLS record but are not one whole, well-formed ClientHello are refused: the
//! proxy does not guess. May touch: nothing (pure functions over bytes).

/// The most bytes of records the proxy reads to find a whole ClientHello; a hello is
/// rarely above 2 KiB (post-quantum key shares included).
pub const MAX_HELLO: usize = 64 * 1024;

/// The TLS extension `server_name` (RFC 6066).
const EXT_SERVER_NAME: u16 = 0x0000;
/// The TLS extension `encrypted_client_hello` (RFC 9849): the name the client wants is
/// inside, encrypted, and the one in the clear is only the front's.
const EXT_ECH: u16 = 0xfe0d;

/// What the first bytes of a tunnel are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opening {
    /// More bytes are needed to tell.
    Incomplete,
    /// Not TLS: the first byte is no TLS record type.
    Plain,
    /// A whole ClientHello: the name it asks for (lower case, one trailing dot
    /// removed), if it names one, and whether it carries an encrypted inner hello.
    Hello {
        /// The `server_name`'s host name.
        name: Option<String>,
        /// An `encrypted_client_hello` extension is present.
        encrypted: bool,
    },
    /// TLS records that are not one well-formed ClientHello; the reason.
    Malformed(&'static str),
}

/// Judge the bytes read so far from the client of a tunnel.
pub fn opening(bytes: &[u8]) -> Opening {
    let Some(&first) = bytes.first() else {
        return Opening::Incomplete;
    };
    // TLS record types: change_cipher_spec 20, alert 21, handshake 22, application 23,
    // heartbeat 24. Anything else is not TLS.
    if !(20..=24).contains(&first) {
        return Opening::Plain;
    }
    if first != 22 {
        return Opening::Malformed("a TLS record other than a handshake came first");
    }
    // Gather the handshake payload across records until the ClientHello is whole.
    let mut payload = Vec::new();
    let mut at = 0;
    loop {
        let Some(head) = bytes.get(at..at + 5) else {
            return Opening::Incomplete;
        };
        if head[0] != 22 {
            return Opening::Malformed("the ClientHello is interleaved with another record");
        }
        if head[1] != 3 {
            return Opening::Malformed("not a TLS record version");
        }
        let len = usize::from(u16::from_be_bytes([head[3], head[4]]));
        if len == 0 || len > 16384 + 2048 {
            return Opening::Malformed("a TLS record of impossible length");
        }
        let Some(body) = bytes.get(at + 5..at + 5 + len) else {
            return Opening::Incomplete;
        };
        payload.extend_from_slice(body);
        at += 5 + len;
        if payload.len() >= 4 {
            if payload[0] != 1 {
                return Opening::Malformed("the first handshake message is not a ClientHello");
            }
            let want = 4
                + (usize::from(payload[1]) << 16
                    | usize::from(payload[2]) << 8
                    | usize::from(payload[3]));
            if payload.len() >= want {
                if payload.len() > want {
                    return Opening::Malformed("bytes after the ClientHello in its records");
                }
                return hello(&payload[4..]);
            }
        }
        if at >= MAX_HELLO {
            return Opening::Malformed("a ClientHello longer than the proxy reads");
        }
    }
}

/// A cursor over a ClientHello's body.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (a, b) = (self.bytes.get(..n)?, self.bytes.get(n..)?);
        self.bytes = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<usize> {
        self.take(1).map(|b| usize::from(b[0]))
    }
    fn u16(&mut self) -> Option<usize> {
        self.take(2)
            .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])))
    }
    /// A vector with a length prefix of `width` bytes.
    fn vec(&mut self, width: usize) -> Option<&'a [u8]> {
        let n = if width == 1 { self.u8()? } else { self.u16()? };
        self.take(n)
    }
}

/// The ClientHello's body (past its handshake header).
fn hello(body: &[u8]) -> Opening {
    const BAD: Opening = Opening::Malformed("a ClientHello that does not parse");
    let mut r = Reader { bytes: body };
    let parsed = (|| {
        r.take(2 + 32)?; // legacy_version, random
        r.vec(1)?; // session id
        r.vec(2)?; // cipher suites
        r.vec(1)?; // compression methods
        Some(())
    })();
    if parsed.is_none() {
        return BAD;
    }
    if r.bytes.is_empty() {
        return Opening::Hello {
            name: None,
            encrypted: false,
        };
    }
    let Some(exts) = r.vec(2) else { return BAD };
    if !r.bytes.is_empty() {
        return BAD;
    }
    let mut e = Reader { bytes: exts };
    let (mut name, mut seen_name, mut encrypted) = (None, false, false);
    while !e.bytes.is_empty() {
        let (Some(kind), Some(data)) = (e.u16(), e.vec(2)) else {
            return BAD;
        };
        match u16::try_from(kind).unwrap_or(u16::MAX) {
            EXT_SERVER_NAME => {
                if seen_name {
                    return Opening::Malformed("two server_name extensions");
                }
                seen_name = true;
                match server_name(data) {
                    Ok(n) => name = n,
                    Err(why) => return Opening::Malformed(why),
                }
            }
            EXT_ECH => encrypted = true,
            _ => {}
        }
    }
    Opening::Hello { name, encrypted }
}

/// The host name of a `server_name` extension's data: exactly one `host_name` entry.
fn server_name(data: &[u8]) -> Result<Option<String>, &'static str> {
    const BAD: &str = "a server_name extension that does not parse";
    let mut r = Reader { bytes: data };
    if data.is_empty() {
        // A server's empty extension; a client sending it names nothing.
        return Ok(None);
    }
    let list = r.vec(2).ok_or(BAD)?;
    if !r.bytes.is_empty() {
        return Err(BAD);
    }
    let mut l = Reader { bytes: list };
    let mut found = None;
    while !l.bytes.is_empty() {
        let kind = l.u8().ok_or(BAD)?;
        let name = l.vec(2).ok_or(BAD)?;
        if kind != 0 {
            return Err("a server_name entry of another kind than host_name");
        }
        if found.is_some() {
            return Err("two host names in one server_name");
        }
        let text = std::str::from_utf8(name).map_err(|_| "a server name that is not ASCII")?;
        if text.is_empty() || !text.is_ascii() {
            return Err("a server name that is empty or not ASCII");
        }
        let lower = text.to_ascii_lowercase();
        found = Some(lower.strip_suffix('.').unwrap_or(&lower).to_string());
    }
    Ok(found)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A ClientHello record naming `name` (none when `None`), with more extensions when
    /// asked, split into records of at most `split` payload bytes.
    pub(crate) fn client_hello(
        name: Option<&str>,
        extra: &[(u16, Vec<u8>)],
        split: usize,
    ) -> Vec<u8> {
        let mut exts = Vec::new();
        if let Some(n) = name {
            let mut entry = vec![0u8];
            entry.extend_from_slice(&(n.len() as u16).to_be_bytes());
            entry.extend_from_slice(n.as_bytes());
            let mut data = (entry.len() as u16).to_be_bytes().to_vec();
            data.extend_from_slice(&entry);
            exts.extend_from_slice(&0u16.to_be_bytes());
            exts.extend_from_slice(&(data.len() as u16).to_be_bytes());
            exts.extend_from_slice(&data);
        }
        for (kind, data) in extra {
            exts.extend_from_slice(&kind.to_be_bytes());
            exts.extend_from_slice(&(data.len() as u16).to_be_bytes());
            exts.extend_from_slice(data);
        }
        let mut body = vec![3, 3];
        body.extend_from_slice(&[7u8; 32]);
        body.push(0); // no session id
        body.extend_from_slice(&[0, 2, 0x13, 0x01]); // one suite
        body.extend_from_slice(&[1, 0]); // null compression
        body.extend_from_slice(&(exts.len() as u16).to_be_bytes());
        body.extend_from_slice(&exts);
        let mut hs = vec![1u8];
        hs.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
        hs.extend_from_slice(&body);
        let mut out = Vec::new();
        for chunk in hs.chunks(split) {
            out.extend_from_slice(&[22, 3, 1]);
            out.extend_from_slice(&(chunk.len() as u16).to_be_bytes());
            out.extend_from_slice(chunk);
        }
        out
    }

    fn named(n: &str) -> Opening {
        Opening::Hello {
            name: Some(n.into()),
            encrypted: false,
        }
    }

    #[test]
    fn the_name_of_a_hello_is_found_in_one_record_or_several() {
        assert_eq!(
            opening(&client_hello(Some("Example.ORG."), &[], 4096)),
            named("example.org")
        );
        assert_eq!(
            opening(&client_hello(Some("example.org"), &[], 7)),
            named("example.org")
        );
        assert_eq!(
            opening(&client_hello(None, &[(0x000a, vec![0, 2, 0, 29])], 4096)),
            Opening::Hello {
                name: None,
                encrypted: false
            }
        );
    }

    #[test]
    fn a_hello_read_in_part_is_incomplete_and_plain_bytes_are_plain() {
        let h = client_hello(Some("example.org"), &[], 4096);
        for cut in [0, 1, 4, 5, 20, h.len() - 1] {
            assert_eq!(opening(&h[..cut]), Opening::Incomplete, "cut at {cut}");
        }
        assert_eq!(opening(b"GET / HTTP/1.1\r\n"), Opening::Plain);
        assert_eq!(opening(b"SSH-2.0-x\r\n"), Opening::Plain);
    }

    #[test]
    fn an_encrypted_hello_is_flagged() {
        let h = client_hello(Some("front.example"), &[(EXT_ECH, vec![0; 8])], 4096);
        assert_eq!(
            opening(&h),
            Opening::Hello {
                name: Some("front.example".into()),
                encrypted: true
            }
        );
    }

    #[test]
    fn whatever_cannot_be_read_as_one_hello_is_malformed() {
        let cases: Vec<Vec<u8>> = vec![
            vec![21, 3, 3, 0, 2, 2, 40],                           // an alert first
            vec![22, 3, 3, 0, 4, 2, 0, 0, 0],                      // a ServerHello
            vec![22, 9, 9, 0, 4, 1, 0, 0, 0],                      // not TLS's version
            vec![22, 3, 3, 0, 4, 1, 0, 0, 0],                      // an empty hello
            client_hello(None, &[(0, vec![0, 3, 1, 0, 0])], 4096), // another kind of name
        ];
        for c in cases {
            assert!(matches!(opening(&c), Opening::Malformed(_)), "{c:?}");
        }
        // Records after a whole hello are the tunnel's, not the hello's.
        let mut h = client_hello(Some("a"), &[], 4096);
        h.extend_from_slice(&[23, 3, 3, 0, 1, 0]);
        assert!(matches!(opening(&h), Opening::Hello { .. }));
        let dup = client_hello(Some("a"), &[(0, vec![0, 4, 0, 0, 1, b'b'])], 4096);
        assert!(matches!(
            opening(&dup),
            Opening::Malformed("two server_name extensions")
        ));
        let two_names = client_hello(None, &[(0, vec![0, 8, 0, 0, 1, b'a', 0, 0, 1, b'b'])], 4096);
        assert!(matches!(opening(&two_names), Opening::Malformed(_)));
    }
}

//! The network policy's moving part: a proxy the reference runs outside the jail, the
//! only way out of a jail in the `allow-list` network mode.
//!
//! - [`address`]: which destination addresses are this machine or its link;
//! - [`allow`]: the domain allow-list and the normalized host names it judges;
//! - [`request`]: one proxy request, as hyper parsed it, judged;
//! - [`hello`]: the first bytes of a tunnel, a TLS ClientHello and the name it asks for;
//! - [`proxy`]: the server (hyper's), one thread per connection, every request judged
//!   and every decision journaled;
//! - [`resolver`]: with the network off, the jail's port 53 answered from outside, every
//!   name refused and recorded, for the hint `gatehouse exec` gives after the command.
//!
//! The jail keeps its own network namespace, holding only its loopback interface; the
//! proxy's listening socket is made inside that namespace and handed out, so jailed code
//! reaches it at `127.0.0.1` and nothing else at all: no resolver, no host service, no
//! other address. May touch: sockets; nothing of the file system.

pub mod address;
pub mod allow;
pub mod hello;
pub mod proxy;
pub mod request;
pub mod resolver;

pub use allow::{AllowList, DomainPattern, Host, NameError};
pub use proxy::{Journal, NetEvent, Proxy, Running};
pub use request::Refusal;

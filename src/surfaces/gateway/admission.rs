//! Who may use a connection: the listener decides how a client proves it
//! is the owner (a Unix socket's peer is checked by the kernel; a TCP
//! client presents a token), and the connection asks its [`Admission`]
//! at `hello`, before each op, and for `pair`.

use crate::protocol::wire::{PairRequest, Paired};
use crate::protocol::{Command, Op};

/// Whom a connection was admitted as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Admitted {
    /// The socket's owner (same user, checked at accept).
    Owner,
    /// The gateway token of this machine's config dir.
    GatewayToken,
    /// A paired device, by id.
    Device(String),
}

impl Admitted {
    /// Whether this client may send `op`: serving a session's files
    /// (`file_answer`, `client_files`, `work_in`: `egirl acp`, through
    /// the owner's socket) is never a paired device's, which could answer
    /// an editor's reads with its own text or point them elsewhere; nor
    /// is bringing MCP servers (`session_mcp`), which start programs here.
    pub fn may_send(&self, op: &Op) -> Result<(), String> {
        let serves_files = matches!(
            op,
            Op::FileAnswer { .. }
                | Op::Command {
                    command: Command::ClientFiles { .. }
                        | Command::WorkIn { .. }
                        | Command::SessionMcp { .. },
                    ..
                }
        );
        match self {
            Admitted::Device(_) if serves_files => Err(
                "a paired device does not serve a session's files nor bring its MCP servers".into(),
            ),
            _ => Ok(()),
        }
    }
}

/// A listener's rules for its connections.
pub trait Admission: Send + Sync {
    /// Checks `hello`'s token: whom it admits, or why not (one line that
    /// never repeats the token).
    fn admit(&self, token: Option<&str>) -> Result<Admitted, String>;
    /// Asked before each op a connection sends: false once the device was
    /// revoked (the connection is told and closed).
    fn still_admitted(&self, who: &Admitted) -> bool;
    /// Trades a pairing code for a device token.
    fn pair(&self, request: &PairRequest) -> Result<Paired, String>;
}

/// The Unix socket's rule: the owner, proved twice. The listener checks
/// the peer's uid (the socket is 0600), and `hello` must carry the gateway
/// token: a command the model runs is the same user, and with `network =
/// true` its sandbox lets it connect to the socket, but it reads the
/// token's file as empty (`tools::sandbox`), so it cannot say hello.
pub struct SocketOwner {
    token: String,
}

impl SocketOwner {
    /// Admits clients that present `token` (the gateway token).
    pub fn new(token: String) -> Self {
        SocketOwner { token }
    }
}

impl Admission for SocketOwner {
    fn admit(&self, token: Option<&str>) -> Result<Admitted, String> {
        match token {
            Some(token) if super::auth::secret::same(token, &self.token) => Ok(Admitted::Owner),
            Some(_) => Err("wrong token: this socket takes the gateway token".into()),
            None => Err(
                "this socket takes the gateway token in hello (the file `token` in egirl's gateway config dir)"
                    .into(),
            ),
        }
    }

    fn still_admitted(&self, _who: &Admitted) -> bool {
        true
    }

    fn pair(&self, _request: &PairRequest) -> Result<Paired, String> {
        Err("pairing is for TCP clients; this socket's owner needs no token".into())
    }
}

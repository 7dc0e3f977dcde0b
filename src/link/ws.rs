//! The attached link over a WebSocket (`egirl attach ws://host:port`): the
//! same client as the Unix socket's (`super::client`: resume by `seq`,
//! reconnect with backoff), dialing the gateway's TCP listener at `/ws`,
//! one frame per text message. The token goes in `hello`, never in the
//! URL.

use std::io;
use std::sync::Arc;

use anyhow::{Context, bail};
use futures_util::future::BoxFuture;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use ws_client::tungstenite::Message;
use ws_client::tungstenite::protocol::WebSocketConfig;
use ws_client::{MaybeTlsStream, WebSocketStream};

use super::CoreLink;
use super::client::{self, ConnectOptions, Dialer, MAX_SERVER_FRAME};
use super::frames::{FrameReader, FrameWriter, Framed};
use crate::protocol::wire::{ClientFrame, PairRequest, Paired, ServerFrame, ServerHello};

/// How long the server may take to answer `pair`.
const PAIR_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Attaches to the gateway at `url` (`ws://host:port`, `/ws` implied)
/// with a gateway or device token.
pub async fn connect(
    url: &str,
    token: Option<String>,
    client_name: &str,
) -> anyhow::Result<CoreLink> {
    Ok(attach(url, token, client_name).await?.0)
}

/// As [`connect`], with the server's `hello`.
pub async fn attach(
    url: &str,
    token: Option<String>,
    client_name: &str,
) -> anyhow::Result<(CoreLink, ServerHello)> {
    let endpoint = endpoint(url)?;
    let options = ConnectOptions {
        client: client_name.to_string(),
        token,
        label: Some(url.trim_end_matches('/').to_string()),
    };
    client::attach(dialer(endpoint), options)
        .await
        .with_context(|| format!("attaching to {url}"))
}

/// Trades a pairing code (`egirl pair` on the daemon's machine) for this
/// device's own token; the caller keeps it (0600) for later attaches.
pub async fn pair(url: &str, code: &str, device: &str) -> anyhow::Result<Paired> {
    let dial = dialer(endpoint(url)?);
    let mut framed = dial()
        .await
        .with_context(|| format!("connecting to {url}"))?;
    let request = ClientFrame::Pair(PairRequest {
        code: code.to_string(),
        device: device.to_string(),
    });
    framed
        .writer
        .write_frame(&serde_json::to_string(&request)?)
        .await?;
    framed.writer.flush().await?;
    let answer = tokio::time::timeout(PAIR_TIMEOUT, framed.reader.read_frame())
        .await
        .with_context(|| format!("{url} did not answer the pairing"))??;
    let Some(answer) = answer else {
        bail!("{url} closed the connection without answering the pairing");
    };
    match serde_json::from_str::<ServerFrame>(&answer)
        .with_context(|| format!("{url} answered with something not a frame"))?
    {
        ServerFrame::Paired(paired) => Ok(paired),
        ServerFrame::Error(e) => bail!("pairing refused: {}", e.message),
        _ => bail!("{url} answered the pairing with another frame"),
    }
}

/// `ws://host:port[/ws]` as the URL dialed (`/ws` added when no path is
/// given); `wss://` and a query (where a token does not belong) refused.
pub fn endpoint(url: &str) -> anyhow::Result<String> {
    let parsed = url::Url::parse(url).with_context(|| format!("`{url}` is not a URL"))?;
    match parsed.scheme() {
        "ws" => {}
        "wss" => bail!("wss:// is not supported by this build; use ws:// over a tunnel (ssh -L)"),
        other => bail!("`{url}`: the scheme is {other}://; use ws://host:port"),
    }
    if parsed.host_str().is_none() {
        bail!("`{url}` names no host");
    }
    if parsed.query().is_some() || parsed.fragment().is_some() || !parsed.username().is_empty() {
        bail!("`{url}`: a token goes in --token-file or EGIRL_TOKEN, never in the URL");
    }
    let mut parsed = parsed;
    if parsed.path().is_empty() || parsed.path() == "/" {
        parsed.set_path("/ws");
    }
    Ok(parsed.to_string())
}

/// Dials `url` afresh for each (re)connection.
pub fn dialer(url: String) -> Dialer {
    Arc::new(move || {
        let url = url.clone();
        Box::pin(async move {
            let config = WebSocketConfig::default()
                .max_message_size(Some(MAX_SERVER_FRAME))
                .max_frame_size(Some(MAX_SERVER_FRAME));
            let (socket, _) =
                ws_client::connect_async_with_config(url.as_str(), Some(config), true)
                    .await
                    .map_err(|e| match e {
                        ws_client::tungstenite::Error::Io(e) => e,
                        ws_client::tungstenite::Error::Http(response) => io::Error::new(
                            io::ErrorKind::PermissionDenied,
                            format!("the gateway refused the WebSocket: {}", response.status()),
                        ),
                        other => io::Error::other(other.to_string()),
                    })?;
            Ok(framed(socket))
        })
    })
}

fn framed(socket: Socket) -> Framed {
    let (sink, stream) = socket.split();
    Framed {
        reader: Box::new(WsReader(stream)),
        writer: Box::new(WsWriter(sink)),
    }
}

struct WsReader(SplitStream<Socket>);

impl FrameReader for WsReader {
    fn read_frame(&mut self) -> BoxFuture<'_, io::Result<Option<String>>> {
        Box::pin(async move {
            loop {
                match self.0.next().await {
                    None | Some(Ok(Message::Close(_))) => return Ok(None),
                    Some(Ok(Message::Text(text))) => return Ok(Some(text.as_str().to_owned())),
                    Some(Ok(Message::Binary(_))) => {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            "a frame is a text message, not binary",
                        ));
                    }
                    Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
                    Some(Err(e)) => return Err(io::Error::other(e)),
                }
            }
        })
    }
}

struct WsWriter(SplitSink<Socket, Message>);

impl FrameWriter for WsWriter {
    fn write_frame<'a>(&'a mut self, frame: &'a str) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            self.0
                .feed(Message::Text(frame.into()))
                .await
                .map_err(io::Error::other)
        })
    }

    fn flush(&mut self) -> BoxFuture<'_, io::Result<()>> {
        Box::pin(async move { self.0.flush().await.map_err(io::Error::other) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_get_their_path_and_tokens_stay_out() {
        assert_eq!(
            endpoint("ws://127.0.0.1:7420").unwrap(),
            "ws://127.0.0.1:7420/ws"
        );
        assert_eq!(endpoint("ws://box:7420/ws").unwrap(), "ws://box:7420/ws");
        assert!(endpoint("ws://box:7420/ws?token=x").is_err());
        assert!(endpoint("wss://box:7420").is_err());
        assert!(endpoint("http://box:7420").is_err());
    }
}

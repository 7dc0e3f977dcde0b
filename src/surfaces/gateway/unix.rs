//! The Unix socket listener (`<workspace>/.egirl/egirl.sock`): mode 0600,
//! and every peer's uid checked against ours (`SO_PEERCRED`), so only the
//! user who runs the core reaches it. A socket file left by a process that
//! died is removed, after checking nothing answers on it; ours is removed
//! when the listener stops.

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use tokio::net::UnixListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::Gateway;
use super::admission::SocketOwner;
use crate::link::frames::{self, FrameWriter};
use crate::protocol::wire::{MAX_CLIENT_FRAME, ServerFrame, WireError};

/// A listening socket; [`UnixServer::stop`] (or dropping it) closes the
/// connections and removes the file.
pub struct UnixServer {
    path: PathBuf,
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

/// Listens on `path` for `gateway`'s clients, admitting those whose
/// `hello` carries `token`.
pub fn listen(gateway: Gateway, path: &Path, token: String) -> anyhow::Result<UnixServer> {
    remove_stale(path)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let listener =
        UnixListener::bind(path).with_context(|| format!("listening on {}", path.display()))?;
    // The peer check below refuses other users even in the moment before this.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("making {} private", path.display()))?;
    let stop = CancellationToken::new();
    let owner = Arc::new(SocketOwner::new(token));
    let task = tokio::spawn(accept(listener, gateway, owner, stop.clone()));
    Ok(UnixServer {
        path: path.to_path_buf(),
        stop,
        task: Some(task),
    })
}

impl UnixServer {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Closes the connections and removes the socket file.
    pub async fn stop(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Drop for UnixServer {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            self.stop.cancel();
            task.abort();
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A socket file at `path` that nothing answers on is left from a process
/// that died: removed. One that answers belongs to a live process.
fn remove_stale(path: &Path) -> anyhow::Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if !meta.file_type().is_socket() {
        bail!("{} exists and is not a socket", path.display());
    }
    if std::os::unix::net::UnixStream::connect(path).is_ok() {
        bail!("another egirl process answers on {}", path.display());
    }
    std::fs::remove_file(path).with_context(|| format!("removing {}", path.display()))
}

async fn accept(
    listener: UnixListener,
    gateway: Gateway,
    owner: Arc<SocketOwner>,
    stop: CancellationToken,
) {
    let mut connections = JoinSet::new();
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    loop {
        let stream = tokio::select! {
            () = stop.cancelled() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!("gateway: accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let peer = stream.peer_cred().map(|cred| cred.uid());
        let (read, write) = stream.into_split();
        let mut framed = frames::lines(read, write, MAX_CLIENT_FRAME);
        if peer.as_ref().ok() != Some(&euid) {
            tracing::warn!(?peer, "gateway: refused a connection from another user");
            connections.spawn(async move { refuse_peer(&mut *framed.writer).await });
            continue;
        }
        let gateway = gateway.clone();
        let owner = owner.clone();
        connections.spawn(async move { gateway.serve(framed, owner).await });
    }
    connections.shutdown().await;
}

async fn refuse_peer(writer: &mut dyn FrameWriter) {
    let frame = ServerFrame::Error(WireError {
        message: "this socket belongs to another user".into(),
    });
    if let Ok(line) = serde_json::to_string(&frame) {
        let _ = writer.write_frame(&line).await;
        let _ = writer.flush().await;
    }
}

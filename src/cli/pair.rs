//! `egirl pair [--name NAME]`: a one-time code that pairs a new device with
//! the gateway's TCP listener (valid 5 minutes, once). It runs in its own
//! process: the code's hash goes to the config dir, where the daemon reads
//! it when the device's `pair` frame arrives. The code is the only thing
//! shown; the device's token goes to the device alone.

use std::path::PathBuf;

use crate::config::gateway;
use crate::print;
use crate::surfaces::gateway::auth::PairingCodes;
use crate::surfaces::gateway::auth::secret;

#[derive(Debug, clap::Args)]
pub struct PairArgs {
    /// What `egirl devices list` calls the device (else the name it sends).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
}

pub fn run(args: &PairArgs) -> anyhow::Result<()> {
    let codes = PairingCodes::at(gateway::pairing_path());
    let (code, expires_at) = codes
        .issue(args.name.as_deref())
        .map_err(anyhow::Error::msg)?;
    let until = expires_at.with_timezone(&chrono::Local).format("%H:%M:%S");
    print::out(&format!(
        "pairing code: {code}\nvalid once, until {until}: the new device sends it in a `pair` frame to the gateway (`[gateway] listen`)\n"
    ))?;
    Ok(())
}

/// Where a client keeps the device token pairing gave it (0600 in the
/// config dir), for `egirl attach ws://...` to send.
pub fn device_token_path() -> PathBuf {
    gateway::device_token_path()
}

/// Keeps a device token pairing returned, for later attaches.
pub fn save_device_token(token: &str) -> anyhow::Result<PathBuf> {
    let path = device_token_path();
    secret::write_private(&path, &format!("{token}\n"))
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

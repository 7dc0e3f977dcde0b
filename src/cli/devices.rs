//! `egirl devices list|revoke ID`: the devices paired with the gateway
//! (`egirl pair`). A revoked device's token is refused from its next frame
//! on: the daemon re-reads the devices file when it changes.

use crate::config::gateway;
use crate::print;
use crate::surfaces::gateway::auth::{Device, DeviceStore};

#[derive(Debug, clap::Args)]
pub struct DevicesArgs {
    #[command(subcommand)]
    pub command: DevicesCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum DevicesCommand {
    /// The paired devices: id, name, when paired, when last seen.
    List,
    /// Refuse a device's token from now on.
    Revoke {
        /// The device's id, as `egirl devices list` shows it.
        id: String,
    },
}

pub fn run(args: &DevicesArgs) -> anyhow::Result<()> {
    let store = DeviceStore::at(gateway::devices_path());
    match &args.command {
        DevicesCommand::List => {
            let devices = store.load().map_err(anyhow::Error::msg)?;
            print::out(&render(&devices))?;
        }
        DevicesCommand::Revoke { id } => {
            if !store.revoke(id).map_err(anyhow::Error::msg)? {
                anyhow::bail!("no paired device `{id}` (see `egirl devices list`)");
            }
            print::out(&format!(
                "revoked {id}: its token is refused from its next frame\n"
            ))?;
        }
    }
    Ok(())
}

fn render(devices: &[Device]) -> String {
    if devices.is_empty() {
        return "no paired devices (pair one with `egirl pair`)\n".into();
    }
    let when = |t: chrono::DateTime<chrono::Utc>| {
        t.with_timezone(&chrono::Local)
            .format("%Y-%m-%d %H:%M")
            .to_string()
    };
    let name_width = devices
        .iter()
        .map(|d| d.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(4);
    let mut out = format!(
        "{:<8}  {:<name_width$}  {:<16}  last seen\n",
        "id", "name", "paired"
    );
    for d in devices {
        let seen = d.last_seen.map_or("never".to_string(), when);
        out.push_str(&format!(
            "{:<8}  {:<name_width$}  {:<16}  {seen}\n",
            d.id,
            d.name,
            when(d.paired_at)
        ));
    }
    out
}

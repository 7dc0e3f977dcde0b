//! Eyes: images in conversations and the browser tool.

mod browser;
mod browser_bench;
mod browser_process;
mod browser_site;
mod images;
mod images_channels;
mod images_remote;
mod images_sessions;
mod images_tui;

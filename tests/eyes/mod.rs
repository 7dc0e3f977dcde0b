//! Eyes: images in conversations and the browser tool.

mod browser;
mod browser_bench;
mod browser_process;
mod browser_site;
mod images;

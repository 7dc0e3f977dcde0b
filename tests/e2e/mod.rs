mod memory;
mod server;
mod suite;

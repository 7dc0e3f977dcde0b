mod memory;
mod serve;
mod server;
mod suite;

mod server;
mod suite;

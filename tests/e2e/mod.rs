mod serve;
mod server;
mod suite;

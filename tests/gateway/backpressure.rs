//! A slow client against the real daemon.

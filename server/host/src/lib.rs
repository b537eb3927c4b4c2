//! Portal's turn host: runs core's turn machine with the server's IO. [`turn`] starts, resumes
//! and cancels runs and performs what they ask; [`turn_log`] numbers each turn's events for the
//! streams that read them; [`replicas`] makes servers on one PostgreSQL database one portal;
//! [`lifecycle`] is where a server is in its life, which the turn loop's stop and every event
//! stream read.

pub mod lifecycle;
pub mod replicas;
pub mod turn;
pub mod turn_log;
